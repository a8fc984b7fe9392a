"""The revision record under faults (issue 43): a run leaves a new revision on a MachinePool
exactly when it leaves the change that revision records, or else says so (exit 5, or the report
of a signal, naming the MachinePool). Judged from the objects before and after a fault-matrix
run, with the tool's own reader of the record."""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.model.revisions import Change, Revision, read_history
from kubectl_machinepool.plans.fieldpaths import values_at

from .faultjudge import CAPI, now
from .faultmatrix import Outcome
from .faultstate import ObjectKey


def _value(outcome: Outcome, change: Change) -> Any:
    found = values_at(
        now(outcome, ObjectKey(change.kind, change.group, outcome.namespace, change.name)),
        change.path,
    )
    return found[0] if found else None


def _moved(outcome: Outcome, key: ObjectKey, path: str) -> bool:
    return values_at(outcome.before.get(key), path) != values_at(now(outcome, key), path)


def revision_problems(
    outcome: Outcome, pools: tuple[str, ...], fields: dict[tuple[str, str], list[str]]
) -> list[str]:
    """For each pool: a revision added with its change held, or neither (fields: the dotted
    paths the command changes, by the kind and group of their object)."""
    found = []
    for pool in pools:
        key = ObjectKey("MachinePool", CAPI, outcome.namespace, pool)
        old = read_history(outcome.before.get(key)).last
        history = read_history(now(outcome, key))
        added: list[Revision] = [
            r for r in history.revisions if old is None or r.number > old.number
        ]
        if history.unusable:
            found.append(f"MachinePool {pool} holds no usable history: {history.unusable}")
            continue
        moved = [
            f"{kind} {path}"
            for (kind, group), paths in fields.items()
            for path in paths
            if _moved(outcome, ObjectKey(kind, group, outcome.namespace, pool), path)
        ]
        unheld = [c.where for r in added[-1:] for c in r.changes if _value(outcome, c) != c.after]
        wrong = []
        if len(added) > 1:
            wrong.append(f"{len(added)} revisions added to MachinePool {pool}")
        if added and unheld:
            wrong.append(f"revision {added[-1].number} of {pool} recorded, not held: {unheld}")
        if moved and not added:
            wrong.append(f"{pool} changed ({', '.join(moved)}) without a revision")
        named = (
            outcome.code in (5, 130) and f"MachinePool {outcome.namespace}/{pool}" in outcome.err
        )
        if wrong and not named:
            found += wrong
    return found
