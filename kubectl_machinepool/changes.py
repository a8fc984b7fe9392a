"""Something changed: watches of the kinds a view reads, each in a thread, raising one flag.

A follower (rollout status) reads what it shows again only when a watch says something changed,
instead of polling. Each watch's first event (the objects as of now) is not a change. A watch
that fails for good (RBAC, its kind gone) raises the flag too, with the error kept, so the
follower reads again and finds out why in its own read. Threads are daemons, not parallel.Pending
ones: a watch holds its thread for the whole run, and Pending's slots are for reads. A watch
connection lasts WINDOW, so a thread notices stop() within WINDOW plus the watch's slack.
"""

from __future__ import annotations

import threading
from contextlib import closing
from dataclasses import dataclass

from kubectl_machinepool.errors import MachinePoolError
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.kubewatch import LISTED

WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class Watched:
    """One kind to watch, on one server."""

    kube: Kube
    resource: Resource
    namespace: str | None
    selector: str | None = None


class Changes:
    def __init__(self) -> None:
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self.errors: list[MachinePoolError] = []

    def follow(self, watched: Watched) -> None:
        threading.Thread(target=self._run, args=(watched,), daemon=True).start()

    def _run(self, watched: Watched) -> None:
        events = watched.kube.watch(
            watched.resource, watched.namespace, selector=watched.selector, window=WINDOW
        )
        try:
            with closing(events):
                first = True
                for kind, _ in events:
                    if self._stopped.is_set():
                        return
                    if not (first and kind == LISTED):
                        self._changed.set()
                    first = False
        except MachinePoolError as err:
            if not self._stopped.is_set():
                self.errors.append(err)
                self._changed.set()

    def wait(self, timeout: float | None) -> bool:
        """Until something changed (True) or timeout passed (False); the flag is then lowered."""
        changed = self._changed.wait(timeout)
        self._changed.clear()
        return changed

    def stop(self) -> None:
        self._stopped.set()
