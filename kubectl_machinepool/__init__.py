"""kubectl machinepool: the truth about Cluster API MachinePools, and safe actions on them."""

from __future__ import annotations

__version__ = "0.1.0"
