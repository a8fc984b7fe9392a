"""fix's plan as the user reads it before the first step (each step's command line, the findings
it remedies, why, what it writes and its risk; what is held back and why; what is outside this
tool), what became of each step, and both as one -o json|yaml document."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.plans.deletetarget import Plan as DeletePlan
from kubectl_machinepool.plans.fix import PROGRAM, FixPlan, Held, Step
from kubectl_machinepool.plans.pause import PausePlan
from kubectl_machinepool.plans.restart import RestartPlan
from kubectl_machinepool.plans.scale import ScalePlan
from kubectl_machinepool.plans.undo import UndoPlan
from kubectl_machinepool.plans.upgrade import UpgradePlan
from kubectl_machinepool.render import (
    deleteplan,
    pauseplan,
    restartplan,
    scaleplan,
    undoplan,
    upgradeplan,
)
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import wrapped
from kubectl_machinepool.render.structured import SCHEMA_VERSION, finding_doc

_LABEL = 11  # "   writes: " and the lines under it


@record
class Outcome:
    """What became of one step: its state's word, and what the state says more."""

    state: str
    detail: str = ""


def _where(finding: Finding) -> str:
    if finding.pool:
        return f"MachinePool {finding.namespace}/{finding.pool}"
    return f"Cluster {finding.namespace}/{finding.cluster}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _step_lines(number: int, step: Step, palette: Palette, width: int | None) -> list[str]:
    indent = " " * _LABEL
    lines = wrapped(step.line, f"{number}. ", "     ", width)
    codes = ", ".join(dict.fromkeys(f.code for f in step.findings))
    risk = palette.warn(step.risk) if step.disruptive else palette.good(step.risk)
    for label, text in (
        ("fixes", f"{codes} on {_where(step.findings[0])}"),
        ("why", step.why),
        ("writes", step.writes),
    ):
        lines += wrapped(text, f"   {label + ':':<8}", indent, width)
    return [*lines, f"   {'risk:':<8}{risk}"]


def _held_lines(held: Sequence[Held], title: str, width: int | None) -> list[str]:
    lines = [title]
    for entry in held:
        finding = entry.finding
        lines += wrapped(
            f"{finding.code} on {_where(finding)}: {entry.reason}", "  ", "    ", width
        )
        if entry.step is not None:
            lines += wrapped(entry.step.line, "    step: ", "      ", width)
    return lines


def _outside_lines(outside: Sequence[Finding], width: int | None) -> list[str]:
    by: dict[str, list[str]] = {}
    for finding in outside:
        by.setdefault(_where(finding), []).append(finding.code)
    lines = ["Outside this tool (kubectl machinepool explain CODE says what to do):"]
    for where, codes in by.items():
        lines += wrapped(f"{where}: {', '.join(dict.fromkeys(codes))}", "  ", "    ", width)
    return lines


def render_plan(plan: FixPlan, palette: Palette, *, width: int | None = None) -> str:
    """The plan: its steps, numbered as they run, then what is held back, the findings the
    remedy has no step for, and what is outside this tool."""
    findings = sum(len(s.findings) for s in plan.steps)
    head = "Fix: no step"
    if plan.steps:
        head = f"Fix: {_plural(len(plan.steps), 'step')} for {_plural(findings, 'finding')}"
    later = [h for h in plan.held if h.step is not None]
    none = [h for h in plan.held if h.step is None]
    for count, what in (
        (len(later), "held back"),
        (len(none), "with no step"),
        (len(plan.outside), "outside this tool"),
    ):
        head += f"; {count} {what}" if count else ""
    lines = [*wrapped(head, "", "    ", width)]
    for number, step in enumerate(plan.steps, 1):
        lines += ["", *_step_lines(number, step, palette, width)]
    if later:
        title = "Held back (fix plans them once this no longer holds):"
        lines += ["", *_held_lines(later, title, width)]
    if none:
        lines += ["", *_held_lines(none, "No step for these findings:", width)]
    if plan.outside:
        lines += ["", *_outside_lines(plan.outside, width)]
    return "\n".join(lines) + "\n"


# Each command's plan as the command itself draws it.
_OWN: dict[type, Callable[..., str]] = {
    PausePlan: pauseplan.render_plan,
    ScalePlan: scaleplan.render_plan,
    UpgradePlan: upgradeplan.render_plan,
    UndoPlan: undoplan.render_plan,
    RestartPlan: restartplan.render_plan,
    DeletePlan: deleteplan.render_plan,
}


def own_plan(plan: object, palette: Palette, *, width: int | None = None) -> str:
    """A step's own plan, made by its command when the step runs."""
    return _OWN[type(plan)](plan, palette, width=width)


def step_heading(number: int, total: int, step: Step, *, width: int | None = None) -> str:
    """The line before each step's own plan."""
    return "\n".join(wrapped(f"Step {number} of {total}: {step.line}", "", "    ", width)) + "\n"


def render_outcomes(plan: FixPlan, outcomes: Sequence[Outcome], *, width: int | None = None) -> str:
    """What became of each step, in order, after them all (or after the one that failed)."""
    lines = ["Steps:"]
    for number, (step, outcome) in enumerate(zip(plan.steps, outcomes, strict=True), 1):
        said = f"{outcome.state}" + (f" ({outcome.detail})" if outcome.detail else "")
        lines += wrapped(f"{said}: {step.line}", f"  {number}. ", "     ", width)
    return "\n".join(lines) + "\n"


def _step_doc(number: int, step: Step, outcome: Outcome | None) -> dict[str, Any]:
    return {
        "step": number,
        "command": [*PROGRAM.split(), *step.argv],
        "commandLine": step.line,
        "namespace": step.namespace,
        "machinePool": step.pool,
        "findings": [finding_doc(f) for f in step.findings],
        "why": step.why,
        "writes": step.writes,
        "disruptive": step.disruptive,
        "rolls": step.rolls,
        "result": None
        if outcome is None
        else {"state": outcome.state, "message": outcome.detail or None},
    }


def plan_document(
    plan: FixPlan, *, now: str, source: str, outcomes: Sequence[Outcome] = ()
) -> dict[str, Any]:
    """-o json|yaml: the plan, and each step's result once the steps ran (null before)."""
    results: Sequence[Outcome | None] = outcomes or [None] * len(plan.steps)
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolFixPlan",
        "now": now,
        "source": source,
        "steps": [
            _step_doc(n, s, o) for n, (s, o) in enumerate(zip(plan.steps, results, strict=True), 1)
        ],
        "heldBack": [
            {
                **finding_doc(h.finding),
                "reason": h.reason,
                "commandLine": h.step.line if h.step else None,
            }
            for h in plan.held
        ],
        "outside": [finding_doc(f) for f in plan.outside],
    }
