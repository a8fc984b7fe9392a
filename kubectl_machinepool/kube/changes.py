"""Something changed: watches of the kinds a view reads, each in a thread, raising one flag.

A follower (rollout status) reads what it shows again only when a watch says something changed,
instead of polling. Each watch's first event (the objects as of now) is not a change. A watch
that gives up (a server restarting, RBAC, its kind gone) raises the flag too, so the follower
reads again and finds out why in its own read, and starts over RESTART seconds later, going on
with its backoff (watch.Health). Threads are daemons, not parallel.Pending ones: a watch
holds its thread for the whole run, and Pending's slots are for reads. A watch connection lasts
WINDOW, so a thread notices stop() within WINDOW plus SLACK.

A watch that has said nothing for WINDOW plus SLACK (no event, bookmark, answer or ending: a
healthy API server ends it after WINDOW, with a bookmark 2 s before) is stalled: its connection
is abandoned and opened again, and quiet() tells the follower so, and again once it is heard.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import closing
from functools import partial

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.parallel import start_daemon
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.watch import WATCH_SLACK, Health
from kubectl_machinepool.model.changes import LISTED, Change

# How long each watch connection lasts, and how much longer one may say nothing before it is
# taken as stalled: 40 s without a word at most, for two watch requests a minute per kind.
WINDOW = 30.0
SLACK = WATCH_SLACK
# After a watch gave up, it starts over this much later.
RESTART = 5.0


@record
class Watched:
    """One kind to watch, on one server."""

    kube: Kube
    resource: Resource
    namespace: str | None
    selector: str | None = None


@record
class Silence:
    """Watches on one API server that said nothing for `seconds` (or did, until heard again)."""

    where: str
    plurals: tuple[str, ...]
    seconds: float


# Changes kept between two reads; beyond this many, only that there were more is known.
MAX_KEPT = 1000


class Changes:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._seen: list[Change] = []
        self._started: list[threading.Event] = []
        self._clock = clock
        self.stale_after = WINDOW + SLACK
        self._watched: list[Watched] = []
        # When each watch was last heard from; since when the silent ones are silent.
        self._heard: list[float] = []
        self._silent: dict[int, float] = {}
        # Watches the API server refused (RBAC without `watch`): said once, by the follower.
        self._refused: dict[int, str] = {}
        self._told: set[int] = set()

    def follow(self, watched: Watched) -> None:
        started = threading.Event()
        self._started.append(started)
        with self._lock:
            index = len(self._watched)
            self._watched.append(watched)
            self._heard.append(self._clock())
        start_daemon(self._run, index, started)

    def started(self, timeout: float) -> bool:
        """Until every watch has its first answer (or gave up): from then on no change is
        missed. False when timeout passed first."""
        deadline = time.monotonic() + timeout
        return all(event.wait(max(deadline - time.monotonic(), 0.0)) for event in self._started)

    def _record(self, change: Change) -> None:
        with self._lock:
            if len(self._seen) < MAX_KEPT:
                self._seen.append(change)
        self._changed.set()

    def _hear(self, index: int) -> None:
        with self._lock:
            self._heard[index] = self._clock()
            if index in self._silent:
                self._changed.set()  # the follower says so, and reads again

    def quiet(self) -> tuple[list[Silence], list[Silence]]:
        """The watches gone silent for stale_after since last asked (each said once until it is
        heard again), and those heard again since, by server."""
        now = self._clock()
        with self._lock:
            began = [
                i
                for i, at in enumerate(self._heard)
                if now - at >= self.stale_after and i not in self._silent
            ]
            ended = [i for i, since in self._silent.items() if self._heard[i] > since]
            silences = {i: now - self._heard[i] for i in began}
            silences |= {i: self._heard[i] - self._silent.pop(i) for i in ended}
            self._silent |= {i: self._heard[i] for i in began}
        return self._by_server(began, silences), self._by_server(ended, silences)

    def _by_server(self, indexes: list[int], silences: dict[int, float]) -> list[Silence]:
        servers: dict[str, list[int]] = {}
        for i in indexes:
            servers.setdefault(self._watched[i].kube.where, []).append(i)
        return [
            Silence(
                where,
                tuple(dict.fromkeys(self._watched[i].resource.plural for i in held)),
                max(silences[i] for i in held),
            )
            for where, held in servers.items()
        ]

    def quiet_in(self) -> float | None:
        """Seconds until a watch not yet said to be silent would be (None: every one is)."""
        now = self._clock()
        with self._lock:
            left = [
                at + self.stale_after - now
                for i, at in enumerate(self._heard)
                if i not in self._silent
            ]
        return max(min(left), 0.0) if left else None

    def _run(self, index: int, started: threading.Event) -> None:
        watched = self._watched[index]
        kind = watched.resource.kind
        # One for the whole run: a watch started over goes on with its backoff.
        health = Health(partial(self._hear, index), sleep=self._stopped.wait)
        while not self._stopped.is_set():
            events = watched.kube.watch(
                watched.resource,
                watched.namespace,
                selector=watched.selector,
                window=WINDOW,
                slack=SLACK,
                health=health,
            )
            try:
                with closing(events):
                    first = True
                    for event, obj in events:
                        started.set()
                        if self._stopped.is_set():
                            return
                        if not (first and event == LISTED):
                            name = text(dig(obj, "metadata", "name")) if event != LISTED else ""
                            self._record(Change(event, kind, name or ""))
                        first = False
            except MachinePoolError as err:
                started.set()
                if err.status == 403:
                    with self._lock:
                        self._refused.setdefault(index, err.message)
                # The watch gave up (a server restarting, RBAC changed): the follower reads
                # again and says what it finds; the watch starts over after a pause.
                self._record(Change(LISTED, kind, ""))
                self._stopped.wait(RESTART)

    def refused(self) -> list[tuple[str, str]]:
        """The watches refused since last asked, each once: (plural, the server's message).
        Such a kind is then only read again every RESTART seconds, not when it changes."""
        with self._lock:
            new = [i for i in self._refused if i not in self._told]
            self._told.update(new)
            return [(self._watched[i].resource.plural, self._refused[i]) for i in new]

    def wait(self, timeout: float | None) -> bool:
        """Until something changed (True) or timeout passed (False); the flag is then lowered."""
        changed = self._changed.wait(timeout)
        self._changed.clear()
        return changed

    def take(self) -> tuple[Change, ...]:
        """The changes seen since the last take(), oldest first."""
        with self._lock:
            seen, self._seen = self._seen, []
        return tuple(seen)

    def stop(self) -> None:
        self._stopped.set()
