"""The watch API as a plain generator of (type, object) events that survives what servers do.

A watch connection ends all the time: the server closes it after timeoutSeconds, a proxy or a
restart drops it. It is opened again from the last resourceVersion seen (an event's, or a
bookmark's), so no event is lost or repeated. When that version is too old (410 Gone: etcd
was compacted, or the watch cache moved on) nothing can be resumed: the objects are listed
again and handed over as one LISTED event, the state the caller must take as current. The
first event is such a LISTED one too, unless the caller gives a resourceVersion to start at.

A watch that fails (410 again, a dropped or silent connection, a busy server) is opened again
after a pause that backs off as client-go's reflector does: none after a first 410 or dropped
connection (a re-list or a new connection cures those), then BACKOFF_FIRST doubling up to
BACKOFF_MOST, each stretched by up to as much again at random so that many clients do not come
back together, counted from the start again once BACKOFF_RESET passes without a failure.
Health keeps that count, and hears each word from the server, across the watches a follower
starts one after another.

Bounds: one event is at most the size of one answer (kube.MAX_ANSWER), each connection lasts
at most its window (plus its slack of silence), and the whole watch ends when its timeout
passes. Failures are MachinePoolErrors, as for every request.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from typing import TYPE_CHECKING, Any, Protocol

from kubectl_machinepool.base.errors import ClusterAccessError, MachinePoolError, UnreachableError
from kubectl_machinepool.base.fields import dig, integer, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.apierrors import status_error
from kubectl_machinepool.model.changes import LISTED

if TYPE_CHECKING:
    from kubectl_machinepool.kube.pool import Answer
    from kubectl_machinepool.kube.resource import Resource


class Kube(Protocol):
    """What a watch needs of the client (client.Kube, which imports this module)."""

    @property
    def where(self) -> str: ...

    def request(
        self, method: str, path: str, query: dict[str, str] | None = None
    ) -> dict[str, Any]: ...

    def stream(
        self, path: str, query: dict[str, str], *, silence: float, opened: Callable[[], None]
    ) -> Generator[bytes, None, None]: ...


# How long the server keeps one watch open (timeoutSeconds) before it is opened again, and how
# much longer a silent connection is waited for beyond that: the server ends it on time (with a
# bookmark 2 s before), so a connection silent past both is stalled.
WATCH_WINDOW = 300.0
WATCH_SLACK = 10.0
# Connections in a row that fail (or end at once, with nothing) before the watch gives up.
WATCH_RETRIES = 3
# client-go's reflector: 0.8 s doubling to 30 s, jittered by up to 100%, reset after 2 minutes.
BACKOFF_FIRST = 0.8
BACKOFF_MOST = 30.0
BACKOFF_RESET = 120.0
GONE = 410
TRANSIENT = frozenset({429, 500, 502, 503, 504})

Event = tuple[str, dict[str, Any]]


@record
class Watch:
    """What is watched: one kind in one namespace (None: all), optionally one name or labels."""

    resource: Resource
    namespace: str | None
    name: str | None = None
    selector: str | None = None
    window: float = WATCH_WINDOW
    slack: float = WATCH_SLACK

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


def backoff(retries: int, jitter: float) -> float:
    """Seconds to wait before the next attempt after `retries` failures in a row that a
    retry at once did not cure: none for 0, then BACKOFF_FIRST doubling up to BACKOFF_MOST,
    stretched by jitter (0 to 1) of itself."""
    if retries <= 0:
        return 0.0
    return min(BACKOFF_FIRST * 2.0 ** (retries - 1), BACKOFF_MOST) * (1.0 + jitter)


class Health:
    """How the server of one watched kind is doing, kept across its connections, and across
    the watches a follower starts one after another: heard() on every word from it (a list,
    an answer opening a watch, an event or bookmark, a watch it ended on time), and the
    backoff after failures. clock (the watch's, for all its timing), jitter and sleep are
    the real ones but in tests."""

    def __init__(
        self,
        heard: Callable[[], None] = lambda: None,
        *,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        self.heard = heard
        self.clock = clock
        self._jitter = jitter
        self._sleep = sleep
        self._failures = 0
        # When the last retry was due: a quiet spell is counted from then.
        self._retried: float | None = None

    def failed(self, *, at_once: bool, most: float | None = None) -> None:
        """Wait before the next attempt, at most `most` seconds. at_once: whether a first
        failure after a quiet spell is tried again at once (410 Gone is cured by a re-list,
        a dropped or stalled connection by a new one; a busy server is not)."""
        now = self.clock()
        if self._retried is not None and now - self._retried >= BACKOFF_RESET:
            self._failures = 0
        self._failures += 1
        pause = backoff(self._failures - 1 if at_once else self._failures, self._jitter())
        if most is not None:
            pause = max(min(pause, most), 0.0)
        self._retried = now + pause
        if pause > 0:
            self._sleep(pause)


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
    kube: Kube, spec: Watch, version: str, seconds: int, health: Health
) -> Generator[tuple[str, dict[str, Any], str], None, None]:
    """One watch connection's events, with the resourceVersion to resume from after each."""
    query = {
        "watch": "1",
        "allowWatchBookmarks": "true",
        "resourceVersion": version,
        "timeoutSeconds": str(seconds),
        **spec.selectors,
    }
    path = spec.resource.path(spec.namespace)
    try:
        lines = kube.stream(path, query, silence=seconds + spec.slack, opened=health.heard)
        with closing(lines):
            for line in lines:
                health.heard()
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
    kube: Kube,
    spec: Watch,
    resource_version: str | None,
    timeout: float | None,
    health: Health | None = None,
) -> Generator[Event, None, None]:
    """Events as the watch API sends them (ADDED, MODIFIED, DELETED; bookmarks kept to
    itself), LISTED first and after 410 Gone, until timeout passes (None: never)."""
    health = health or Health()
    clock = health.clock
    deadline = None if timeout is None else clock() + timeout
    version = resource_version
    # Failures with no event in between, for giving up; the backoff is health's.
    failures = 0
    while deadline is None or clock() < deadline:
        if version is None:
            listed = _listed(kube, spec)
            health.heard()
            version = text(dig(listed, "metadata", "resourceVersion")) or ""
            yield LISTED, listed
            continue
        left = spec.window if deadline is None else min(spec.window, deadline - clock())
        seconds = max(1, math.ceil(left))
        opened, events = clock(), 0
        expired, at_once = False, True
        try:
            # Closed here, not when the collector finds it: its socket is only closed with it.
            with closing(_connection(kube, spec, version, seconds, health)) as connection:
                for kind, obj, seen in connection:
                    version, events, failures = seen, events + 1, 0
                    if kind != "BOOKMARK":
                        yield kind, obj
        except _Expired:
            # Normal after a while (etcd compacted): list again. Expired before a single
            # event, a server doing that each time must not be listed from forever.
            version, expired, last = None, True, "its resourceVersion expired at once"
        except MachinePoolError as err:
            # Dropped, silent past its window, or the server busy (a cache initializing
            # answers 429): open it again; anything else is the caller's to hear.
            if not isinstance(err, UnreachableError) and err.status not in TRANSIENT:
                raise
            last, at_once = err.message, isinstance(err, UnreachableError)
        else:
            # A server closing a watch at once, again and again, must not be asked forever.
            if events or clock() - opened >= seconds / 2:
                health.heard()
                failures = 0
                continue
            last, at_once = "the server ended it at once", False
        failures = failures if expired and events else failures + 1
        if failures > WATCH_RETRIES:
            raise UnreachableError(
                f"the watch of {spec.resource.plural} on {kube.where} keeps failing: {last}",
                hint="check that the server is reachable, and raise --request-timeout",
            )
        health.failed(at_once=at_once, most=None if deadline is None else deadline - clock())
