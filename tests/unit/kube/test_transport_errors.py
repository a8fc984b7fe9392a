"""Transport failures become one-line errors with hints, against real sockets (no API server needed)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
import yaml
from support.loopback import QuietHandler, serving
from support.run import run_cli

from kubectl_machinepool.base.errors import UnreachableError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.resource import NODES
from kubectl_machinepool.kube.settings import Settings


def kubeconfig_for(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": f"https://127.0.0.1:{port}",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "mgmt", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "mgmt",
            }
        )
    )
    return path


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_refused(
    tmp_path: Path, closed_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(capsys, "list", "--kubeconfig", str(kubeconfig_for(tmp_path, closed_port)))
    assert result.code == 1
    assert result.err.splitlines() == [
        f"error: cannot reach the API server of context 'mgmt' (https://127.0.0.1:{closed_port}): "
        "Connection refused",
        "hint: check --context and --kubeconfig, and that the cluster is up",
    ]


def test_request_timeout_applies(
    tmp_path: Path, silent_server: int, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = str(kubeconfig_for(tmp_path, silent_server))
    result = run_cli(capsys, "list", "--kubeconfig", kubeconfig, "--request-timeout", "300ms")
    assert result.code == 1
    assert result.err.splitlines() == [
        f"error: the API server of context 'mgmt' (https://127.0.0.1:{silent_server}) did not "
        "complete the TLS handshake within 300ms",
        "hint: something takes connections there but does not speak TLS: check the server's URL "
        "and port in the kubeconfig, and any VPN or load balancer in between",
    ]


@pytest.mark.parametrize(
    ("proxy", "said"),
    [
        ("closed_port", "cannot reach the API server of context 'x' (http://api.invalid): "),
        ("silent_server", "the API server of context 'x' (http://api.invalid) did not answer"),
    ],
)
def test_a_failing_proxy_is_reported_as_a_failing_server_is(
    proxy: str, said: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a proxy the errors are urllib3's, made the standard library's of their kind."""
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    port = request.getfixturevalue(proxy)
    settings = Settings("http://api.invalid", proxy_url=f"http://127.0.0.1:{port}")
    with (
        pytest.raises(UnreachableError) as err,
        Kube(Connection(settings, "x", "default", settings.host), 0.3) as kube,
    ):
        kube.request("GET", "/api/v1/nodes")
    assert err.value.message.startswith(said)


@pytest.fixture
def login_page() -> Iterator[int]:
    """An HTTP server that answers everything with 200 and a login page, like a misrouted proxy."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.reply(200, b"<html><body>Please sign in</body></html>", "text/html")

    with serving(Handler) as server:
        yield server.server_address[1]


def test_a_server_that_is_not_kubernetes(
    tmp_path: Path, login_page: int, capsys: pytest.CaptureFixture[str]
) -> None:
    config = kubeconfig_for(tmp_path, login_page)
    config.write_text(config.read_text().replace("https://", "http://"))
    result = run_cli(capsys, "list", "--kubeconfig", str(config))
    assert result.code == 1
    assert result.err.splitlines() == [
        f"error: the server of context 'mgmt' (http://127.0.0.1:{login_page}) did not answer "
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools like a Kubernetes API "
        "server",
        "hint: check the server address and any proxy in between",
    ]


@pytest.fixture
def dripping_server() -> Iterator[tuple[int, list[int]]]:
    """Answers 200 at once, then its body one byte every 0.1 s: each read meets its timeout."""
    import time

    sent: list[int] = []

    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(100_000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    sent.append(1)
                    time.sleep(0.1)
            except OSError:
                pass  # the client gave up: what this test wants

    with serving(Handler) as server:
        yield server.server_address[1], sent


def test_a_dripping_answer_meets_the_request_timeout(
    tmp_path: Path, dripping_server: tuple[int, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The timeout bounds the whole answer, not each read: else 100,000 bytes take hours."""
    port, sent = dripping_server
    config = kubeconfig_for(tmp_path, port)
    config.write_text(config.read_text().replace("https://", "http://"))
    result = run_cli(capsys, "list", "--kubeconfig", str(config), "--request-timeout", "1s")
    assert result.code == 1
    assert "did not send its whole answer within 1s" in result.err
    assert len(sent) < 1000  # it stopped reading long before the body was complete


class SteadyHandler(QuietHandler):
    """A list of six Nodes, one every 0.3 s: never silent for long, slow as a whole."""

    def do_GET(self) -> None:
        import time

        items = [json.dumps({"metadata": {"name": f"node-{i}"}}).encode() for i in range(6)]
        body = b'{"kind":"NodeList","items":[' + b",".join(items) + b'],"metadata":{}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        step = len(body) // 6 + 1
        try:
            for start in range(0, len(body), step):
                self.wfile.write(body[start : start + step])
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass  # the client gave up


def _list_nodes(port: int, answer_timeout: float | None) -> list[str]:
    settings = Settings(f"http://127.0.0.1:{port}")
    connection = Connection(settings, "workload", "default", settings.host)
    with Kube(connection, 1.0, answer_timeout=answer_timeout) as kube:
        return [n["metadata"]["name"] for n in kube.list(NODES, None)]


def test_a_long_answer_that_keeps_coming_meets_the_answer_timeout_not_the_request_timeout() -> None:
    """A workload cluster's 5000 Nodes take longer than its 10 s request timeout on a busy
    machine: the request timeout bounds each wait for bytes, the answer timeout the whole."""
    with serving(SteadyHandler) as server:
        port = server.server_address[1]
        assert _list_nodes(port, 30.0) == [f"node-{i}" for i in range(6)]
        with pytest.raises(UnreachableError, match="did not send its whole answer within 1s"):
            _list_nodes(port, None)


def _node_list(count: int) -> bytes:
    items = [{"metadata": {"name": f"node-{i}"}} for i in range(count)]
    return json.dumps({"kind": "NodeList", "items": items, "metadata": {}}).encode()


class KeepAliveHandler(QuietHandler):
    """HTTP/1.1 with Content-Length answers, as the API server sends small ones; the first
    answer of the server's life is cut short when the class says so."""

    protocol_version = "HTTP/1.1"
    cut_first = False
    peers: ClassVar[list[int]] = []

    def do_GET(self) -> None:
        body = _node_list(3)
        first = not self.peers
        self.peers.append(self.client_address[1])
        if first and self.cut_first:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.reply(200, body)


def _kube(port: int) -> Kube:
    settings = Settings(f"http://127.0.0.1:{port}")
    return Kube(Connection(settings, "workload", "default", settings.host), 5.0)


def test_an_answer_read_to_its_end_leaves_its_connection_for_the_next_request() -> None:
    handler = type("Handler", (KeepAliveHandler,), {"peers": []})
    with serving(handler) as server, _kube(server.server_address[1]) as kube:
        for _ in range(3):
            assert len(kube.list(NODES, None)) == 3
            assert kube.request("GET", "/api/v1/nodes")["kind"] == "NodeList"
    assert len(handler.peers) == 6
    assert len(set(handler.peers)) == 1  # one connection carried all six


def test_a_content_length_answer_cut_short_is_asked_again() -> None:
    """http.client's read1 says nothing when the connection ends early: the read must."""
    handler = type("Handler", (KeepAliveHandler,), {"peers": [], "cut_first": True})
    with serving(handler) as server, _kube(server.server_address[1]) as kube:
        assert [n["metadata"]["name"] for n in kube.list(NODES, None)] == [
            "node-0",
            "node-1",
            "node-2",
        ]
    assert len(handler.peers) == 2
