"""Answers asked for gzip (transport.py) and inflated as they come (pool.py): what the client asks,
what it makes of good, hostile and broken gzip, and that the size bounds still hold. Against a
loopback HTTP server of this test's own; the real API server's gzip is in
tests/integration/test_access.py."""

from __future__ import annotations

import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import ClusterAccessError, UnreachableError
from kubectl_machinepool.kube.answers import MAX_ANSWER
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection, connection_from_dict
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.settings import Settings

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps")
ITEMS = [{"metadata": {"name": f"c{i}"}, "data": {"d": "x" * 3000}} for i in range(200)]
LIST = json.dumps({"kind": "ConfigMapList", "metadata": {}, "items": ITEMS}).encode()


@dataclass
class Served:
    """What the server sends next (body and Content-Encoding), and what it was sent."""

    body: bytes = b""
    encoding: str | None = "gzip"
    chunked: bool = False
    asked: list[list[str]] = field(default_factory=list)
    peers: set[int] = field(default_factory=set)


class _Handler(QuietHandler):
    protocol_version = "HTTP/1.1"
    served: ClassVar[Served]
    lock: ClassVar[threading.Lock]

    def do_GET(self) -> None:
        served = self.served
        with self.lock:
            served.asked.append(self.headers.get_all("Accept-Encoding") or [])
            served.peers.add(self.client_address[1])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if served.encoding:
            self.send_header("Content-Encoding", served.encoding)
        if served.chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for at in range(0, len(served.body), 4096):
                piece = served.body[at : at + 4096]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(served.body)))
        self.end_headers()
        self.wfile.write(served.body)


@pytest.fixture
def served() -> Iterator[tuple[Served, str]]:
    state = Served()
    handler = type("Handler", (_Handler,), {"served": state, "lock": threading.Lock()})
    with serving(handler) as server:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"


def kube_for(url: str, cluster: dict[str, object] | None = None) -> Kube:
    if cluster is None:
        return Kube(Connection(Settings(url), "x", "default", url), 10.0)
    if cluster.get("proxy-url"):  # the proxy answers for the server itself
        settings = Settings("http://192.0.2.1:6443", proxy_url=url)
        return Kube(Connection(settings, "x", "default", settings.host), 10.0)
    document = {
        "clusters": [{"name": "c", "cluster": {"server": url, **cluster}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    return Kube(connection_from_dict(document, "test"), 10.0)


@pytest.mark.parametrize(
    ("chunked", "proxied"),
    [(False, False), (True, False), (False, True)],
    ids=["content-length", "chunked", "through-a-proxy"],
)
def test_gzip_is_asked_for_and_a_list_inflated_on_a_connection_used_again(
    served, chunked: bool, proxied: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = served
    state.body, state.chunked = gzip.compress(LIST), chunked
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    with kube_for(url, {"proxy-url": url} if proxied else None) as kube:
        first = kube.list(CONFIGMAPS, "ns")
        state.body = gzip.compress(json.dumps({"kind": "ConfigMap", "data": {"k": "v"}}).encode())
        one = kube.request("GET", "/api/v1/namespaces/ns/configmaps/c1")
    assert [item["data"] for item in first] == [item["data"] for item in ITEMS]
    assert one["data"] == {"k": "v"}
    assert state.asked == [["gzip"], ["gzip"]]  # once each: http.client's identity left out
    assert len(state.peers) == 1  # the gzip answer was read to its end


def test_disable_compression_in_the_kubeconfig_asks_for_identity(served) -> None:
    state, url = served
    state.body, state.encoding = LIST, None
    with kube_for(url, {"disable-compression": True}) as kube:
        assert len(kube.list(CONFIGMAPS, "ns")) == len(ITEMS)
    assert state.asked == [["identity"]]


def test_a_gzip_bomb_meets_the_answer_bound_without_inflating_past_it(served) -> None:
    """A few hundred KiB that inflate to 96 MiB: refused at MAX_ANSWER (64 MiB), as a plain
    answer that size is."""
    state, url = served
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    state.body = b"".join(bomb.compress(zeros) for _ in range(96)) + bomb.flush()
    assert len(state.body) < 1 << 20
    with kube_for(url) as kube, pytest.raises(ClusterAccessError) as raised:
        kube.request("GET", "/api/v1/namespaces/ns/configmaps/c1")
    assert f"larger than {MAX_ANSWER >> 20} MiB" in raised.value.message


@pytest.mark.parametrize(
    ("body", "encoding", "said"),
    [
        (b"\x1f\x8b\x08\x00garbage that is not deflate", "gzip", "gzip does not inflate"),
        (gzip.compress(LIST), "br", "an answer in 'br', which was not asked for"),
    ],
    ids=["corrupt", "not-asked"],
)
def test_an_answer_that_cannot_be_inflated_is_one_error_line(
    served, body: bytes, encoding: str, said: str
) -> None:
    state, url = served
    state.body, state.encoding = body, encoding
    with kube_for(url) as kube, pytest.raises(ClusterAccessError) as raised:
        kube.list(CONFIGMAPS, "ns")
    assert said in raised.value.message
    assert "disable-compression" in (raised.value.hint or "")


def test_a_gzip_stream_cut_short_is_a_dropped_answer_not_a_short_list(served) -> None:
    state, url = served
    whole = gzip.compress(LIST)
    state.body = whole[: len(whole) // 2]
    with kube_for(url) as kube, pytest.raises(UnreachableError) as raised:
        kube.request("GET", "/api/v1/namespaces/ns/configmaps/c1")
    assert "tried" in raised.value.message  # retried as a dropped connection is


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=20000), level=st.integers(0, 9), sizes=st.lists(st.integers(1, 5000), min_size=1, max_size=8))  # fmt: skip
def test_inflating_in_pieces_of_any_size_gives_the_bytes_sent(
    data: bytes, level: int, sizes: list[int]
) -> None:
    """read1 hands out at most the size asked, and all of it in order, however the compressed
    bytes come."""
    from kubectl_machinepool.kube.pool import Answer

    compressed = gzip.compress(data, level)

    class Raw:
        status, length = 200, 0
        headers: ClassVar[dict[str, str]] = {"Content-Encoding": "gzip"}
        at = 0

        def read1(self, size: int) -> bytes:
            piece = compressed[self.at : self.at + min(size, 777)]
            self.at += len(piece)
            return piece

        def close(self) -> None:
            pass

    answer = Answer(Raw(), lambda _reusable: None)  # type: ignore[arg-type]
    out, turn = b"", 0
    while piece := answer.read1(sizes[turn % len(sizes)]):
        assert len(piece) <= sizes[turn % len(sizes)]
        out, turn = out + piece, turn + 1
    assert out == data
