"""scale as a library: read the named pools and plan each; planning.carry_out sends them. No
click, no printing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from kubectl_machinepool.app.planning import nothing_written, read_pools
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.permissions import permissions
from kubectl_machinepool.plans.scale import ScalePlan, ScaleRequest, plan_scale


@dataclass(frozen=True, slots=True)
class Scale:
    """What the user asked for: which pools, in which namespace, to how many replicas."""

    names: tuple[str, ...]
    namespace: str
    request: ScaleRequest
    workload_kubeconfig: str | None = None


def plans_for(
    kube: Kube, asked: Scale, *, warn: Callable[[str], None] | None = None
) -> tuple[ScalePlan, ...]:
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
        return tuple(
            plan_scale(
                pool,
                snapshot,
                asked.request,
                permissions=lambda writes: permissions(kube, writes),
            )
            for pool in pools
        )
