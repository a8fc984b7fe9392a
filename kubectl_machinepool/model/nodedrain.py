"""A Machine's node drain timeout, read one way for every command and rule.

Cluster API gives up draining after spec.deletion.nodeDrainTimeoutSeconds (v1beta2) or
spec.nodeDrainTimeout (v1beta1, a duration); unset, zero or less means the drain never gives
up (the machine controller's nodeDrainTimeoutExceeded: `<= 0` is "not set by user").
"""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.fields import RawObject, dig


def v1beta1_machine(machine: RawObject) -> bool:
    return str(machine.get("apiVersion", "")).endswith("/v1beta1")


def stored_drain_timeout(machine: RawObject) -> Any:
    """The Machine's node drain timeout as stored: seconds (v1beta2) or a duration (v1beta1)."""
    if v1beta1_machine(machine):
        return dig(machine, "spec", "nodeDrainTimeout")
    return dig(machine, "spec", "deletion", "nodeDrainTimeoutSeconds")


def drain_bound(machine: RawObject | None) -> float | None:
    """Seconds after which the drain of this Machine's Node gives up; None: it never does."""
    if not machine:
        return None
    stored = stored_drain_timeout(machine)
    if isinstance(stored, str):
        try:
            # parse_duration already maps 0 to None; a negative duration does not parse.
            return parse_duration(stored, "spec.nodeDrainTimeout")
        except UsageError:
            return None
    if isinstance(stored, bool) or not isinstance(stored, int | float):
        return None
    return float(stored) if stored > 0 else None
