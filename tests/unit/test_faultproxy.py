"""The fault-injecting proxy itself, in front of a tiny HTTPS echo server of this test's own."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.controlplane import User
from support.faultproxy import STATUS_FAULTS, Fault, FaultProxy, Injection, Paging, Upstream
from support.pki import CertificateAuthority, write_private

from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube


@dataclass(frozen=True)
class Echo:
    port: int
    ca: CertificateAuthority
    client_ca: CertificateAuthority
    # (method, path, body, client certificate CN) of every request the echo server answered.
    seen: list[tuple[str, str, bytes, str]]


class _EchoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the API server
    server: Any

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        peer = self.connection.getpeercert()  # type: ignore[attr-defined]
        subject = dict(pair[0] for pair in peer["subject"])
        self.server.seen.append((self.command, self.path, body, subject["commonName"]))
        answer = json.dumps({"method": self.command, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def echo(tmp_path: Path) -> Iterator[Echo]:
    ca, client_ca = CertificateAuthority("echo-ca"), CertificateAuthority("echo-client-ca")
    serving = ca.issue("echo", server_names=("127.0.0.1",))
    cert = write_private(tmp_path / "echo.crt", serving.cert)
    key = write_private(tmp_path / "echo.key", serving.key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    context.load_verify_locations(cadata=client_ca.pem.decode())
    context.verify_mode = ssl.CERT_REQUIRED
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    seen: list[tuple[str, str, bytes, str]] = []
    server.seen = seen  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield Echo(server.server_address[1], ca, client_ca, seen)
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def user(tmp_path: Path, echo: Echo) -> User:
    issued = echo.client_ca.issue("proxy-user")
    cert = write_private(tmp_path / "user.crt", issued.cert)
    key = write_private(tmp_path / "user.key", issued.key)
    return User("proxy-user", tmp_path / "user.kubeconfig", cert, key)


@pytest.fixture
def proxy(tmp_path: Path, echo: Echo, user: User) -> Iterator[FaultProxy]:
    context = ssl.create_default_context(cadata=echo.ca.pem.decode())
    context.load_cert_chain(str(user.cert), str(user.key))
    # Closed before the echo server (fixture order), so no upstream connection outlives it.
    with FaultProxy(Upstream("127.0.0.1", echo.port, context), tmp_path / "proxy") as started:
        yield started


def client(proxy: FaultProxy, timeout: float = 10) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(proxy.ca_file))
    return http.client.HTTPSConnection("127.0.0.1", proxy.port, timeout=timeout, context=context)


def call(
    conn: http.client.HTTPSConnection, method: str, target: str, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn.request(method, target, body=body, headers={"Authorization": "Bearer not-forwarded"})
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_keep_alive_requests_are_forwarded_counted_and_recorded(proxy, echo) -> None:
    proxy.arm()
    conn = client(proxy)
    try:
        assert call(conn, "GET", "/apis?limit=2")[0] == 200
        sock = conn.sock
        status, _, body = call(conn, "PATCH", "/x/y", b'{"spec": {"replicas": 1}}')
        assert (status, json.loads(body)) == (200, {"method": "PATCH", "path": "/x/y"})
        assert call(conn, "DELETE", "/x/y", b"{}")[0] == 200
        assert conn.sock is sock  # one connection carried all three
    finally:
        conn.close()
    assert [(s.index, s.method, s.target) for s in proxy.log] == [
        (1, "GET", "/apis?limit=2"),
        (2, "PATCH", "/x/y"),
        (3, "DELETE", "/x/y"),
    ]
    assert all(s.forwarded and s.upstream_status == 200 and s.fault is None for s in proxy.log)
    assert proxy.log[0].params == {"limit": ["2"]}
    # The proxy authenticates upstream with the user's certificate; the client's own
    # Authorization header stays on the first hop.
    assert echo.seen == [
        ("GET", "/apis?limit=2", b"", "proxy-user"),
        ("PATCH", "/x/y", b'{"spec": {"replicas": 1}}', "proxy-user"),
        ("DELETE", "/x/y", b"{}", "proxy-user"),
    ]
    assert proxy.errors == []


@pytest.mark.parametrize("fault", sorted(STATUS_FAULTS, key=lambda f: f.value))
def test_status_faults_answer_without_forwarding(proxy, echo, fault) -> None:
    proxy.arm(Injection(fault, index=2))
    conn = client(proxy)
    try:
        assert call(conn, "GET", "/one")[0] == 200
        status, headers, body = call(conn, "GET", "/two?continue=abc")
        third = call(conn, "GET", "/three")  # the connection stays usable
    finally:
        conn.close()
    document = json.loads(body)
    assert status == int(fault.value) == document["code"]
    assert document["kind"] == "Status"
    assert document["status"] == "Failure"
    expected_reason = {
        Fault.FORBIDDEN: "Forbidden",
        Fault.NOT_FOUND: "NotFound",
        Fault.CONFLICT: "Conflict",
        Fault.GONE: "Expired",
        Fault.TOO_MANY_REQUESTS: "TooManyRequests",
        Fault.SERVER_ERROR: "InternalError",
    }
    assert document["reason"] == expected_reason[fault]
    assert ("Retry-After" in headers) == (fault is Fault.TOO_MANY_REQUESTS)
    if fault is Fault.TOO_MANY_REQUESTS:
        assert headers["Retry-After"] == "1"
    assert third[0] == 200
    assert [path for _, path, _, _ in echo.seen] == ["/one", "/three"]
    assert proxy.fired is not None
    assert (proxy.fired.index, proxy.fired.fault, proxy.fired.forwarded) == (2, fault, False)


def test_reset_before_forwarding_reaches_nothing(proxy, echo) -> None:
    proxy.arm(Injection(Fault.RESET_BEFORE, index=1))
    conn = client(proxy)
    try:
        with pytest.raises(ConnectionResetError):
            call(conn, "PATCH", "/x", b"{}")
    finally:
        conn.close()
    assert echo.seen == []
    assert proxy.log[0].fault is Fault.RESET_BEFORE
    assert not proxy.log[0].forwarded


def test_reset_after_forwarding_loses_only_the_answer(proxy, echo) -> None:
    proxy.arm(Injection(Fault.RESET_AFTER, index=1))
    conn = client(proxy)
    try:
        with pytest.raises(ConnectionResetError):
            call(conn, "DELETE", "/x", b"{}")
    finally:
        conn.close()
    assert echo.seen == [("DELETE", "/x", b"{}", "proxy-user")]
    assert proxy.log[0].forwarded
    assert proxy.log[0].upstream_status == 200


def test_a_stalled_request_times_out_the_client_and_not_the_proxy(tmp_path, echo, user) -> None:
    context = ssl.create_default_context(cadata=echo.ca.pem.decode())
    context.load_cert_chain(str(user.cert), str(user.key))
    proxy = FaultProxy(Upstream("127.0.0.1", echo.port, context), tmp_path / "stall").start()
    proxy.arm(Injection(Fault.STALL, index=1))
    conn = client(proxy, timeout=0.3)
    try:
        with pytest.raises(TimeoutError):
            call(conn, "PUT", "/scale", b"{}")
    finally:
        conn.close()
        other = client(proxy, timeout=0.3)
        try:
            # A second stalled connection that is still open when the proxy closes.
            proxy.arm(Injection(Fault.STALL, index=1))
            with pytest.raises(TimeoutError):
                call(other, "GET", "/held")
            proxy.close()  # raises if a proxy thread is still running
        finally:
            other.close()
    assert echo.seen == []


def test_a_stall_after_forwarding_holds_only_the_answer(proxy, echo) -> None:
    proxy.arm(Injection(Fault.STALL_AFTER, index=1))
    conn = client(proxy, timeout=0.3)
    try:
        with pytest.raises(TimeoutError):
            call(conn, "PUT", "/scale", b"{}")
    finally:
        conn.close()
    assert echo.seen == [("PUT", "/scale", b"{}", "proxy-user")]
    assert proxy.log[0].forwarded
    proxy.arm()  # lets the held connection go


def test_a_late_write_reaches_the_server_only_when_delivered(proxy, echo) -> None:
    proxy.arm(Injection(Fault.LATE, index=1))
    conn = client(proxy, timeout=0.3)
    try:
        with pytest.raises(TimeoutError):
            call(conn, "DELETE", "/x", b"{}")
    finally:
        conn.close()
    reader = client(proxy)
    try:
        assert call(reader, "GET", "/x")[0] == 200  # a read does not let LATE go
    finally:
        reader.close()
    assert echo.seen == [("GET", "/x", b"", "proxy-user")]
    [late] = proxy.deliver_late()
    assert (late.index, late.forwarded, late.upstream_status) == (1, True, 200)
    assert echo.seen[1] == ("DELETE", "/x", b"{}", "proxy-user")
    assert proxy.deliver_late() == []


def test_a_late_after_read_write_lands_between_a_read_and_what_follows(proxy, echo) -> None:
    proxy.arm(Injection(Fault.LATE_AFTER_READ, index=1))
    conn = client(proxy, timeout=0.3)
    try:
        with pytest.raises(TimeoutError):
            call(conn, "PUT", "/pools/p/scale", b"{}")
    finally:
        conn.close()
    reader = client(proxy)
    try:
        assert call(reader, "GET", "/pools/other")[0] == 200  # another object's read
        assert call(reader, "GET", "/pools/p")[0] == 200  # the scaled object's read
        assert call(reader, "PATCH", "/pools/p", b"{}")[0] == 200  # the fence, say
    finally:
        reader.close()
    assert [(method, path) for method, path, _, _ in echo.seen] == [
        ("GET", "/pools/other"),
        ("GET", "/pools/p"),
        ("PUT", "/pools/p/scale"),
        ("PATCH", "/pools/p"),
    ]


def test_a_predicate_picks_the_first_match_only(proxy, echo) -> None:
    proxy.arm(Injection(Fault.SERVER_ERROR, match=lambda seen: seen.method == "PATCH"))
    conn = client(proxy)
    try:
        codes = [
            call(conn, m, "/p", b"{}" if m != "GET" else None)[0] for m in ("GET", "PATCH", "PATCH")
        ]
    finally:
        conn.close()
    assert codes == [200, 500, 200]
    assert proxy.fired is not None
    assert proxy.fired.index == 2
    proxy.arm()  # a new run counts from 1, records only
    assert proxy.log == []
    assert proxy.fired is None


def test_paging_asks_upstream_for_smaller_pages_and_records_what_the_client_sent(
    proxy, echo
) -> None:
    proxy.arm(paging=Paging(1, match=lambda seen: "/namespaces/" in seen.path))
    conn = client(proxy)
    try:
        for target in (
            "/api/v1/namespaces/n/pods?limit=500&labelSelector=a%2Fb",
            "/api/v1/nodes?limit=500",
        ):
            call(conn, "GET", target)
    finally:
        conn.close()
    assert [path for _, path, _, _ in echo.seen] == [
        "/api/v1/namespaces/n/pods?limit=1&labelSelector=a%2Fb",
        "/api/v1/nodes?limit=500",
    ]
    assert proxy.log[0].params == {"limit": ["500"], "labelSelector": ["a/b"]}


def test_arrival_events_fire_when_the_request_arrives(proxy) -> None:
    proxy.arm()
    second = proxy.arrival_of(2)
    puts = proxy.arrival(lambda seen: seen.method == "PUT")
    conn = client(proxy)
    try:
        call(conn, "GET", "/a")
        assert not second.is_set()
        call(conn, "PUT", "/b", b"{}")
    finally:
        conn.close()
    assert second.is_set()
    assert puts.is_set()


def test_the_plugin_client_reaches_the_upstream_through_the_kubeconfig(
    proxy, echo, user, tmp_path
) -> None:
    """The plugin's own transport (connections kept alive) through the generated kubeconfig."""
    proxy.arm()
    path = proxy.write_kubeconfig(tmp_path / "proxy.kubeconfig", user)
    assert proxy.kubeconfig_dict(user)["clusters"][0]["cluster"]["server"] == proxy.url
    with Kube.connect(AccessOptions(kubeconfig=str(path), request_timeout=10)) as kube:
        first = kube.request("GET", "/apis/example.com/v1/things", {"limit": "1"})
        second = kube.request("PATCH", "/apis/example.com/v1/things/a", body={"a": 1})
    assert first == {"method": "GET", "path": "/apis/example.com/v1/things?limit=1"}
    assert second["method"] == "PATCH"
    assert [(s.method, s.target) for s in proxy.log] == [
        ("GET", "/apis/example.com/v1/things?limit=1"),
        ("PATCH", "/apis/example.com/v1/things/a"),
    ]
    assert [body for _, _, body, _ in echo.seen] == [b"", b'{"a": 1}']
