"""How long a state may last before a time-based rule calls it a problem (--*-threshold)."""

from __future__ import annotations

from datetime import timedelta

from kubectl_machinepool.base.records import record


@record
class Thresholds:
    """How long a state may last before a time-based rule calls it a problem."""

    scaling: timedelta = timedelta(minutes=2)
    taint: timedelta = timedelta(minutes=5)
    deleting: timedelta = timedelta(minutes=15)
    drain: timedelta = timedelta(minutes=15)
    # How long a rollout may go without moving before it is stuck (rollout status --stuck-after).
    rollout: timedelta = timedelta(minutes=10)
