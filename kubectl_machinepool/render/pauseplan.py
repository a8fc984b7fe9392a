"""rollout pause's and resume's plan as the user reads it before confirming: the checks (what a
pause does not stop, what someone else paused), the writes."""

from __future__ import annotations

from kubectl_machinepool.plans.pause import PausePlan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def render_plan(plan: PausePlan, palette: Palette, *, width: int | None = None) -> str:
    mp = plan.pool.pool
    ref = mp.infrastructure_ref
    infra = f" and {ref.kind} {mp.namespace}/{ref.name}" if ref else ""
    verb = "Pause" if plan.pausing else "Resume"
    title = f"{verb} MachinePool {mp.namespace}/{mp.name}{infra} (Cluster {mp.cluster})"
    lines = [*wrapped(title, "", "    ", width), ""]
    lines += [*check_lines(plan.checks, palette, width), ""]
    lines += write_lines(plan.writes, width)
    return "\n".join(lines) + "\n"
