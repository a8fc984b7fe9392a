"""rollout pause and resume as a library: read the named pools and plan each; planning.carry_out
sends them. No click, no printing."""

from __future__ import annotations

from collections.abc import Callable

from kubectl_machinepool.app.planning import Ground, Permissions, infra_plural, plan_each
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.pause import PausePlan, plan_pause, plan_resume
from kubectl_machinepool.providers.registry import infra_pool_of


@record
class Pause:
    """Which pools, in which namespace; pausing, or resuming."""

    names: tuple[str, ...]
    namespace: str | None  # None: a dump's, wherever the pools are
    pausing: bool
    workload_kubeconfig: str | None = None
    ignore_owner: bool = False


def plans_for(
    ground: Ground, asked: Pause, *, warn: Callable[[str], None] | None = None
) -> tuple[PausePlan, ...]:
    """Read the pools and plan each; a failure says that nothing was written."""

    def plan(pool: PoolDescription, snapshot: Snapshot, allowed: Permissions) -> PausePlan:
        plural = infra_plural(ground, pool)
        if not asked.pausing:
            return plan_resume(pool, snapshot, plural=plural, permissions=allowed)
        provider = infra_pool_of(pool.infra)
        caveat = provider.operations.pause_caveat if provider else None
        return plan_pause(pool, snapshot, plural=plural, caveat=caveat, permissions=allowed)

    return plan_each(ground, asked, plan, warn=warn)
