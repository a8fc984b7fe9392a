"""Events about a pool's objects, from both clusters, on one timeline with repeats folded.

An Event comes as core/v1 (involvedObject, count, first/lastTimestamp) or events.k8s.io/v1
(regarding, series, deprecated* fields); both are read into one EventRecord. Repeats (the same
object, type, reason and message) fold into one row with their counts added, first and last
seen kept, as `kubectl events` shows them. Everything in an Event is written by controllers and
kubelets we do not control: each field is type-checked, and text is escaped only when shown.
Pure: raw objects in, records out.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from kubectl_machinepool.base.fields import RawObject, dig, integer, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time

CORE = "v1"
EVENTS_API = "events.k8s.io/v1"
# A message longer than this is cut when read: a timeline row is one line of evidence.
MAX_MESSAGE = 1000


@record
class EventRecord:
    kind: str  # of the object the event is about
    namespace: str
    name: str
    type: str  # Normal, Warning (or whatever the reporter wrote)
    reason: str
    message: str
    count: int
    first: datetime | None
    last: datetime | None
    source: str  # the reporting component

    @property
    def about(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def is_event(obj: RawObject) -> bool:
    return obj.get("kind") == "Event" and obj.get("apiVersion") in (CORE, EVENTS_API)


def event_record(obj: RawObject) -> EventRecord | None:
    """One Event of either API, or None when it names no object."""
    if obj.get("apiVersion") == EVENTS_API:
        about = mapping(obj.get("regarding"))
        message = text(obj.get("note"))
        series = mapping(obj.get("series"))
        count = integer(series.get("count")) or integer(obj.get("deprecatedCount")) or 1
        first = parse_time(obj.get("deprecatedFirstTimestamp")) or parse_time(obj.get("eventTime"))
        last = (
            parse_time(series.get("lastObservedTime"))
            or parse_time(obj.get("deprecatedLastTimestamp"))
            or first
        )
        source = text(obj.get("reportingController")) or text(
            dig(obj, "deprecatedSource", "component")
        )
    else:
        about = mapping(obj.get("involvedObject"))
        message = text(obj.get("message"))
        series = mapping(obj.get("series"))
        count = integer(obj.get("count")) or integer(series.get("count")) or 1
        first = parse_time(obj.get("firstTimestamp")) or parse_time(obj.get("eventTime"))
        last = (
            parse_time(obj.get("lastTimestamp"))
            or parse_time(series.get("lastObservedTime"))
            or first
        )
        source = text(dig(obj, "source", "component")) or text(obj.get("reportingComponent"))
    kind, name = about.get("kind"), about.get("name")
    if not isinstance(kind, str) or not isinstance(name, str) or not kind or not name:
        return None
    return EventRecord(
        kind=kind,
        namespace=text(about.get("namespace")) or "",
        name=name,
        type=text(obj.get("type")) or "",
        reason=text(obj.get("reason")) or "",
        message=(message or "")[:MAX_MESSAGE],
        count=max(count, 1),
        first=first,
        last=last or first,
        source=source or "",
    )


def folded(records: Iterable[EventRecord]) -> list[EventRecord]:
    """Repeats as one row each (counts added, first and last seen kept), oldest last-seen first,
    as `kubectl events` orders them."""
    rows: dict[tuple[str, ...], EventRecord] = {}
    for event in records:
        key = (*event.about, event.type, event.reason, event.message)
        seen = rows.get(key)
        if seen is None:
            rows[key] = event
            continue
        firsts = [t for t in (seen.first, event.first) if t is not None]
        lasts = [t for t in (seen.last, event.last) if t is not None]
        rows[key] = EventRecord(
            *key[:3],
            seen.type,
            seen.reason,
            seen.message,
            seen.count + event.count,
            min(firsts) if firsts else None,
            max(lasts) if lasts else None,
            seen.source or event.source,
        )
    return sorted(rows.values(), key=_order)


_NEVER = datetime.min.replace(tzinfo=UTC)


def _order(record: EventRecord) -> tuple[datetime, str, str, str, str]:
    return (record.last or _NEVER, record.kind, record.name, record.reason, record.message)


def about(
    records: Iterable[EventRecord], objects: Iterable[tuple[str, str, str]]
) -> list[EventRecord]:
    """The folded timeline of the events about these (kind, namespace, name) objects; a Node
    has no namespace, so any namespace matches it."""
    wanted = set(objects)
    nodes = {name for kind, _, name in wanted if kind == "Node"}
    return folded(r for r in records if r.about in wanted or (r.kind == "Node" and r.name in nodes))
