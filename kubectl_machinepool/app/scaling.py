"""scale as a library: read the named pools and plan each; planning.carry_out sends them. No
click, no printing."""

from __future__ import annotations

from collections.abc import Callable

from kubectl_machinepool.app.planning import Ground, plan_each
from kubectl_machinepool.base.records import record
from kubectl_machinepool.plans.scale import ScalePlan, ScaleRequest, plan_scale


@record
class Scale:
    """What the user asked for: which pools, in which namespace, to how many replicas."""

    names: tuple[str, ...]
    namespace: str | None  # None: a dump's, wherever the pools are
    request: ScaleRequest
    workload_kubeconfig: str | None = None
    ignore_owner: bool = False


def plans_for(
    ground: Ground, asked: Scale, *, warn: Callable[[str], None] | None = None
) -> tuple[ScalePlan, ...]:
    """Read the pools and plan each; a failure says that nothing was written."""
    return plan_each(
        ground,
        asked,
        lambda pool, snapshot, allowed: plan_scale(
            pool, snapshot, asked.request, ground.now, permissions=allowed
        ),
        warn=warn,
    )
