"""delete-machine's plan as the user reads it before confirming."""

from __future__ import annotations

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.plans.deletetarget import Mode, Plan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def render_plan(plan: Plan, palette: Palette, *, width: int | None = None) -> str:
    """The plan, wrapped at width columns (a terminal's); when None, as before: the heading
    whole and the rest at WIDTH."""
    target, pool = plan.target, plan.target.pool
    mp = pool.pool
    instance = target.instance
    verb = "Replace" if plan.request.mode is Mode.REPLACE else "Remove, and scale down,"
    where = []
    node = instance.node.name if instance.node else None
    node = node or (instance.machine.node_name if instance.machine else None)
    if node:
        where.append(f"Node {node}")
    if instance.provider_id:
        where.append(instance.provider_id)
    infra = f"{pool.infra.kind}" if pool.infra else "infra pool unread"
    title = f"{verb} {target.name}" + (f" ({', '.join(where)})" if where else "")
    pool_line = f"of MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster}, {infra})"
    if width is None:  # as always: the two heading lines stay whole
        lines = [escape(title), escape(f"  {pool_line}")]
    else:
        lines = [*wrapped(title, "", "    ", width), *wrapped(pool_line, "  ", "    ", width)]
    lines += ["", *check_lines(plan.checks, palette, width)]
    lines += ["", *write_lines(plan.writes, width)]
    if plan.writes:  # with nothing to write, what "would follow" describes nothing real
        lines += ["", *wrapped(plan.then, "Then: ", "      ", width)]
    return "\n".join(lines) + "\n"
