"""changes.Changes over a Kube.watch of the test's own (our boundary): a watch that says nothing
for WINDOW plus SLACK is said to be silent once, and heard again once it speaks."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kubectl_machinepool.kube.changes import Changes, Silence, Watched
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.watch import Health
from kubectl_machinepool.model.changes import LISTED

MACHINEPOOLS = Resource("cluster.x-k8s.io", "v1beta2", "MachinePool", "machinepools")
MACHINES = Resource("cluster.x-k8s.io", "v1beta2", "Machine", "machines")
WHERE = "context 'prod' (https://prod.example:6443)"


class Clock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


class Server:
    """Kube.watch as a follower's thread calls it: the objects listed, then nothing until the
    test is over. Each watch's Health goes to the test, which speaks for the server."""

    where = WHERE

    def __init__(self) -> None:
        self.healths: queue.Queue[tuple[str, Health]] = queue.Queue()
        self.over = threading.Event()

    def watch(self, resource: Resource, _namespace: str, **kwargs: Any) -> Iterator[Any]:
        self.healths.put((resource.plural, kwargs["health"]))
        yield LISTED, {"items": []}
        self.over.wait(30)


@pytest.fixture
def following() -> Iterator[tuple[Changes, Clock, dict[str, Health]]]:
    clock = Clock()
    changes = Changes(clock=clock)
    server = Server()
    kube: Any = server
    for resource in (MACHINEPOOLS, MACHINES):
        changes.follow(Watched(kube, resource, "prod"))
    assert changes.started(10)
    healths = dict(server.healths.get(timeout=10) for _ in range(2))
    yield changes, clock, healths
    changes.stop()
    server.over.set()


def test_a_silent_watch_is_said_once_and_again_when_heard(following) -> None:
    changes, clock, healths = following
    changes.take()
    assert changes.quiet_in() == changes.stale_after
    clock.now += changes.stale_after - 1
    healths["machines"].heard()
    assert changes.quiet() == ([], [])
    clock.now += 1
    assert changes.quiet() == ([Silence(WHERE, ("machinepools",), changes.stale_after)], [])
    assert changes.quiet() == ([], [])  # said once
    assert changes.quiet_in() == changes.stale_after - 1  # the other one's turn
    clock.now += 12
    healths["machinepools"].heard()
    assert changes.wait(0)  # the follower wakes, to say so and read again
    assert changes.take() == ()  # nothing changed as far as anyone knows
    heard = Silence(WHERE, ("machinepools",), changes.stale_after + 12)
    assert changes.quiet() == ([], [heard])
    assert changes.quiet() == ([], [])


def test_watches_silent_together_are_said_together(following) -> None:
    changes, clock, _ = following
    clock.now += 60
    silent = Silence(WHERE, ("machinepools", "machines"), 60)
    assert changes.quiet() == ([silent], [])
    assert changes.quiet_in() is None  # nothing left to time: a word wakes the follower
