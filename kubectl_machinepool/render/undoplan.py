"""rollout undo's plan as the user reads it before confirming: the revision gone back to, the
revisions undone, each field from what to what, what a restart leaves as it is, the checks and
the writes. Every value comes from the pool's annotation or objects: escaped as it is wrapped."""

from __future__ import annotations

from kubectl_machinepool.plans.undo import UndoPlan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.history import value_text
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def _to(plan: UndoPlan) -> str:
    if plan.to is not None:
        return f"back to revision {plan.to}"
    if plan.undone:
        return f"back to before revision {plan.undone[0].number}"
    return "back"


def render_plan(plan: UndoPlan, palette: Palette, *, width: int | None = None) -> str:
    mp = plan.pool.pool
    ref = mp.infrastructure_ref
    infra = ref.kind if ref else "no infra pool"
    title = f"Undo MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster}, {infra}) {_to(plan)}"
    lines = [*wrapped(title, "", "    ", width), ""]
    if plan.undone:
        lines.append("Revisions undone:")
        for revision in plan.undone:
            said = f"{revision.number}  {revision.cause}  ({revision.at})"
            lines += wrapped(said, "  ", "      ", width)
        lines.append("")
    lines.append("Changes:")
    for put in plan.fields:
        c = put.change
        where = f"{c.kind} {mp.namespace}/{c.name} {c.path}"
        lines += wrapped(
            f"{where}: {value_text(c.before)} -> {value_text(c.after)}", "  ", "      ", width
        )
    for restart in plan.restarts:
        said = (
            f"revision {restart.number} ({restart.cause}) replaced instances, which cannot be "
            "brought back: nothing of it is put back"
        )
        lines += wrapped(said, "  ", "      ", width)
    if not plan.fields and not plan.restarts:
        lines.append("  none")
    lines += ["", *check_lines(plan.checks, palette, width)]
    lines += ["", *write_lines(plan.writes, width)]
    if plan.writes:
        then = (
            "the provider reconciles once, against the fields put back together; the rollout is "
            "followed as rollout status follows it (--no-wait stops after the writes)"
        )
        lines += ["", *wrapped(then, "Then: ", "      ", width)]
    return "\n".join(lines) + "\n"
