"""diff as the reviewer reads it: per pool the consequence and the field that decides it, each
changed field with what it does and why, how a roll would go and who applies the pool; and the
-o json|yaml document (docs/diff.md keeps its schema).

Cluster and manifest text is escaped (wrapped() does it); values are shown as compact JSON, cut
at VALUE_SHOWN characters in text.
"""

from __future__ import annotations

import json
from typing import Any

from kubectl_machinepool.model.manifestdiff import dotted
from kubectl_machinepool.model.ownership import Applier
from kubectl_machinepool.plans.consequences import (
    DiffResult,
    FieldChange,
    ObjectChanges,
    PoolConsequence,
)
from kubectl_machinepool.plans.rolling import Roll
from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.providers.rolls import CORE, Effect, Rule, Verdict
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.plans import wrapped

API_VERSION = "kubectl-machinepool/v1alpha1"
KIND = "MachinePoolDiff"
VALUE_SHOWN = 60
# The JSON spelling of each effect.
CODES = {
    Effect.REFUSED: "Refused",
    Effect.ROLLS_ALL: "RollsAll",
    Effect.MANAGED_UPGRADE: "ManagedUpgrade",
    Effect.UNKNOWN: "Unknown",
    Effect.NEW_ONLY: "NewInstancesOnly",
    Effect.SCALES: "Scales",
    Effect.ROLLS_NONE: "RollsNone",
}


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return shown if len(shown) <= VALUE_SHOWN else shown[: VALUE_SHOWN - 3] + "..."


def _effect(effect: Effect, palette: Palette) -> str:
    paint = palette.bad if effect.rolls or effect is Effect.REFUSED else palette.good
    return paint(effect.value)


def _why(verdict: Verdict) -> str:
    return f"{verdict.reason} ({verdict.source})" if verdict.source else verdict.reason


class _Notes:
    """Each distinct verdict of a pool, numbered as it first appears: said once, under why."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []

    def number(self, verdict: Verdict) -> int:
        if verdict not in self.verdicts:
            self.verdicts.append(verdict)
        return self.verdicts.index(verdict) + 1

    def lines(self, palette: Palette, width: int | None) -> list[str]:
        lines = ["  why:"] if self.verdicts else []
        for number, verdict in enumerate(self.verdicts, 1):
            first = f"    [{number}] {_effect(verdict.effect, palette)}: "
            lines += wrapped(_why(verdict), first, " " * 8, width)
            if verdict.surprise:
                lines += wrapped(verdict.surprise, " " * 8 + "known surprise: ", " " * 8, width)
        return lines


def _field_lines(change: FieldChange, notes: _Notes, width: int | None) -> list[str]:
    path = dotted(change.path)
    if change.compared:
        said = f"{path}: {_value(change.before)} -> {_value(change.after)}"
    else:
        said = f"{path}: {_value(change.after)} (not in the export: compared as if it changed)"
    said += f"  [{notes.number(change.verdict)}]"
    return wrapped(said, "    ~ ", "      ", width)


def _object_lines(obj: ObjectChanges, notes: _Notes, width: int | None) -> list[str]:
    head = f"{obj.ref.kind} {obj.ref.name} ({obj.role}; {obj.how})"
    lines = wrapped(head, "  ", "    ", width)
    if obj.refused is not None:
        verdict = Verdict(Effect.REFUSED, obj.refused, "")
        return [*lines, f"    refused  [{notes.number(verdict)}]"]
    if obj.created is not None:
        return [*lines, f"    + created  [{notes.number(obj.created)}]"]
    if not obj.fields and not obj.more:
        return [*lines, "    no change"]
    for change in obj.fields:
        lines += _field_lines(change, notes, width)
    if obj.more:
        lines.append(f"    ... and {obj.more} more changed fields, not listed")
    return lines


def _roll_lines(roll: Roll, width: int | None) -> list[str]:
    strategy = "; ".join(f"{field} {_value(value)}" for field, value in roll.strategy)
    lines = wrapped(
        strategy or roll.strategy_default or "not known", "  strategy: ", " " * 4, width
    )
    instances = "unknown" if roll.instances is None else str(roll.instances)
    lines.append(f"  instances affected: {instances}")
    if roll.blocking_budgets is None:
        said = roll.budgets_note or "not known"
    elif roll.blocking_budgets:
        said = (
            ", ".join(roll.blocking_budgets)
            + " allow no disruption now: the drain of a Node running their pods waits"
        )
    else:
        said = "none allows no disruption now"
    lines += wrapped(said, "  PodDisruptionBudgets: ", " " * 4, width)
    return lines + wrapped(roll.last_rollout, "  last rollout: ", " " * 4, width)


def _owners(found: tuple[Applier, ...]) -> str:
    """Each applier's kind and name, and the signal that shows it."""
    return "; ".join(f"{a.kind}{' ' + a.name if a.name else ''} ({a.evidence})" for a in found)


def _pool_lines(pool: PoolConsequence, palette: Palette, width: int | None) -> list[str]:
    kind = f" ({pool.infra_kind})" if pool.infra_kind else ""
    head = f"MachinePool {pool.namespace}/{pool.name}{kind}: {_effect(pool.effect, palette)}"
    lines = wrapped(head, "", "    ", width)
    if pool.decided_by:
        lines += wrapped(pool.decided_by, "  decided by: ", " " * 4, width)
    notes = _Notes()
    for obj in pool.objects:
        lines += _object_lines(obj, notes, width)
    lines += notes.lines(palette, width)
    if pool.roll is not None:
        lines += _roll_lines(pool.roll, width)
    if owners := _owners(pool.appliers):
        lines += wrapped(owners, "  applied by: ", " " * 4, width)
    return lines


def render_diff(
    result: DiffResult, skipped: tuple[str, ...], palette: Palette, *, width: int | None = None
) -> str:
    blocks = [_pool_lines(pool, palette, width) for pool in result.pools]
    if result.unattached:
        notes = _Notes()
        lines = ["Objects no MachinePool refers to:"]
        for obj in result.unattached:
            lines += _object_lines(obj, notes, width)
        blocks.append(lines + notes.lines(palette, width))
    if skipped:
        said = "not compared (not a MachinePool, infra pool or bootstrap config): "
        blocks.append(wrapped(said + ", ".join(skipped), "", "    ", width))
    if not blocks:
        return "No MachinePool, infra pool or bootstrap config in the manifest.\n"
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


# -- -o json / yaml -------------------------------------------------------------------------------


def _verdict(verdict: Verdict) -> dict[str, Any]:
    return {
        "effect": CODES[verdict.effect],
        "reason": verdict.reason,
        "source": verdict.source,
        "surprise": verdict.surprise,
    }


def _object(obj: ObjectChanges) -> dict[str, Any]:
    return {
        "group": obj.ref.group,
        "kind": obj.ref.kind,
        "namespace": obj.ref.namespace,
        "name": obj.ref.name,
        "role": obj.role,
        "comparedBy": obj.how,
        "refused": obj.refused,
        "created": _verdict(obj.created) if obj.created else None,
        "changes": [
            {
                "path": dotted(c.path),
                "before": c.before,
                "after": c.after,
                "compared": c.compared,
                **_verdict(c.verdict),
            }
            for c in obj.fields
        ],
        "moreChanges": obj.more,
    }


def _roll(roll: Roll | None) -> dict[str, Any] | None:
    if roll is None:
        return None
    return {
        "strategy": dict(roll.strategy),
        "strategyDefault": roll.strategy_default,
        "instances": roll.instances,
        "blockingBudgets": None if roll.blocking_budgets is None else list(roll.blocking_budgets),
        "budgetsNote": roll.budgets_note,
        "lastRollout": roll.last_rollout,
    }


def _pool(pool: PoolConsequence) -> dict[str, Any]:
    return {
        "namespace": pool.namespace,
        "name": pool.name,
        "infrastructureKind": pool.infra_kind,
        "effect": CODES[pool.effect],
        "rolls": pool.effect.rolls,
        "decidedBy": pool.decided_by,
        "reason": pool.reason,
        "source": pool.source,
        "surprise": pool.surprise,
        "objects": [_object(o) for o in pool.objects],
        "roll": _roll(pool.roll),
        "appliers": [
            {"kind": a.kind, "name": a.name, "gitops": a.gitops, "evidence": a.evidence}
            for a in pool.appliers
        ],
    }


def diff_document(result: DiffResult, skipped: tuple[str, ...]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "exitCode": result.exit_code,
        "pools": [_pool(p) for p in result.pools],
        "unattached": [_object(o) for o in result.unattached],
        "skipped": list(skipped),
    }


# -- docs/diff.md's table of facts -----------------------------------------------------------------


def _fact_rows(kind: str, role: str, rules: tuple[Rule, ...]) -> list[str]:
    rows = []
    for rule in rules:
        cases = "; ".join(
            f"{case.effect.value} when {dotted(case.field)} is set"
            + (f" to {json.dumps(case.value)}" if case.value is not None else "")
            for case in rule.when
        )
        effect = rule.effect.value + (f" ({cases})" if cases else "")
        rows.append(f"| {kind} | {role} `{dotted(rule.field)}` | {effect} | {rule.source} |")
    return rows


def facts_table() -> str:
    """Every fact of the registry, kind by kind: docs/diff.md holds it (a test keeps the two
    equal)."""
    lines = ["| Pool kind | Field | Effect | Source |", "|---|---|---|---|"]
    lines += _fact_rows("every kind", "MachinePool", CORE)
    for provider in PROVIDERS:
        rolls = provider.rolls
        lines += _fact_rows(provider.kind, "MachinePool", rolls.pool)
        lines += _fact_rows(provider.kind, "infra pool", rolls.infra)
        if rolls.bootstrap is not None:
            lines += _fact_rows(provider.kind, "bootstrap config", (rolls.bootstrap,))
    return "\n".join(lines) + "\n"
