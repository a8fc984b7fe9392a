"""Something changed: watches of the kinds a view reads, each in a thread, raising one flag.

A follower (rollout status) reads what it shows again only when a watch says something changed,
instead of polling. Each watch's first event (the objects as of now) is not a change. A watch
that gives up (a server restarting, RBAC, its kind gone) raises the flag too, so the follower
reads again and finds out why in its own read, and starts over RESTART seconds later. Threads
are daemons, not parallel.Pending ones: a watch holds its thread for the whole run, and
Pending's slots are for reads. A watch connection lasts WINDOW, so a thread notices stop()
within WINDOW plus the watch's slack.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from dataclasses import dataclass

from kubectl_machinepool.errors import MachinePoolError
from kubectl_machinepool.fields import dig, text
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.kubewatch import LISTED

WINDOW = 60.0
# After a watch gave up, it starts over this much later.
RESTART = 5.0


@dataclass(frozen=True, slots=True)
class Watched:
    """One kind to watch, on one server."""

    kube: Kube
    resource: Resource
    namespace: str | None
    selector: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One event a watch reported: ADDED, MODIFIED, DELETED, or LISTED (it started over)."""

    event: str
    kind: str
    name: str


# Changes kept between two reads; beyond this many, only that there were more is known.
MAX_KEPT = 1000


class Changes:
    def __init__(self) -> None:
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._seen: list[Change] = []
        self.dropped = 0
        self._started: list[threading.Event] = []

    def follow(self, watched: Watched) -> None:
        started = threading.Event()
        self._started.append(started)
        threading.Thread(target=self._run, args=(watched, started), daemon=True).start()

    def started(self, timeout: float) -> bool:
        """Until every watch has its first answer (or gave up): from then on no change is
        missed. False when timeout passed first."""
        deadline = time.monotonic() + timeout
        return all(event.wait(max(deadline - time.monotonic(), 0.0)) for event in self._started)

    def _record(self, change: Change) -> None:
        with self._lock:
            if len(self._seen) < MAX_KEPT:
                self._seen.append(change)
            else:
                self.dropped += 1
        self._changed.set()

    def _run(self, watched: Watched, started: threading.Event) -> None:
        kind = watched.resource.kind
        while not self._stopped.is_set():
            events = watched.kube.watch(
                watched.resource, watched.namespace, selector=watched.selector, window=WINDOW
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
            except MachinePoolError:
                started.set()
                # The watch gave up (a server restarting, RBAC changed): the follower reads
                # again and says what it finds; the watch starts over after a pause.
                self._record(Change(LISTED, kind, ""))
                self._stopped.wait(RESTART)

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
