"""TCP connections parked before their server's credentials are known (pool.park, for
warmstart.py): taken by the connections made to that server next, each by one alone, and
never one the server has closed or one parked too long ago."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
from support.loopback import QuietHandler, serving

from kubectl_machinepool.kube import pool
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.interruptible import timeouts
from kubectl_machinepool.kube.settings import Settings


class _Handler(QuietHandler):
    protocol_version = "HTTP/1.1"
    accepted: ClassVar[list[int]]
    asked_on: ClassVar[list[int]]
    hold: ClassVar[threading.Barrier | None] = None  # answers once this many are asked

    def setup(self) -> None:
        super().setup()
        self.accepted.append(self.client_address[1])

    def do_GET(self) -> None:
        self.asked_on.append(self.client_address[1])
        if self.hold is not None:
            self.hold.wait(10)
        self.reply(200, b"{}")


@pytest.fixture
def server() -> Iterator[tuple[type[_Handler], str]]:
    handler = type("Handler", (_Handler,), {"accepted": [], "asked_on": []})
    with serving(handler) as served:
        yield handler, f"http://127.0.0.1:{served.server_address[1]}"
    for waiting in pool._parked.values():
        for _, sock in waiting:
            sock.close()
    pool._parked.clear()


def parked(url: str, count: int) -> None:
    pool.park(url, count, timeouts(5.0))
    deadline = time.monotonic() + 10
    while sum(len(v) for v in pool._parked.values()) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def kube_for(url: str) -> Kube:
    return Kube(Connection(Settings(url), "x", "default", url), 5.0)


def test_connections_made_at_once_each_take_a_parked_one(server) -> None:
    handler, url = server
    handler.hold = threading.Barrier(3)
    parked(url, 3)
    with kube_for(url) as kube:
        threads = [threading.Thread(target=kube.request, args=("GET", "/x")) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert len(handler.accepted) == 3  # no connection of their own
    assert sorted(set(handler.asked_on)) == sorted(handler.accepted)


def test_a_parked_connection_too_old_or_closed_is_not_taken(
    server, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler, url = server
    parked(url, 1)
    monkeypatch.setattr(pool, "PARKED_FOR", 0.0)
    with kube_for(url) as kube:
        kube.request("GET", "/x")
    assert len(handler.accepted) == 2
    assert handler.asked_on == handler.accepted[1:]
    assert not pool._parked[("127.0.0.1", int(url.rsplit(":", 1)[1]))]  # closed, not kept


def test_another_server_does_not_take_them(server) -> None:
    handler, url = server
    parked(url.replace("127.0.0.1", "localhost"), 1)
    with kube_for(url) as kube:
        kube.request("GET", "/x")
    assert handler.asked_on == handler.accepted[1:]  # its own connection
