"""rollout pause and resume as a library: read the named pools and plan each; planning.carry_out
sends them. No click, no printing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from kubectl_machinepool.app.planning import infra_plural, nothing_written, read_pools
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.permissions import permissions
from kubectl_machinepool.plans.pause import PausePlan, plan_pause, plan_resume
from kubectl_machinepool.plans.writes import Access, Write
from kubectl_machinepool.providers.registry import infra_pool_of


@dataclass(frozen=True, slots=True)
class Pause:
    """Which pools, in which namespace; pausing, or resuming."""

    names: tuple[str, ...]
    namespace: str
    pausing: bool
    workload_kubeconfig: str | None = None


def plans_for(
    kube: Kube, asked: Pause, *, warn: Callable[[str], None] | None = None
) -> tuple[PausePlan, ...]:
    """Read the pools and plan each; a failure says that nothing was written."""
    now = datetime.now(UTC).replace(microsecond=0)
    with nothing_written():
        snapshot, pools = read_pools(
            kube,
            asked.namespace,
            asked.names,
            now,
            workload_kubeconfig=asked.workload_kubeconfig,
            warn=warn,
        )
        plans = []
        for pool in pools:
            plural = infra_plural(kube, pool)

            def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
                return permissions(kube, writes)

            if asked.pausing:
                provider = infra_pool_of(pool.infra)
                caveat = provider.operations.pause_caveat if provider else None
                plans.append(
                    plan_pause(pool, snapshot, plural=plural, caveat=caveat, permissions=allowed)
                )
            else:
                plans.append(plan_resume(pool, snapshot, plural=plural, permissions=allowed))
        return tuple(plans)
