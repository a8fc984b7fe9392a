"""The watch API as a plain generator of (type, object) events that survives what servers do.

A watch connection ends all the time: the server closes it after timeoutSeconds, a proxy or a
restart drops it. It is opened again from the last resourceVersion seen (an event's, or a
bookmark's), so no event is lost or repeated. When that version is too old (410 Gone: etcd
was compacted, or the watch cache moved on) nothing can be resumed: the objects are listed
again and handed over as one LISTED event, the state the caller must take as current. The
first event is such a LISTED one too, unless the caller gives a resourceVersion to start at.

Bounds: one event is at most the size of one answer (kube.MAX_ANSWER), each connection lasts
at most its window (plus WATCH_SLACK of silence), and the whole watch ends when its timeout
passes. Failures are MachinePoolErrors, as for every request.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubectl_machinepool.apierrors import status_error
from kubectl_machinepool.errors import ClusterAccessError, MachinePoolError, UnreachableError
from kubectl_machinepool.fields import dig, integer, text

if TYPE_CHECKING:
    from kubectl_machinepool.kube import Kube, Resource
    from kubectl_machinepool.transport import Answer

# How long the server keeps one watch open (timeoutSeconds) before it is opened again, and how
# much longer a silent connection is waited for beyond that.
WATCH_WINDOW = 300.0
WATCH_SLACK = 15.0
# Connections in a row that fail (or end at once, with nothing) before the watch gives up.
WATCH_RETRIES = 3
# The synthetic event: every object as of now, in a List (first, and after 410 Gone).
LISTED = "LISTED"
GONE = 410
TRANSIENT = frozenset({429, 500, 502, 503, 504})

Event = tuple[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Watch:
    """What is watched: one kind in one namespace (None: all), optionally one name or labels."""

    resource: Resource
    namespace: str | None
    name: str | None = None
    selector: str | None = None
    window: float = WATCH_WINDOW

    @property
    def selectors(self) -> dict[str, str]:
        query = {}
        if self.name:
            query["fieldSelector"] = f"metadata.name={self.name}"
        if self.selector:
            query["labelSelector"] = self.selector
        return query


class _Expired(Exception):
    """The resourceVersion to resume from is gone (410): list again."""


def stream_lines(response: Answer, deadline: float, where: str, limit: int) -> Iterator[bytes]:
    """The non-empty lines of a streamed answer, none longer than limit, until deadline."""
    pending = bytearray()
    while chunk := response.read1(1 << 16):
        pending += chunk
        while (end := pending.find(b"\n")) >= 0:
            line = bytes(pending[:end])
            del pending[: end + 1]
            if line.strip():
                yield line
        if len(pending) > limit:
            raise ClusterAccessError(
                f"the API server of {where} sent a watch event larger than {limit >> 20} MiB"
            )
        if time.monotonic() > deadline:
            return  # kept open past its timeoutSeconds: the watch opens it again
    if pending.strip():
        yield bytes(pending)


def _event(line: bytes, where: str) -> Event:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        event = None
    kind = text(event.get("type")) if isinstance(event, dict) else None
    obj = event.get("object") if isinstance(event, dict) else None
    if not kind or not isinstance(obj, dict):
        raise ClusterAccessError(
            f"the server of {where} sent a watch event unlike a Kubernetes API server's",
            hint="check the server address and any proxy in between",
        )
    return kind, obj


def _listed(kube: Kube, spec: Watch) -> dict[str, Any]:
    """The objects now, as one List with its resourceVersion, items with TypeMeta filled in."""
    resource = spec.resource
    listed = kube.request("GET", resource.path(spec.namespace), spec.selectors or None)
    for item in listed.get("items") or []:
        if isinstance(item, dict):
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
    return listed


def _connection(
    kube: Kube, spec: Watch, version: str, seconds: int
) -> Generator[tuple[str, dict[str, Any], str], None, None]:
    """One watch connection's events, with the resourceVersion to resume from after each."""
    query = {
        "watch": "1",
        "allowWatchBookmarks": "true",
        "resourceVersion": version,
        "timeoutSeconds": str(seconds),
        **spec.selectors,
    }
    try:
        lines = kube.stream(spec.resource.path(spec.namespace), query, window=seconds)
        with closing(lines):
            for line in lines:
                kind, obj = _event(line, kube.where)
                if kind == "ERROR":
                    code = integer(obj.get("code")) or 0
                    if code == GONE:
                        raise _Expired
                    message = text(obj.get("message")) or f"the watch failed (HTTP {code})"
                    raise status_error(kube.where, code, message)
                version = text(dig(obj, "metadata", "resourceVersion")) or version
                yield kind, obj, version
    except MachinePoolError as err:
        if err.status == GONE:
            raise _Expired from err
        raise


def watch(
    kube: Kube, spec: Watch, resource_version: str | None, timeout: float | None
) -> Generator[Event, None, None]:
    """Events as the watch API sends them (ADDED, MODIFIED, DELETED; bookmarks kept to
    itself), LISTED first and after 410 Gone, until timeout passes (None: never)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    version = resource_version
    failures, last = 0, ""
    while deadline is None or time.monotonic() < deadline:
        if version is None:
            listed = _listed(kube, spec)
            version = text(dig(listed, "metadata", "resourceVersion")) or ""
            yield LISTED, listed
            continue
        left = spec.window if deadline is None else min(spec.window, deadline - time.monotonic())
        seconds = max(1, math.ceil(left))
        opened, events = time.monotonic(), 0
        pause = 0
        try:
            # Closed here, not when the collector finds it: its socket is only closed with it.
            with closing(_connection(kube, spec, version, seconds)) as connection:
                for kind, obj, seen in connection:
                    version, events, failures = seen, events + 1, 0
                    if kind != "BOOKMARK":
                        yield kind, obj
        except _Expired:
            version = None
            if events:
                continue
            # Expired before a single event: a server doing that each time must not be
            # listed from forever.
            failures, last = failures + 1, "its resourceVersion expired at once"
            pause = failures - 1  # the first expiry is normal: list again at once
        except MachinePoolError as err:
            # Dropped, silent past its window, or the server busy (a cache initializing
            # answers 429): open it again; anything else is the caller's to hear.
            if not isinstance(err, UnreachableError) and err.status not in TRANSIENT:
                raise
            failures, last = failures + 1, err.message
            pause = failures
        else:
            # A server closing a watch at once, again and again, must not be asked forever.
            quick = not events and time.monotonic() - opened < seconds / 2
            failures = failures + 1 if quick else 0
            last, pause = "the server ended it at once", failures
        if failures > WATCH_RETRIES:
            raise UnreachableError(
                f"the watch of {spec.resource.plural} on {kube.where} keeps failing: {last}",
                hint="check that the server is reachable, and raise --request-timeout",
            )
        if pause:
            left = 5.0 if deadline is None else max(0.0, deadline - time.monotonic())
            time.sleep(min(float(pause), 5.0, left))
