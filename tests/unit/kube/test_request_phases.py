"""Every phase of a request has its bound (interruptible.timeouts), and a request that passes one
says which, naming the server and the context: against black holes on loopback (support.
blackhole), straight and through a proxy, with --request-timeout's bound short. No timing
assertions: what is checked is what the error says and how many connections were made.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import pytest
from support.blackhole import BlackHole, Stage, black_hole, loopback_tls
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import MachinePoolError, UnreachableError
from kubectl_machinepool.kube.apierrors import STALLS, duration
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection, connection_from_dict
from kubectl_machinepool.kube.interruptible import SLICE, Phase, Timeouts, timeouts
from kubectl_machinepool.kube.resource import NODES
from kubectl_machinepool.kube.settings import Settings

# --request-timeout 500ms: every phase bounded by it.
SHORT = 0.5


def test_connecting_and_the_handshake_keep_kubectls_bounds_without_a_request_timeout() -> None:
    assert timeouts(None) == Timeouts(connect=10.0, handshake=10.0, response=90.0)


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(0.5, Timeouts(0.5, 0.5, 0.5)), (10.0, Timeouts(10, 10, 10)), (300, Timeouts(10, 10, 300))],
)
def test_a_request_timeout_bounds_every_phase_and_the_handshake_at_most_10s(
    limit: float, expected: Timeouts
) -> None:
    assert timeouts(limit) == expected


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.3, "300ms"), (1, "1s"), (1.5, "1.5s"), (10, "10s"), (90, "1m30s"), (3600, "1h0m0s")],
)
def test_bounds_are_shown_as_kubectl_takes_them(seconds: float, shown: str) -> None:
    assert duration(seconds) == shown


@pytest.fixture(autouse=True)
def no_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def _failure(connection: Connection) -> MachinePoolError:
    with pytest.raises(MachinePoolError) as raised, Kube(connection, SHORT) as kube:
        kube.request("GET", "/api/v1/nodes")
    return raised.value


@pytest.mark.parametrize(
    ("stage", "phase", "connections"),
    [("connect", "connect", 0), ("handshake", "handshake", 1), ("response", "response", 1)],
)
def test_each_phase_that_stalls_is_named_with_the_server_and_the_context(
    tmp_path: Path, stage: Stage, phase: Phase, connections: int
) -> None:
    with black_hole(stage, tmp_path) as hole:
        error = _failure(connection_from_dict(hole.kubeconfig_dict("mgmt"), "test"))
        taken = len(hole.taken)
    what, hint = STALLS[phase]
    assert isinstance(error, UnreachableError)
    assert error.message == f"the API server of context 'mgmt' ({hole.url}) {what} within 500ms"
    assert error.hint == hint
    assert taken == connections  # one try, not a wait multiplied


@pytest.mark.parametrize(("stage", "target"), [("connect", "http"), ("handshake", "https")])
def test_a_proxy_that_stalls_is_named(tmp_path: Path, stage: Stage, target: str) -> None:
    """A proxy that takes no connection, or no CONNECT: urllib3 calls the second a read
    timeout."""
    with black_hole(stage, tmp_path) as proxy:
        settings = Settings(f"{target}://api.invalid", proxy_url=_plain_url(proxy))
        error = _failure(Connection(settings, "x", "default", settings.host))
    assert error.message == (
        f"the API server of context 'x' ({target}://api.invalid) could not be reached through "
        "the proxy within 500ms"
    )


@pytest.mark.parametrize(
    ("stage", "said"),
    [("handshake", "could not be reached through the proxy"), ("response", "did not answer")],
)
def test_a_server_that_stalls_behind_a_working_proxy(
    tmp_path: Path, stage: Stage, said: str
) -> None:
    """Through a tunnel, the TLS handshake is part of urllib3's connecting; the answer is not."""
    with black_hole(stage, tmp_path) as hole, tunnelling() as proxy:
        settings = Settings(hole.url, ca_data=hole.ca_pem, proxy_url=proxy)
        error = _failure(Connection(settings, "mgmt", "default", hole.url))
    assert error.message == f"the API server of context 'mgmt' ({hole.url}) {said} within 500ms"


def test_a_handshake_through_a_tunnel_meets_its_own_bound_not_a_slice(tmp_path: Path) -> None:
    """The proxy's answer to CONNECT is read in slices (interruptible.py); the handshake after
    it once inherited the slice as its socket's timeout, and failed whenever the server's
    first TLS bytes took longer than SLICE to come (a far server behind a corporate proxy)."""
    authority, context = loopback_tls(tmp_path, "api")

    class Nodes(QuietHandler):
        def do_GET(self) -> None:
            self.reply(200, b'{"kind": "NodeList", "items": [], "metadata": {}}')

    with serving(Nodes, context) as server, tunnelling(first_bytes_after=4 * SLICE) as proxy:
        url = f"https://127.0.0.1:{server.server_address[1]}"
        settings = Settings(url, ca_data=authority.pem, proxy_url=proxy)
        with Kube(Connection(settings, "x", "default", url), 30.0) as kube:
            assert kube.list(NODES, None) == []


def test_a_read_tried_again_says_how_many_times() -> None:
    """Each try of a read that keeps being dropped waits its own bounds: the error counts them."""
    asked: list[str] = []

    class Dropping(QuietHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.close_connection = True  # no status line: the client sees the connection end

    with serving(Dropping) as server:
        settings = Settings(f"http://127.0.0.1:{server.server_address[1]}")
        error = _failure(Connection(settings, "x", "default", settings.host))
    assert error.message.endswith("(tried 4 times)"), error.message
    assert len(asked) == 4


def _plain_url(hole: BlackHole) -> str:
    return hole.url.replace("https://", "http://")


@contextmanager
def tunnelling(first_bytes_after: float = 0.0) -> Iterator[str]:
    """An HTTP proxy that answers CONNECT and relays bytes both ways, nothing else; the server's
    first bytes (its side of the TLS handshake) held first_bytes_after seconds."""
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def relay(source: socket.socket, sink: socket.socket, hold: float = 0.0) -> None:
        with suppress(OSError):
            if data := source.recv(1 << 16):
                time.sleep(hold)
                sink.sendall(data)
            while data := source.recv(1 << 16):
                sink.sendall(data)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def serve(client: socket.socket) -> None:
        with closing(client):
            head = b""
            while b"\r\n\r\n" not in head:
                if not (data := client.recv(4096)):
                    return
                head += data
            host, port = head.split(b" ")[1].decode().rsplit(":", 1)
            with closing(socket.create_connection((host, int(port)))) as upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                back = (upstream, client, first_bytes_after)
                other = threading.Thread(target=relay, args=back, daemon=True)
                other.start()
                relay(client, upstream)
                other.join(10)

    def accept() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            with suppress(TimeoutError):
                client, _ = listener.accept()
                threading.Thread(target=serve, args=(client,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join(10)
        listener.close()
