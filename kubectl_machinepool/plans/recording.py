"""What every whole-pool write (upgrade, scale, rollout restart, rollout undo) adds to its writes:
its revision, recorded on the MachinePool (model/revisions.py) so that it can be undone.

The record rides in the same request as the write's own change of the MachinePool: upgrade's
version, restart's start, undo's version or fields. Where the plan writes no field of the
MachinePool's own, the record is a patch of its own, placed before the first write that cannot
be taken back (scale's /scale write, whose Scale body carries no annotation; upgrade's unpause
of an infra pool whose image alone changes): a write that fails after it takes the record back
with everything else the batch wrote (kube/writing.py), and one it makes fail was made on
nothing. So the record and the change stand or fall together; only a write whose outcome stays
unknown (exit 5) leaves both to be checked, and the message names both.

A pool whose history is not the tool's is refused: the next number cannot be told. Pure.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from kubectl_machinepool import __version__
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    MACHINE_POOL,
    MAX_CAUSE,
    Change,
    History,
    Revision,
    Value,
    read_history,
    recorded,
    revision_problem,
)
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.writes import Write, object_ref


def pool_change(pool_raw: RawObject, path: str, before: Value, after: Value) -> Change:
    """A field of the MachinePool itself, as a revision names it."""
    name = text(dig(pool_raw, "metadata", "name")) or ""
    return Change(MACHINE_POOL, CAPI_GROUP, name, path, before, after)


def _cause(cause: str) -> str:
    return cause if len(cause) <= MAX_CAUSE else cause[: MAX_CAUSE - 1] + "…"


def record_revision(
    writes: tuple[Write, ...],
    pool_raw: RawObject,
    *,
    cause: str,
    at: datetime,
    changes: tuple[Change, ...],
) -> tuple[tuple[Write, ...], tuple[Check, ...]]:
    """The writes with the revision recorded among them, and what the plan must say about it
    (refused: the history is not the tool's, or the revision cannot be recorded)."""
    if not writes or not changes:
        return writes, ()
    history = read_history(pool_raw)
    ref = object_ref(pool_raw, "machinepools")
    if history.unusable:
        return writes, (
            Check(
                Level.REFUSED,
                f"MachinePool {ref.namespace}/{ref.name}'s {ANNOTATION} annotation is no "
                f"revision history this tool wrote ({history.unusable}): a revision cannot be "
                f"numbered after it; remove it to begin afresh (kubectl annotate machinepool "
                f"{ref.name} -n {ref.namespace} {ANNOTATION}-)",
            ),
        )
    revision = Revision(
        history.next_number, _cause(cause), format_time(at) or "", __version__, changes
    )
    value = recorded(history, revision) if revision_problem(revision) is None else None
    if value is None:
        return writes, (
            Check(
                Level.REFUSED,
                f"the revision cannot be recorded on MachinePool {ref.namespace}/{ref.name}: "
                f"{revision_problem(revision)}",
            ),
        )
    return _with_record(writes, pool_raw, history, revision.number, value), ()


def _with_record(
    writes: tuple[Write, ...], pool_raw: RawObject, history: History, number: int, value: str
) -> tuple[Write, ...]:
    return on_pool(
        writes,
        pool_raw,
        {"metadata": {"annotations": {ANNOTATION: value}}},
        {"metadata": {"annotations": {ANNOTATION: history.value}}},
        summary=f"record revision {number} ({ANNOTATION})",
        undo_summary=f"set {ANNOTATION} back",
        done="annotated",
    )


def on_pool(
    writes: tuple[Write, ...],
    pool_raw: RawObject,
    body: dict[str, Any],
    undo: dict[str, Any],
    *,
    summary: str,
    undo_summary: str,
    done: str,
) -> tuple[Write, ...]:
    """The writes with a merge patch of the MachinePool added: to the batch's own patch of it,
    else as a write of its own before the first write that cannot be taken back."""
    ref = object_ref(pool_raw, "machinepools")
    for at, write in enumerate(writes):
        if write.target.key == ref.key and write.verb == "patch" and not write.subresource:
            merged = dataclasses.replace(
                write,
                summary=f"{write.summary}, and {summary}",
                body=_merged(write.body or {}, body),
                undo=None if write.undo is None else _merged(write.undo, undo),
                undo_summary=f"{write.undo_summary}, and {undo_summary}",
            )
            return (*writes[:at], merged, *writes[at + 1 :])
    alone = Write(
        "patch",
        ref,
        f"{summary} on {ref.display}",
        body,
        undo=undo,
        undo_summary=undo_summary,
        done=done,
    )
    first_kept = next((i for i, w in enumerate(writes) if w.undo is None), len(writes))
    return (*writes[:first_kept], alone, *writes[first_kept:])


def _merged(body: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Two merge patches as one: extra's fields added to body's, mappings merged."""
    merged = dict(body)
    for key, value in extra.items():
        held = merged.get(key)
        if isinstance(held, dict) and isinstance(value, dict):
            merged[key] = _merged(held, value)
        else:
            merged[key] = value
    return merged
