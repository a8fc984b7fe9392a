"""describe's MachineHealthChecks of a pool, one sentence each in its summary (the JSON is in
structured.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.diagnostics.core import names
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.healthchecks import (
    HealthCheck,
    Marked,
    PoolHealthCheck,
    UnhealthyCondition,
)

# Machines (and conditions) named in a sentence; the rest are counted.
NAMED = 3


def _seconds(value: float) -> str:
    return human_duration(timedelta(seconds=value))


def _conditions(what: str, conditions: Sequence[UnhealthyCondition]) -> str | None:
    if not conditions:
        return None
    parts = [
        f"{c.type}={c.status}" + (f" {_seconds(c.timeout_seconds)}" if c.timeout_seconds else "")
        for c in conditions
    ]
    return f"{what} {names(parts, NAMED)}"


def _checks(check: HealthCheck) -> str:
    parts = [
        _conditions("Node", check.node_conditions),
        _conditions("Machine", check.machine_conditions),
        f"no Node after {_seconds(check.node_startup_seconds)}"
        if check.node_startup_seconds
        else "no Node startup timeout",
    ]
    return "checks " + ", ".join(p for p in parts if p)


def _remediation(check: HealthCheck) -> str:
    if check.template is not None:
        by = f"external remediation ({check.template.kind} {check.template.name})"
    else:
        by = "remediation left to the Machine's owner (the MachinePool)"
    if check.unhealthy_range:
        by += f" while {check.unhealthy_range} unhealthy"
    elif check.max_unhealthy:
        by += f" while at most {check.max_unhealthy} unhealthy"
    allowed = check.remediation_allowed
    if allowed is not None and allowed.status == "False":
        by += f"; held back now ({allowed.reason or 'RemediationAllowed False'})"
    return by


def _marked(marked: Sequence[Marked], now: datetime) -> str:
    phrases = []
    for m in marked:
        since = f" for {human_duration(now - m.since)}" if m.since else ""
        if m.unhealthy:
            reason = f" ({m.health.reason})" if m.health and m.health.reason else ""
            waiting = ", waiting for remediation" if m.waiting else ""
            phrases.append(f"{m.machine} unhealthy{since}{reason}{waiting}")
        else:
            phrases.append(f"{m.machine} waiting for remediation{since}")
    return names(phrases, NAMED)


def check_sentence(pool: PoolDescription, found: PoolHealthCheck, now: datetime) -> str:
    """What one MachineHealthCheck does to the pool, in one sentence."""
    check = found.check
    lead = f"MachineHealthCheck {check.name}"
    if not pool.uses_machines:
        return (
            f"{lead} selects the template's labels, but checks Machines only: this pool has no "
            "MachinePool Machines, so its Nodes are not checked"
        )
    total = pool.counts.machines or 0
    selected = f"{len(found.machines)} of {total} Machine{'s' if total != 1 else ''}"
    parts = [f"{lead}: {selected}"]
    if found.marked:
        parts.append(_marked(found.marked, now))
    return "; ".join([*parts, _checks(check), _remediation(check)])
