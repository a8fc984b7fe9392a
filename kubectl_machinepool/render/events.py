"""A pool's Events as `kubectl events` shows them: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.events import EventRecord
from kubectl_machinepool.render.wrap import wrap

# describe lists the most recent ones; `events` lists them all.
RECENT = 15
HEADER = ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")


def _seen(record: EventRecord, now: datetime) -> str:
    if record.last is None:
        return "<unknown>"
    ago = human_duration(now - record.last)
    return ago if record.count == 1 else f"{ago} (x{record.count})"


def event_row(record: EventRecord, now: datetime) -> tuple[str, ...]:
    return (
        _seen(record, now),
        escape(record.type),
        escape(record.reason),
        f"{escape(record.kind)}/{escape(record.name)}",
        escape(" ".join(record.message.split())),
    )


def events_table(
    records: Sequence[EventRecord], now: datetime, *, headers: bool = True, width: int | None = None
) -> list[str]:
    """Aligned rows; the message column runs to the end of the line, or, given a terminal's
    width, wraps within what the other columns leave."""
    rows = [event_row(r, now) for r in records]
    if headers:
        rows.insert(0, HEADER)
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for row in rows:
        lead = "   ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "   "
        if width is None:
            lines.append(lead + row[4])
        else:
            lines += wrap(row[4], width, lead, " " * len(lead)) or [lead.rstrip()]
    return lines


def pool_events(
    title: str, records: Sequence[EventRecord], now: datetime, width: int | None = None
) -> str:
    """describe's section under a pool's tree: its most recent Events."""
    if not records:
        return ""
    shown = records[-RECENT:]
    more = f", the last {len(shown)} of {len(records)}" if len(shown) < len(records) else ""
    heading = f"Events of {title}{more} (kubectl machinepool events NAME lists all):"
    head = [heading] if width is None else wrap(heading, width, "", "  ")
    rows = events_table(shown, now, width=None if width is None else width - 2)
    return "\n".join([*head, *("  " + row for row in rows)]) + "\n"


def event_evidence(record: EventRecord) -> str:
    """One Event as a finding's evidence (escaped when the line is wrapped and shown)."""
    seen = format_time(record.last) if record.last else "<unknown>"
    times = f", {record.count} times" if record.count > 1 else ""
    message = " ".join(record.message.split())
    return (
        f"{record.type} {record.reason} on {record.kind}/{record.name} (last {seen}{times}): "
        f"{message}"
    )


def event_doc(record: EventRecord) -> dict[str, Any]:
    return {
        "kind": record.kind,
        "namespace": record.namespace or None,
        "name": record.name,
        "type": record.type,
        "reason": record.reason,
        "message": record.message,
        "count": record.count,
        "firstSeen": format_time(record.first) if record.first else None,
        "lastSeen": format_time(record.last) if record.last else None,
        "source": record.source or None,
    }
