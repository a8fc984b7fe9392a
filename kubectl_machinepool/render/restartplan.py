"""rollout restart's plan as the user reads it before confirming: the restart begun or going on,
the checks, the instances it replaces in order, and the writes that record it."""

from __future__ import annotations

from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.plans.restart import RestartPlan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def render_plan(plan: RestartPlan, palette: Palette, *, width: int | None = None) -> str:
    mp = plan.pool.pool
    title = f"Restart MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster})"
    started = format_time(plan.started)
    # A refused plan goes on with nothing: its header says what it found, not what it will do.
    if plan.resumed:
        verb = "would go on" if plan.refusals else "going on"
        when = f"{verb} with the restart begun at {started}"
    else:
        when = "would begin now" if plan.refusals else "beginning now"
    lines = [*wrapped(title, "", "    ", width), *wrapped(f"  {when}", "", "    ", width), ""]
    lines += [*check_lines(plan.checks, palette, width), ""]
    if not plan.refusals:
        lines.append(
            "Instances to replace (delete-machine's replace path, the next once the "
            "replacement's Node is Ready):"
        )
        lines += [f"  {n}. machine {name}" for n, name in enumerate(plan.old, 1)] or ["  none"]
        lines.append("")
    lines += write_lines(plan.writes, width)
    return "\n".join(lines) + "\n"
