"""kubewatch over a scripted Kube.stream (our own boundary): what a broken server gets, and the
backoff it meets, with the clock and the sleeps in the test's hands.

The real server's behaviour (restarts, drops, 410) is in tests/integration/test_watch.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubectl_machinepool.base.errors import ClusterAccessError, UnreachableError
from kubectl_machinepool.kube import watch as kubewatch
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.watch import Health, Watch, backoff, stream_lines, watch
from kubectl_machinepool.model.changes import LISTED

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps")
SPEC = Watch(CONFIGMAPS, "default")


class Scripted:
    """Kube.request answers a list; Kube.stream plays one script per connection."""

    where = "the test server"

    def __init__(self, *connections: list[bytes] | Exception) -> None:
        self.connections = list(connections)
        self.opened: list[dict[str, str]] = []

    def request(self, *_args: Any, **_kwargs: Any) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": "10"}, "items": []}

    def stream(
        self, _path: str, query: dict[str, str], *, silence: float, opened: Any
    ) -> Iterator[bytes]:
        self.opened.append({**query, "silence": str(silence)})
        script = self.connections.pop(0) if self.connections else []
        if isinstance(script, Exception):
            raise script
        opened()
        yield from script


def line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode()


def cm(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}}


class Clock:
    """A monotonic clock that moves when the watch sleeps, and when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def health(clock: Clock) -> Health:
    """No jitter, and sleeps only recorded."""
    return Health(clock=clock, jitter=lambda: 0.0, sleep=clock.sleep)


def test_bookmarks_move_the_resume_point_and_are_not_handed_over(health: Health) -> None:
    kube: Any = Scripted(
        [line("ADDED", cm("a", "11")), line("BOOKMARK", {"metadata": {"resourceVersion": "15"}})],
        [line("MODIFIED", cm("a", "16"))],
    )
    events = watch(kube, SPEC, None, timeout=30, health=health)
    assert [k for k, _ in (next(events), next(events), next(events))] == [
        LISTED,
        "ADDED",
        "MODIFIED",
    ]
    assert [q["resourceVersion"] for q in kube.opened] == ["10", "15"]


def test_an_error_event_is_the_matching_error_never_a_traceback(health: Health) -> None:
    denied = {"kind": "Status", "code": 403, "message": "configmaps is forbidden"}
    kube: Any = Scripted([line("ERROR", denied)])
    with pytest.raises(ClusterAccessError, match="configmaps is forbidden"):
        list(watch(kube, SPEC, "10", timeout=30, health=health))
    # A connection is waited for in silence its window and its slack at most.
    silence = float(kube.opened[0]["timeoutSeconds"]) + SPEC.slack
    assert float(kube.opened[0]["silence"]) == silence


def test_an_answer_unlike_an_api_servers_is_refused(health: Health) -> None:
    kube: Any = Scripted([b"<html>login</html>"])
    with pytest.raises(ClusterAccessError, match="watch event unlike"):
        list(watch(kube, SPEC, "10", timeout=30, health=health))


def test_a_server_that_keeps_dropping_the_watch_is_given_up_on(
    health: Health, clock: Clock
) -> None:
    dropped = UnreachableError("cannot reach the API server: reset")
    kube: Any = Scripted(*[dropped] * 10)
    with pytest.raises(UnreachableError, match="keeps failing: cannot reach"):
        list(watch(kube, SPEC, "10", timeout=300, health=health))
    assert len(kube.opened) == kubewatch.WATCH_RETRIES + 1
    # Opened again at once after the first drop, then backing off.
    assert clock.slept == [0.8, 1.6]


GONE = {"kind": "Status", "code": 410, "message": "too old resource version"}
BUSY = {"kind": "Status", "code": 429, "message": "the cache is initializing"}


def test_a_server_that_expires_every_watch_is_not_listed_from_forever(
    health: Health, clock: Clock
) -> None:
    kube: Any = Scripted(*[[line("ERROR", GONE)]] * 10)
    with pytest.raises(UnreachableError, match="expired at once"):
        list(watch(kube, SPEC, "10", timeout=300, health=health))
    assert clock.slept == [0.8, 1.6]


def test_a_410_after_every_event_is_listed_again_ever_more_slowly(
    health: Health, clock: Clock
) -> None:
    """A server that sends an event and then 410 Gone on every watch never makes it give up
    (each event is progress), but each re-list waits longer, up to BACKOFF_MOST."""
    kube: Any = Scripted(*[[line("ADDED", cm("a", "11")), line("ERROR", GONE)]] * 9)
    events = watch(kube, SPEC, None, timeout=None, health=health)
    kinds = [next(events)[0] for _ in range(19)]
    assert kinds == [LISTED] + ["ADDED", LISTED] * 9
    assert clock.slept == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]


def test_a_single_410_lists_again_at_once(health: Health, clock: Clock) -> None:
    """The normal case (etcd compacted, once in a while): no pause, however many times it
    happens, as long as BACKOFF_RESET passes in between."""
    expiring = [line("ADDED", cm("a", "11")), line("ERROR", GONE)]
    kube: Any = Scripted(expiring, expiring, expiring)
    events = watch(kube, SPEC, None, timeout=None, health=health)
    assert [next(events)[0] for _ in range(3)] == [LISTED, "ADDED", LISTED]
    clock.now += kubewatch.BACKOFF_RESET
    assert [next(events)[0] for _ in range(2)] == ["ADDED", LISTED]
    assert clock.slept == []
    assert [next(events)[0] for _ in range(2)] == ["ADDED", LISTED]
    assert clock.slept == [0.8]  # two in a row: the second waits


def test_a_busy_server_is_not_asked_again_at_once(health: Health, clock: Clock) -> None:
    kube: Any = Scripted(
        [line("ERROR", BUSY)], [line("ERROR", BUSY)], [line("ADDED", cm("a", "12"))]
    )
    events = watch(kube, SPEC, "10", timeout=300, health=health)
    assert next(events)[0] == "ADDED"
    assert clock.slept == [0.8, 1.6]


def test_the_pauses_never_pass_the_timeout(health: Health, clock: Clock) -> None:
    kube: Any = Scripted(*[[line("ERROR", BUSY)]] * 10)
    assert list(watch(kube, SPEC, "10", timeout=2.0, health=health)) == []
    assert clock.slept == [0.8, 1.2]


def test_every_word_from_the_server_is_heard(clock: Clock) -> None:
    """The list, each answer opening a watch, each event or bookmark, and a watch the server
    ended on time: a follower that hears none for long enough says the view may be stale."""
    heard: list[float] = []
    health = Health(lambda: heard.append(clock()), clock=clock, jitter=lambda: 0.0)
    bookmark = line("BOOKMARK", {"metadata": {"resourceVersion": "15"}})
    kube: Any = Scripted([line("ADDED", cm("a", "11")), bookmark], [line("ADDED", cm("b", "16"))])
    events = watch(kube, SPEC, None, timeout=None, health=health)
    assert [next(events)[0] for _ in range(2)] == [LISTED, "ADDED"]
    assert len(heard) == 3  # the list, the answer, the event
    clock.now += SPEC.window  # the server ends the watch on time
    assert next(events)[0] == "ADDED"
    assert len(heard) == 7  # the bookmark, the end, the next answer, its event


def test_the_backoff_schedule() -> None:
    """client-go's reflector's: 0.8 s doubling to 30 s, each up to twice as long at random."""
    assert [backoff(n, 0.0) for n in range(9)] == [0, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30]
    assert backoff(1, 0.5) == pytest.approx(1.2)
    assert backoff(50, 0.999) == pytest.approx(59.97)


def test_the_backoff_starts_over_after_a_quiet_spell(clock: Clock) -> None:
    health = Health(clock=clock, jitter=lambda: 0.0, sleep=clock.sleep)
    for _ in range(4):
        health.failed(at_once=True)
    assert clock.slept == [0.8, 1.6, 3.2]
    clock.now += kubewatch.BACKOFF_RESET - 1  # since the last retry began
    health.failed(at_once=True)
    assert clock.slept[-1] == 6.4  # not quiet long enough
    clock.now += kubewatch.BACKOFF_RESET
    health.failed(at_once=True)
    assert clock.slept[-1] == 6.4  # at once: from the start
    health.failed(at_once=True)
    assert clock.slept[-1] == 0.8
    clock.now += kubewatch.BACKOFF_RESET
    health.failed(at_once=False)  # a busy server: not at once
    assert clock.slept[-1] == 0.8
    health.failed(at_once=False, most=0.5)
    assert clock.slept[-1] == 0.5


class Dripping:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def read1(self, _size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


def test_lines_are_split_across_reads_and_bounded() -> None:
    later = time.monotonic() + 60
    reads = Dripping([b'{"a":', b"1}\n\n", b'{"b":2}'])
    assert list(stream_lines(reads, later, "the test server", 100)) == [b'{"a":1}', b'{"b":2}']
    endless = Dripping([b"x" * 60, b"x" * 60])
    with pytest.raises(ClusterAccessError, match="larger than"):
        list(stream_lines(endless, later, "the test server", 100))
