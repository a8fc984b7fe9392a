"""upgrade's plan as the user reads it before confirming: what changes from what to what, the
checks, the writes in order."""

from __future__ import annotations

from kubectl_machinepool.plans.upgrade import UpgradePlan
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.history import value_text
from kubectl_machinepool.render.plans import check_lines, wrapped, write_lines


def render_plan(plan: UpgradePlan, palette: Palette, *, width: int | None = None) -> str:
    mp = plan.pool.pool
    ref = mp.infrastructure_ref
    infra = ref.kind if ref else "no infra pool"
    title = (
        f"Upgrade MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster}, {infra}) "
        f"from {value_text(mp.version)} to {plan.target}"
    )
    lines = [*wrapped(title, "", "    ", width), "", "Changes:"]
    version = f"MachinePool {mp.namespace}/{mp.name} spec.template.spec.version"
    lines += wrapped(f"{version}: {value_text(mp.version)} -> {plan.target}", "  ", "      ", width)
    for change in plan.fields.changes:
        text = (
            f"{change.obj} {change.path}: {value_text(change.current)} -> {value_text(change.new)} "
            f"({change.how})"
        )
        lines += wrapped(text, "  ", "      ", width)
    for note in plan.fields.follows:
        lines += wrapped(f"follows the MachinePool: {note}", "  ", "      ", width)
    for refusal in plan.fields.refusals:
        lines += wrapped(refusal, f"  {palette.bad('refused')} ", " " * 11, width)
    lines += ["", *check_lines(plan.checks, palette, width)]
    lines += ["", *write_lines(plan.writes, width)]
    if plan.writes:
        then = (
            "the provider reconciles once, against the new version and fields together, and "
            "rolls the pool; the rollout is followed as rollout status follows it (--no-wait "
            "stops after the writes)"
        )
        lines += ["", *wrapped(then, "Then: ", "      ", width)]
    return "\n".join(lines) + "\n"
