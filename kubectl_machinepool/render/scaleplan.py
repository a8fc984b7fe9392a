"""scale's plan as the user reads it before confirming: the size from what to what, the checks
(who else owns the size, who picks the instances that go, the zones), the write."""

from __future__ import annotations

from kubectl_machinepool.plans.scale import ScalePlan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def render_plan(plan: ScalePlan, palette: Palette, *, width: int | None = None) -> str:
    mp = plan.pool.pool
    ref = mp.infrastructure_ref
    infra = ref.kind if ref else "no infra pool"
    title = (
        f"Scale MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster}, {infra}) "
        f"from {mp.desired if mp.desired is not None else '(unset)'} to {plan.replicas} replicas"
    )
    lines = [*wrapped(title, "", "    ", width), ""]
    lines += [*check_lines(plan.checks, palette, width), ""]
    lines += write_lines(plan.writes, width)
    return "\n".join(lines) + "\n"
