"""API servers that never answer, on loopback, for the tests of bounded waiting: each takes what
a client sends and says nothing back, from the stage a test names on.

- "connect": a listener whose queue of connections is full, so the kernel drops every new SYN:
  connecting never ends (Linux's listen queue, as a host behind a dropping firewall).
- "handshake": TCP connections taken and held, not a byte sent: the TLS handshake never ends.
- "response": TLS completed with a certificate of its own CA (in the kubeconfig it writes), each
  request read and never answered.

A black hole lives until its `with` ends, and at most `lifetime` seconds: its threads are
daemons that poll, so it goes with the test run at the latest.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .pki import CertificateAuthority

Stage = Literal["connect", "handshake", "response"]
# Longer than any test waits for a bound to pass; a test that hangs still ends.
LIFETIME = 120.0
POLL = 0.1
# Connections made to fill a "connect" black hole's queue before giving up on filling it.
FILLERS = 8


@dataclass
class BlackHole:
    url: str
    ca_pem: bytes
    # The TCP connections it took: a client that tried again shows here.
    taken: list[socket.socket] = field(default_factory=list)

    def kubeconfig_dict(self, context: str = "mgmt") -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "hole",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": "user", "user": {"token": "never-sent"}}],
            "contexts": [{"name": context, "context": {"cluster": "hole", "user": "user"}}],
            "current-context": context,
        }

    def write_kubeconfig(self, path: Path, context: str = "mgmt") -> Path:
        path.write_text(yaml.safe_dump(self.kubeconfig_dict(context)))
        return path


class _Running:
    """A listener silent from its stage on, and every socket it holds, until stop()."""

    def __init__(self, stage: Stage, tls: ssl.SSLContext, lifetime: float) -> None:
        self.stage = stage
        self.tls = tls
        self.deadline = time.monotonic() + lifetime
        self.done = threading.Event()
        self.listener = socket.create_server(
            ("127.0.0.1", 0), backlog=0 if stage == "connect" else 64
        )
        self.held: list[socket.socket] = []
        self.threads: list[threading.Thread] = []

    def over(self) -> bool:
        return self.done.is_set() or time.monotonic() > self.deadline

    def start(self, hole: BlackHole) -> None:
        if self.stage == "connect":
            self.held += _fill(self.listener.getsockname())
        else:
            self._thread(self._take, hole)

    def stop(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(10)
        for sock in [*self.held, self.listener]:
            sock.close()

    def _thread(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _take(self, hole: BlackHole) -> None:
        self.listener.settimeout(POLL)
        while not self.over():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            hole.taken.append(conn)
            self.held.append(conn)
            if self.stage == "response":
                self._thread(self._hold, conn)

    def _hold(self, conn: socket.socket) -> None:
        """Complete TLS, then read whatever comes and answer nothing."""
        with contextlib.suppress(OSError):
            conn.settimeout(max(self.deadline - time.monotonic(), POLL))
            sock = self.tls.wrap_socket(conn, server_side=True)
            self.held.append(sock)
            sock.settimeout(POLL)
            while not self.over():
                try:
                    if not sock.recv(1 << 16):
                        return  # the client gave up
                except TimeoutError:
                    continue


@contextmanager
def black_hole(stage: Stage, directory: Path, lifetime: float = LIFETIME) -> Iterator[BlackHole]:
    """A server silent from stage on; directory holds its certificate and key."""
    authority, tls = loopback_tls(directory, "black-hole")
    running = _Running(stage, tls, lifetime)
    hole = BlackHole(f"https://127.0.0.1:{running.listener.getsockname()[1]}", authority.pem)
    try:
        running.start(hole)
        yield hole
    finally:
        running.stop()


def loopback_tls(directory: Path, name: str) -> tuple[CertificateAuthority, ssl.SSLContext]:
    """A server's TLS context for 127.0.0.1, its certificate from a CA of its own (whose PEM a
    client trusts), the files in directory."""
    authority = CertificateAuthority(f"{name}-ca")
    issued = authority.issue(name, server_names=("127.0.0.1",))
    (directory / f"{name}.crt").write_bytes(issued.cert)
    (directory / f"{name}.key").write_bytes(issued.key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / f"{name}.crt", directory / f"{name}.key")
    return authority, context


def _fill(address: tuple[str, int]) -> list[socket.socket]:
    """Connections that fill a listen queue nobody accepts from, up to the first that is not
    taken: from then on the kernel drops each SYN, and a connect waits for as long as it may."""
    fillers = []
    for _ in range(FILLERS):
        try:
            fillers.append(socket.create_connection(address, timeout=1.0))
        except TimeoutError:
            return fillers
    for sock in fillers:
        sock.close()
    raise RuntimeError(f"the listen queue of {address} did not fill after {FILLERS} connections")
