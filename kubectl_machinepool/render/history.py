"""rollout history as the user reads it: one row per revision (what made it, what it changed,
when, by which version of the tool), one revision's fields in full, or a JSON/YAML document.
Every value comes from an annotation anyone who may patch the pool can write: text output
escapes it and clips table cells."""

from __future__ import annotations

import json
from typing import Any

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.revisions import START, Change, Revision, Value
from kubectl_machinepool.render.table import clip, table

HEADERS = ("REVISION", "CHANGE-CAUSE", "CHANGES", "RECORDED", "TOOL")
# CHANGES says every field in a few words; --revision N says them in full.
CHANGES_WIDTH = 72


def kubectl_name(name: str) -> str:
    return f"machinepool.cluster.x-k8s.io/{escape(name)}"


def value_text(value: Value | list[Any]) -> str:
    """A field's value in a plan or a revision: objects and lists as compact JSON, never as
    Python writes them."""
    if value is None:
        return "(unset)"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _short(change: Change) -> str:
    if change.path == START:
        return f"restart begun {value_text(change.after)}"
    field = change.path.rsplit(".", 1)[-1]
    where = field if change.on_pool else f"{change.kind} {field}"
    return f"{where} {value_text(change.before)} -> {value_text(change.after)}"


def history_table(name: str, revisions: tuple[Revision, ...], no_headers: bool) -> str:
    if not revisions:
        return f"{kubectl_name(name)}: no revisions recorded\n"
    rows = [
        (
            str(r.number),
            clip(escape(r.cause)),
            clip(escape("; ".join(_short(c) for c in r.changes)), CHANGES_WIDTH),
            escape(r.at),
            clip(escape(r.tool), 16),
        )
        for r in revisions
    ]
    return f"{kubectl_name(name)}\n" + table(HEADERS, rows, no_headers)


def revision_text(name: str, revision: Revision) -> str:
    lines = [
        f"{kubectl_name(name)} with revision #{revision.number}",
        f"Cause:     {escape(revision.cause)}",
        f"Recorded:  {escape(revision.at)} by kubectl-machinepool {escape(revision.tool)}",
        "Changes:",
    ]
    lines += [
        "  " + escape(f"{c.where}: {value_text(c.before)} -> {value_text(c.after)}")
        for c in revision.changes
    ]
    return "\n".join(lines) + "\n"


def _change(change: Change) -> dict[str, Any]:
    return {
        "kind": change.kind,
        "group": change.group,
        "name": change.name,
        "path": change.path,
        "before": change.before,
        "after": change.after,
    }


def history_document(namespace: str, name: str, revisions: tuple[Revision, ...]) -> dict[str, Any]:
    return {
        "machinePool": {"namespace": namespace, "name": name},
        "revisions": [
            {
                "revision": r.number,
                "cause": r.cause,
                "recorded": r.at,
                "tool": r.tool,
                "changes": [_change(c) for c in r.changes],
            }
            for r in revisions
        ],
    }
