"""One module per command; cli.py assembles them."""

from __future__ import annotations
