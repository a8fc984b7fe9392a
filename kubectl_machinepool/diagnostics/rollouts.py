"""Rollouts judged: each pool's rollout with the findings that say why one is stuck, as
rollout status reports them (built by app/rolloutstatus.py, shown by render/rollout.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
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
    # By (namespace, pool): the Nodes no pool lists that most likely are that pool's (a new
    # instance Cluster API does not count holds a rollout as much as an old one).
    strays: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    def about(self, rollout: PoolRollout) -> tuple[Finding, ...]:
        """The findings of this pool, and those of its Cluster about Nodes most likely its."""
        key = (rollout.namespace, rollout.name)
        strays = set(self.strays.get(key, ()))
        return tuple(
            f
            for f in self.findings
            if (f.namespace, f.pool) == key
            or (
                (f.namespace, f.cluster, f.pool) == (rollout.namespace, rollout.cluster, "")
                and not strays.isdisjoint(f.instances)
            )
        )

    @property
    def done(self) -> bool:
        return all(r.done for r in self.rollouts)

    @property
    def stuck(self) -> tuple[PoolRollout, ...]:
        return tuple(r for r in self.rollouts if r.stuck)
