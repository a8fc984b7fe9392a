"""The delay proxy of the latency benchmarks, in front of a small HTTPS server of this test's own:
what it counts, and what it shows of the plugin's own connections (opened ahead, resumed)."""

from __future__ import annotations

import base64
import http.client
import http.server
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.delayproxy import Proxies
from support.loopback import QuietHandler
from support.pki import CertificateAuthority, write_private

from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import connection_from_dict

# Long enough that no pause of a busy machine reorders what waits on what.
RTT = 0.4
BIG = 1 << 19


class _Handler(QuietHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server

    def do_GET(self) -> None:
        if self.path == "/big":
            self.reply(200, b"x" * BIG)
            return
        self.reply(200, b'{"kind": "Status", "items": []}')


@dataclass(frozen=True)
class Served:
    proxies: Proxies
    url: str
    ca: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    ca = CertificateAuthority("delay-test-ca")
    issued = ca.issue("server", server_names=("127.0.0.1",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(
        write_private(tmp_path / "s.crt", issued.cert),
        write_private(tmp_path / "s.key", issued.key),
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    # Each handshake in its connection's thread, not one after another in the accepting one.
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        with Proxies(RTT) as proxies:
            proxy = proxies.add("server", int(server.server_address[1]))
            yield Served(proxies, proxy.url, write_private(tmp_path / "ca.crt", ca.pem))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_a_connection_costs_the_tcp_and_tls_round_trips_then_one_per_request(
    served: Served,
) -> None:
    context = ssl.create_default_context(cafile=str(served.ca))
    port = int(served.url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context)
    for _ in range(3):
        conn.request("GET", "/")
        conn.getresponse().read()
    assert conn.sock is not None
    session = conn.sock.session
    conn.close()
    raw = socket.create_connection(("127.0.0.1", port))
    resumed = context.wrap_socket(raw, server_hostname="127.0.0.1", session=session)
    resumed.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert resumed.recv(65536).startswith(b"HTTP/1.1 200")
    resumed.close()
    run = served.proxies.run()
    counts = run.counts["server"]
    assert (counts.connections, counts.handshakes, counts.resumed, counts.late) == (2, 2, 1, 1)
    # TCP, TLS, three requests; then a connection made after those answers: TCP, TLS, request.
    assert run.depth == 5 + 3


def _kube(url: str, ca: Path) -> Kube:
    config = {
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": url,
                    "certificate-authority-data": base64.b64encode(ca.read_bytes()).decode(),
                },
            }
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    return Kube(connection_from_dict(config, "test"), 10)


def test_connections_opened_ahead_cost_the_first_level_only(served: Served) -> None:
    """As a read plan: connections opened beside the first request, then reads side by side:
    none of them connects after the first answer, and a connection opened later resumes the
    session of those before."""
    with _kube(served.url, served.ca) as kube:
        kube.open_ahead(3)
        kube.request("GET", "/first")
        threads = [
            threading.Thread(target=kube.request, args=("GET", f"/next/{i}")) for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counts = served.proxies.run().counts["server"]
        assert (counts.connections, counts.late, counts.resumed) == (4, 0, 0)
        # Five at once: one more than were opened, made once the first answers brought a ticket.
        threads = [
            threading.Thread(target=kube.request, args=("GET", f"/more/{i}")) for i in range(5)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counts = served.proxies.run().counts["server"]
        assert (counts.connections, counts.late, counts.resumed) == (5, 1, 1)
        # The plan run again (a followed view's next read): its connections are there.
        kube.open_ahead(3)
        kube.request("GET", "/again")
    assert served.proxies.run().counts["server"].connections == 5


def test_a_bandwidth_limit_spreads_an_answer_over_the_time_its_bytes_take(served: Served) -> None:
    """Half a MiB at 8 Mbit/s takes at least half a second on top of the round trips; the
    lower bound only, which no busy machine can break."""
    served.proxies.set_bandwidth(8)
    context = ssl.create_default_context(cafile=str(served.ca))
    conn = http.client.HTTPSConnection("127.0.0.1", int(served.url.rsplit(":", 1)[1]), context=context)  # fmt: skip
    conn.request("GET", "/")
    conn.getresponse().read()  # the connection's round trips paid
    started = time.monotonic()
    conn.request("GET", "/big")
    assert len(conn.getresponse().read()) == BIG
    conn.close()
    assert time.monotonic() - started >= RTT + BIG / 1e6
