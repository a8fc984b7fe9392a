"""What a watch reported between two views of a followed command, in one line."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.changes import LISTED, Change

# Changes named one by one in the line; the rest are counted.
NAMED = 3


def summary(changes: Sequence[Change]) -> str:
    """e.g. "modified Machine pool-1, added Node pool-2 and 4 more"; "read again" when nothing
    was reported (a deadline came, or a read is retried)."""
    distinct = list(dict.fromkeys(changes))
    if not distinct:
        return "read again"
    named = [
        f"{c.kind} list read again"
        if c.event == LISTED
        else f"{c.event.lower()} {c.kind} {escape(c.name)}"
        for c in distinct[:NAMED]
    ]
    more = len(distinct) - NAMED
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")
