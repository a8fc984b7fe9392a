"""Rollouts judged: each pool's rollout with the findings that say why one is stuck, as
rollout status reports them (built by app/rolloutstatus.py, shown by render/rollout.py)."""

from __future__ import annotations

from datetime import datetime

from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.model.rollout import PoolRollout


@record
class Report:
    rollouts: tuple[PoolRollout, ...]
    # The findings about these pools: why a stuck one is stuck.
    findings: tuple[Finding, ...]
    now: datetime
    # What could not be read, one warning each (the Nodes' included).
    notes: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        return all(r.done for r in self.rollouts)

    @property
    def stuck(self) -> tuple[PoolRollout, ...]:
        return tuple(r for r in self.rollouts if r.stuck)
