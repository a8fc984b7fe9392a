"""kubewatch over a scripted Kube.stream (our own boundary): what a broken server gets.

The real server's behaviour (restarts, drops, 410) is in tests/integration/test_watch.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubectl_machinepool import kubewatch
from kubectl_machinepool.errors import ClusterAccessError, UnreachableError
from kubectl_machinepool.kube import Resource
from kubectl_machinepool.kubewatch import LISTED, Watch, stream_lines, watch

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

    def stream(self, _path: str, query: dict[str, str], *, window: float) -> Iterator[bytes]:
        self.opened.append({**query, "window": str(window)})
        script = self.connections.pop(0) if self.connections else []
        if isinstance(script, Exception):
            raise script
        yield from script


def line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode()


def cm(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}}


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubewatch.time, "sleep", lambda _seconds: None)


def test_bookmarks_move_the_resume_point_and_are_not_handed_over() -> None:
    kube: Any = Scripted(
        [line("ADDED", cm("a", "11")), line("BOOKMARK", {"metadata": {"resourceVersion": "15"}})],
        [line("MODIFIED", cm("a", "16"))],
    )
    events = watch(kube, SPEC, None, timeout=30)
    assert [k for k, _ in (next(events), next(events), next(events))] == [
        LISTED,
        "ADDED",
        "MODIFIED",
    ]
    assert [q["resourceVersion"] for q in kube.opened] == ["10", "15"]


def test_an_error_event_is_the_matching_error_never_a_traceback() -> None:
    denied = {"kind": "Status", "code": 403, "message": "configmaps is forbidden"}
    kube: Any = Scripted([line("ERROR", denied)])
    with pytest.raises(ClusterAccessError, match="configmaps is forbidden"):
        list(watch(kube, SPEC, "10", timeout=30))
    assert kube.opened[0]["timeoutSeconds"] == kube.opened[0]["window"].removesuffix(".0")


def test_an_answer_unlike_an_api_servers_is_refused() -> None:
    kube: Any = Scripted([b"<html>login</html>"])
    with pytest.raises(ClusterAccessError, match="watch event unlike"):
        list(watch(kube, SPEC, "10", timeout=30))


def test_a_server_that_keeps_dropping_the_watch_is_given_up_on() -> None:
    dropped = UnreachableError("cannot reach the API server: reset")
    kube: Any = Scripted(*[dropped] * 10)
    with pytest.raises(UnreachableError, match="keeps failing: cannot reach"):
        list(watch(kube, SPEC, "10", timeout=30))
    assert len(kube.opened) == kubewatch.WATCH_RETRIES + 1


def test_a_server_that_expires_every_watch_is_not_listed_from_forever() -> None:
    gone = {"kind": "Status", "code": 410, "message": "too old resource version"}
    kube: Any = Scripted(*[[line("ERROR", gone)]] * 10)
    with pytest.raises(UnreachableError, match="expired at once"):
        list(watch(kube, SPEC, "10", timeout=30))


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
