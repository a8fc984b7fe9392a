"""delete-machine's plan as the user reads it before confirming."""

from __future__ import annotations

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.plans.deletetarget import Level, Mode, Plan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.wrap import line_width, wrap

# Without a width (piped output) the plan wraps here.
WIDTH = 100


def _wrap(text: str, first: str, rest: str, width: int | None) -> list[str]:
    # The indent may hold colour codes: wrap counts only the columns they show.
    lines = wrap(escape(text), line_width(width, WIDTH), first, rest, break_long_words=True)
    return lines or [first.rstrip()]


def _label(level: Level, palette: Palette) -> str:
    word = {Level.OK: "ok", Level.WARNING: "warning", Level.REFUSED: "refused"}[level]
    paint = {Level.OK: palette.good, Level.WARNING: palette.warn, Level.REFUSED: palette.bad}
    return paint[level](word) + " " * (8 - len(word))


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
        lines = [*_wrap(title, "", "    ", width), *_wrap(pool_line, "  ", "    ", width)]
    lines += ["", "Checks:"]
    for check in plan.checks:
        lines += _wrap(check.message, f"  {_label(check.level, palette)} ", " " * 11, width)
    writes = "Writes, in order (each with uid/resourceVersion preconditions):"
    lines += ["", *([writes] if width is None else _wrap(writes, "", "  ", width))]
    if not plan.writes:
        lines.append("  none")
    for number, write in enumerate(plan.writes, 1):
        lines += _wrap(write.summary, f"  {number}. ", "     ", width)
    if plan.writes:  # with nothing to write, what "would follow" describes nothing real
        lines += ["", *_wrap(plan.then, "Then: ", "      ", width)]
    return "\n".join(lines) + "\n"
