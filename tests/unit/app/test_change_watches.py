"""kube/changes.py over scripted watches (Kube.watch, our own boundary): what a follower is told.

tests/unit/kube/test_changes.py pins when a watch is said to be silent on one server; this pins the
rest: the changes kept between two reads are bounded (MAX_KEPT), a watch's first list is no
change and a re-list is, a watch that gives up raises the flag and starts over, started() waits
for every first answer, stop() ends each watch at its next word, and silences are said per
server. Each watch says when it has handed over its last event, so nothing waits on time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube import changes as changes_module
from kubectl_machinepool.kube.changes import MAX_KEPT, Changes, Silence, Watched
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.changes import LISTED, Change

MACHINES = Resource("cluster.x-k8s.io", "v1beta2", "Machine", "machines")
BOUND = 10.0  # seconds any one step may take before the test fails: a bound, never a measure


def machine(name: str) -> dict[str, Any]:
    return {"kind": "Machine", "metadata": {"name": name, "namespace": "capi-prod"}}


class ScriptedWatch:
    """Kube.watch whose successive calls give the scripts in turn (an exception in a script
    is raised there). After the last event of each it says so (drained) and holds the watch
    open until the test ends it (end), then gives the tail; a call beyond the scripts hears
    nothing until the test is over."""

    def __init__(self, *scripts: list[Any], where: str = "context 'prod'") -> None:
        self.where = where
        self.scripts = list(scripts)
        self.tail: list[Any] = []
        self.calls = 0
        self.drained = threading.Event()
        self.end = threading.Event()
        self.closed = threading.Event()
        self.over = threading.Event()
        self.health: Any = None

    def watch(self, _resource: Resource, _namespace: str | None, **kwargs: Any) -> Iterator[Any]:
        self.calls += 1
        self.health = kwargs["health"]
        if not self.scripts:
            self.over.wait(BOUND)
            return
        script = self.scripts.pop(0)
        try:
            for event in script:
                if isinstance(event, BaseException):
                    raise event
                self.health.heard()
                yield event
            self.drained.set()
            self.end.wait(BOUND)
            yield from self.tail
        finally:
            self.closed.set()


class Followed:
    """Changes over scripted watches, stopped and their watches ended after the test."""

    def __init__(self) -> None:
        self.made: list[Changes] = []
        self.watches: list[ScriptedWatch] = []

    def __call__(self, *watches: ScriptedWatch, clock: Any = None) -> Changes:
        changes = Changes() if clock is None else Changes(clock=clock)
        self.made.append(changes)
        for kube in watches:
            self.watches.append(kube)
            changes.follow(Watched(kube, MACHINES, "capi-prod"))  # type: ignore[arg-type]
        return changes

    def close(self) -> None:
        for changes in self.made:
            changes.stop()
        for watch in self.watches:
            watch.end.set()
            watch.over.set()


@pytest.fixture
def following() -> Iterator[Followed]:
    followed = Followed()
    yield followed
    followed.close()


def test_the_changes_kept_between_two_reads_are_bounded(following: Followed) -> None:
    events = [(LISTED, {"items": []})]
    events += [("MODIFIED", machine(f"m-{i}")) for i in range(MAX_KEPT + 10)]
    watch = ScriptedWatch(events)
    changes = following(watch)
    assert watch.drained.wait(BOUND)
    assert changes.wait(0)  # the follower was told
    kept = changes.take()
    assert len(kept) == MAX_KEPT
    assert kept[0] == Change("MODIFIED", "Machine", "m-0")  # the oldest kept, newest dropped
    assert kept[-1] == Change("MODIFIED", "Machine", f"m-{MAX_KEPT - 1}")
    assert changes.take() == ()  # a take empties them: the bound is per read


def test_a_first_list_is_no_change_and_a_relist_is(following: Followed) -> None:
    watch = ScriptedWatch(
        [
            (LISTED, {"items": [machine("m-0")]}),
            ("ADDED", machine("m-1")),
            ("DELETED", machine("m-0")),
            (LISTED, {"items": [machine("m-1")]}),  # after 410 Gone: what is there now
        ]
    )
    changes = following(watch)
    assert changes.started(BOUND)
    assert watch.drained.wait(BOUND)
    assert changes.take() == (
        Change("ADDED", "Machine", "m-1"),
        Change("DELETED", "Machine", "m-0"),
        Change(LISTED, "Machine", ""),
    )


def test_a_watch_that_gives_up_raises_the_flag_and_starts_over(
    following: Followed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RBAC changed, a server restarting: the follower reads again and finds out why; the
    watch starts over RESTART later (0 here)."""
    monkeypatch.setattr(changes_module, "RESTART", 0.0)
    refused = MachinePoolError('machines.cluster.x-k8s.io is forbidden: User "reader" cannot watch')
    watch = ScriptedWatch([refused], [(LISTED, {"items": []})])
    changes = following(watch)
    assert changes.started(BOUND)  # a watch that gave up has answered too
    assert watch.drained.wait(BOUND)
    assert watch.calls == 2
    assert changes.wait(0)
    assert changes.take() == (Change(LISTED, "Machine", ""),)


def test_a_refused_watch_is_told_once_and_other_failures_not_at_all(
    following: Followed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """403 (no `watch` verb): the kind is only read again every RESTART, and the follower
    says so once; a server restarting (no status) is not a refusal."""
    monkeypatch.setattr(changes_module, "RESTART", 0.0)
    refused = MachinePoolError("machines is forbidden: cannot watch", status=403)
    restarting = MachinePoolError("connection refused")
    watch = ScriptedWatch([refused], [refused], [restarting], [(LISTED, {"items": []})])
    changes = following(watch)
    assert watch.drained.wait(BOUND)
    assert changes.refused() == [("machines", "machines is forbidden: cannot watch")]
    assert changes.refused() == []


def test_started_waits_for_every_first_answer(following: Followed) -> None:
    answered = ScriptedWatch([(LISTED, {"items": []})])
    late = ScriptedWatch()  # no answer at all
    changes = following(answered, late)
    assert answered.drained.wait(BOUND)
    assert not changes.started(0)


def test_stop_ends_each_watch_at_its_next_word_and_opens_none(following: Followed) -> None:
    watch = ScriptedWatch([(LISTED, {"items": []})], [(LISTED, {"items": []})])
    watch.tail = [("ADDED", machine("m-9")), ("ADDED", machine("m-10"))]
    changes = following(watch)
    assert watch.drained.wait(BOUND)
    changes.stop()
    watch.end.set()  # the server speaks again
    assert watch.closed.wait(BOUND)  # the watch was closed at that word
    assert changes.take() == ()  # which is not a change any more
    assert watch.calls == 1  # and no other watch was opened


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_silences_are_said_per_server(following: Followed) -> None:
    clock = Clock()
    prod = ScriptedWatch([(LISTED, {"items": []})], where="context 'prod'")
    staging = ScriptedWatch([(LISTED, {"items": []})], where="context 'staging'")
    changes = following(prod, staging, clock=clock)
    assert prod.drained.wait(BOUND)
    assert staging.drained.wait(BOUND)
    clock.now += changes.stale_after + 3
    began, ended = changes.quiet()
    seconds = changes.stale_after + 3
    assert began == [
        Silence("context 'prod'", ("machines",), seconds),
        Silence("context 'staging'", ("machines",), seconds),
    ]
    assert ended == []
    clock.now += 2
    staging.health.heard()  # a bookmark from staging only
    assert changes.wait(0)
    assert changes.quiet() == ([], [Silence("context 'staging'", ("machines",), seconds + 2)])
    assert changes.quiet_in() == changes.stale_after  # staging's turn, counted from its word
