"""A loopback TLS proxy in front of the test API server that counts requests and fails one.

The plugin under test talks only to the proxy (its kubeconfig names the proxy and the proxy's
own CA); the proxy forwards each request to the real kube-apiserver with a client certificate.
Every request gets a 1-based index in arrival order, so a test can first learn the clean request
sequence (no injection) and then fail exactly the Nth request, or the first one a predicate
picks, with one fault: an API error answered without forwarding, a connection reset before or
after the server applied the request, a stall past the client's request timeout (before
forwarding, or after the server applied it), or a late delivery: held unanswered until the
client gave up, then sent on to the server (after the command ended, or right after the
client's next read of the same object).

Threads only: one accepting, one per client connection (HTTP/1.1 keep-alive, bodies by
Content-Length), each with its own upstream connection. close() wakes every thread and joins it.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs, parse_qsl, urlencode

import yaml

from .controlplane import APIServer, User
from .pki import CertificateAuthority, write_private

# Headers that belong to one hop (RFC 9110 7.6.1), never passed through; the proxy also speaks
# for itself upstream (Authorization, Host) and frames bodies itself (Content-Length).
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)
_NOT_UPSTREAM = _HOP_BY_HOP | {"authorization", "host"}
UPSTREAM_TIMEOUT = 60.0


class Fault(Enum):
    """What happens to the chosen request."""

    FORBIDDEN = "403"
    NOT_FOUND = "404"
    CONFLICT = "409"
    GONE = "410"  # a list continue token expired: only meaningful on a request with continue=
    TOO_MANY_REQUESTS = "429"
    SERVER_ERROR = "500"
    RESET_BEFORE = "reset-before"  # RST once the request is read; nothing is forwarded
    RESET_AFTER = "reset-after"  # forwarded, the full answer read, then RST to the client
    STALL = "stall"  # never forwarded, never answered, until the proxy is re-armed or closed
    STALL_AFTER = "stall-after"  # forwarded and applied, the answer held like STALL
    # Held past the client's timeout (or its Ctrl-C), never answered, and delivered to the API
    # server later, as a slow server, a busy etcd or a buffering load balancer can:
    LATE = "late"  # when the test calls deliver_late(), after the command has ended
    LATE_AFTER_READ = "late-after-read"  # once the next GET of the same path has been answered


# code, Status reason, message prefix: shaped like the API server's own Status answers.
_STATUS: dict[Fault, tuple[int, str, str]] = {
    Fault.FORBIDDEN: (403, "Forbidden", "forbidden"),
    Fault.NOT_FOUND: (404, "NotFound", "not found"),
    Fault.CONFLICT: (409, "Conflict", "the object has been modified"),
    Fault.GONE: (
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result",
    ),
    Fault.TOO_MANY_REQUESTS: (429, "TooManyRequests", "too many requests, please try again later"),
    Fault.SERVER_ERROR: (500, "InternalError", "Internal error occurred"),
}
STATUS_FAULTS = frozenset(_STATUS)
LATE_FAULTS = frozenset({Fault.LATE, Fault.LATE_AFTER_READ})
_REASON_PHRASE = {
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    410: "Gone",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


@dataclass(frozen=True)
class Seen:
    """One request as it arrived, and what the proxy did with it."""

    index: int
    method: str
    path: str
    query: str
    body: bytes = b""
    fault: Fault | None = None
    forwarded: bool = False
    # The API server's answer when forwarded (also when the client never got it).
    upstream_status: int | None = None

    @property
    def target(self) -> str:
        return self.path + (f"?{self.query}" if self.query else "")

    @property
    def params(self) -> dict[str, list[str]]:
        return parse_qs(self.query)

    @property
    def is_write(self) -> bool:
        return self.method in {"POST", "PUT", "PATCH", "DELETE"}

    def __str__(self) -> str:
        return f"#{self.index} {self.method} {self.target}"


Match = Callable[[Seen], bool]


@dataclass(frozen=True)
class Injection:
    """Fail the request with this index, or else the first one `match` accepts (once per arm;
    with `times`, as many as that: a server answering every watch 410, a stall that holds
    each new connection too)."""

    fault: Fault
    index: int | None = None
    match: Match | None = None
    times: int = 1

    def hits(self, seen: Seen) -> bool:
        if self.index is not None:
            return seen.index == self.index
        return self.match is not None and self.match(seen)


@dataclass(frozen=True)
class Paging:
    """Ask the API server for pages of `limit` items on the lists `match` accepts, whatever
    limit the client asked for. A server may always return fewer items than the limit, with a
    continue token: this makes the client walk continue tokens on a small test cluster."""

    limit: int
    match: Match | None = None  # None: every list

    def applies(self, seen: Seen) -> bool:
        listing = seen.method == "GET" and "limit" in seen.params
        return listing and (self.match is None or self.match(seen))


@dataclass(frozen=True)
class Upstream:
    host: str
    port: int
    context: ssl.SSLContext

    @classmethod
    def of(cls, server: APIServer, user: User) -> Upstream:
        context = ssl.create_default_context(cafile=str(server.ca_file))
        context.load_cert_chain(str(user.cert), str(user.key))
        return cls("127.0.0.1", server.port, context)


@dataclass(frozen=True)
class _Request:
    method: str
    target: str
    headers: http.client.HTTPMessage
    body: bytes


@dataclass
class _Waiter:
    match: Match
    event: threading.Event
    seen: Seen | None = None


@dataclass
class _Held:
    """A LATE request: `deliver` lets it go to the API server, `done` says it got there."""

    seen: Seen
    deliver: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)


class _Connection:
    """One client connection and the upstream connection it forwards over."""

    def __init__(self, tls: ssl.SSLSocket, upstream: Upstream) -> None:
        self.tls = tls
        self.rfile: BinaryIO = tls.makefile("rb")
        self._upstream = upstream
        self._http: http.client.HTTPSConnection | None = None

    def read_request(self) -> _Request | None:
        line = self.rfile.readline(65537)
        if not line:
            return None
        method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        headers = http.client.parse_headers(self.rfile)  # type: ignore[arg-type]
        length = int(headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        return _Request(method, target, headers, body)

    def forward(self, request: _Request) -> tuple[int, str, list[tuple[str, str]], bytes]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_UPSTREAM}
        for attempt in (1, 2):
            fresh = self._http is None
            if self._http is None:
                self._http = http.client.HTTPSConnection(
                    self._upstream.host,
                    self._upstream.port,
                    timeout=UPSTREAM_TIMEOUT,
                    context=self._upstream.context,
                )
            try:
                self._http.request(
                    request.method, request.target, body=request.body or None, headers=headers
                )
                response = self._http.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # The API server closed an idle kept-alive connection: once more on a new one.
                self.close_upstream()
                if fresh or attempt == 2:
                    raise
                continue
            if response.will_close:
                self.close_upstream()
            return response.status, response.reason, response.getheaders(), data
        raise AssertionError("unreachable")

    def respond(
        self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes
    ) -> None:
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{k}: {v}" for k, v in headers if k.lower() not in _HOP_BY_HOP]
        lines.append(f"Content-Length: {len(body)}")
        self.tls.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def wake(self) -> None:
        """Unblock a thread reading this connection (close() alone does not wake a recv), or
        reading the upstream answer (a watch the proxy holds until the server ends it)."""
        with suppress(OSError):
            socket.socket.shutdown(self.tls, socket.SHUT_RDWR)
        upstream = self._http.sock if self._http is not None else None
        if upstream is not None:
            with suppress(OSError):
                socket.socket.shutdown(upstream, socket.SHUT_RDWR)

    def reset(self) -> None:
        """Close with SO_LINGER 0: the kernel sends RST, not FIN, and drops unsent data."""
        with suppress(OSError):
            self.tls.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close()

    def close_upstream(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None

    def close(self) -> None:
        self.close_upstream()
        # The file holds a reference: the socket is only really closed once both are.
        self.rfile.close()
        self.tls.close()


def status_body(code: int, reason: str, message: str, retry_after: object = 1) -> bytes:
    """A Status as the API server sends it; a 429's details repeat its Retry-After when that
    is a number, as the server's own do."""
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if code == 429 and isinstance(retry_after, int):
        status["details"] = {"retryAfterSeconds": retry_after}
    return json.dumps(status).encode()


class FaultProxy:
    """The proxy. Use as a context manager, or start() and close()."""

    def __init__(self, upstream: Upstream, workdir: Path, retry_after: int = 1) -> None:
        self.upstream = upstream
        self.retry_after = retry_after
        workdir.mkdir(parents=True, exist_ok=True)
        self.ca = CertificateAuthority("fault-proxy-ca")
        self.ca_file = write_private(workdir / "fault-proxy-ca.crt", self.ca.pem)
        serving = self.ca.issue("fault-proxy", server_names=("127.0.0.1", "localhost"))
        cert = write_private(workdir / "fault-proxy.crt", serving.cert)
        key = write_private(workdir / "fault-proxy.key", serving.key)
        self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._tls.load_cert_chain(str(cert), str(key))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.5)  # a fallback: close() wakes accept() by shutdown
        self.port = int(self._listener.getsockname()[1])
        self.url = f"https://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._release = threading.Event()
        self._injection: Injection | None = None
        self._paging: Paging | None = None
        self._fired: Seen | None = None
        self._hits = 0
        self._log: list[Seen] = []
        self._waiters: list[_Waiter] = []
        self._held: list[_Held] = []
        self._connections: set[_Connection] = set()
        self._threads: set[threading.Thread] = set()
        # Anything that went wrong inside the proxy itself (not the faults it made on purpose).
        self.errors: list[str] = []
        self._acceptor = threading.Thread(target=self._accept, name="fault-proxy", daemon=True)

    @classmethod
    def for_apiserver(cls, server: APIServer, user: User, workdir: Path) -> FaultProxy:
        return cls(Upstream.of(server, user), workdir)

    # -- control -------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        self._acceptor.start()
        return self

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def arm(self, injection: Injection | None = None, paging: Paging | None = None) -> None:
        """Start a new run: count from 1 again, with this fault (None: record only). Stalled
        requests of the previous run are let go (their connections close unanswered)."""
        with self._lock:
            self._release.set()
            self._release = threading.Event()
            for late in self._held:  # a run that did not deliver them: they go nowhere
                late.deliver.set()
            self._injection = injection
            self._paging = paging
            self._fired = None
            self._hits = 0
            self._log = []
            self._waiters = []

    @property
    def log(self) -> list[Seen]:
        with self._lock:
            return list(self._log)

    @property
    def fired(self) -> Seen | None:
        """The request the fault was applied to, as it ended up (None: not reached)."""
        with self._lock:
            if self._fired is None:
                return None
            return self._log[self._fired.index - 1]

    def arrival(self, match: Match) -> threading.Event:
        """An event set when the first request `match` accepts arrives (before it is handled)."""
        waiter = _Waiter(match, threading.Event())
        with self._lock:
            self._waiters.append(waiter)
        return waiter.event

    def arrival_of(self, index: int) -> threading.Event:
        return self.arrival(lambda seen: seen.index == index)

    def deliver_late(self, timeout: float = UPSTREAM_TIMEOUT) -> list[Seen]:
        """Send every LATE request held so far on to the API server and wait for its answers;
        returns them as forwarded (the answer goes nowhere: the client gave up long ago)."""
        with self._lock:
            held, self._held = self._held, []
        for late in held:
            late.deliver.set()
        for late in held:
            if not late.done.wait(timeout):
                raise RuntimeError(f"fault proxy: {late.seen} was not delivered in {timeout}s")
        with self._lock:
            return [self._log[h.seen.index - 1] for h in held if h.seen.index <= len(self._log)]

    def close(self) -> None:
        self._stopping.set()
        with self._lock:
            self._release.set()
            for late in self._held:
                late.deliver.set()
            connections = list(self._connections)
        for connection in connections:
            connection.wake()
        with suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        if self._acceptor.is_alive():
            self._acceptor.join(10)
        for thread in list(self._threads):
            thread.join(10)
        self._listener.close()
        alive = [t.name for t in (self._acceptor, *self._threads) if t.is_alive()]
        if alive:
            raise RuntimeError(f"fault proxy threads still running: {alive}")

    # -- kubeconfig ------------------------------------------------------------------------------

    def kubeconfig_dict(self, user: User, context: str = "fault-proxy") -> dict[str, Any]:
        """A kubeconfig that reaches the API server only through this proxy."""

        def data(path: Path) -> str:
            return base64.b64encode(path.read_bytes()).decode()

        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "fault-proxy",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": data(self.ca_file),
                    },
                }
            ],
            # The proxy authenticates upstream itself; the certificate is only what a real
            # kubeconfig would carry.
            "users": [
                {
                    "name": user.name,
                    "user": {
                        "client-certificate-data": data(user.cert),
                        "client-key-data": data(user.key),
                    },
                }
            ],
            "contexts": [
                {"name": context, "context": {"cluster": "fault-proxy", "user": user.name}}
            ],
            "current-context": context,
        }

    def write_kubeconfig(self, path: Path, user: User, context: str = "fault-proxy") -> Path:
        return write_private(path, yaml.safe_dump(self.kubeconfig_dict(user, context)).encode())

    # -- serving ---------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                raw, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            raw.settimeout(None)
            thread = threading.Thread(
                target=self._client, args=(raw,), name="fault-proxy-conn", daemon=True
            )
            with self._lock:
                self._threads = {t for t in self._threads if t.is_alive()}
                self._threads.add(thread)
            thread.start()

    def _client(self, raw: socket.socket) -> None:
        try:
            tls = self._tls.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()  # a client that gave up during the handshake
            return
        connection = _Connection(tls, self.upstream)
        with self._lock:
            self._connections.add(connection)
        try:
            while not self._stopping.is_set() and self._serve_one(connection):
                pass
        except (OSError, ssl.SSLError, ValueError):
            pass  # the client went away (or close() woke us): nothing to answer
        except Exception as err:  # a proxy bug: recorded for the test, not a dead thread
            self.errors.append(f"{type(err).__name__}: {err}")
        finally:
            with self._lock:
                self._connections.discard(connection)
            connection.close()

    def _paged(self, request: _Request, seen: Seen) -> _Request:
        paging = self._paging
        if paging is None or not paging.applies(seen):
            return request
        query = [
            (k, str(paging.limit) if k == "limit" else v)
            for k, v in parse_qsl(seen.query, keep_blank_values=True)
        ]
        return replace(request, target=f"{seen.path}?{urlencode(query)}")

    def _arrive(self, request: _Request) -> Seen:
        path, _, query = request.target.partition("?")
        fired: list[_Waiter] = []
        with self._lock:
            seen = Seen(len(self._log) + 1, request.method, path, query, request.body)
            injection = self._injection
            if injection is not None and self._hits < injection.times and injection.hits(seen):
                seen = replace(seen, fault=injection.fault)
                self._fired = self._fired or seen
                self._hits += 1
            self._log.append(seen)
            for waiter in self._waiters:
                if waiter.seen is None and waiter.match(seen):
                    waiter.seen = seen
                    fired.append(waiter)
        for waiter in fired:
            waiter.event.set()
        return seen

    def _record(self, seen: Seen, status: int) -> None:
        with self._lock:
            # Re-arming starts a new log; a late answer of the previous run is not recorded.
            if len(self._log) >= seen.index and self._log[seen.index - 1] is seen:
                self._log[seen.index - 1] = replace(seen, forwarded=True, upstream_status=status)

    def _serve_one(self, connection: _Connection) -> bool:
        """Handle one request; False when the connection is done."""
        request = connection.read_request()
        if request is None:
            return False
        release = self._release
        seen = self._arrive(request)
        keep_alive = (request.headers.get("Connection") or "").lower() != "close"
        if seen.fault in STATUS_FAULTS:
            self._answer_status(connection, seen)
            return keep_alive
        if seen.fault is Fault.RESET_BEFORE:
            connection.reset()
            return False
        if seen.fault is Fault.STALL:
            release.wait()
            return False
        if seen.fault in LATE_FAULTS:
            self._late(connection, request, seen, release)
            return False
        return self._forward(connection, request, seen, release) and keep_alive

    def _late(
        self, connection: _Connection, request: _Request, seen: Seen, release: threading.Event
    ) -> None:
        """Hold the request unanswered; once let go, forward it, record the server's answer
        and drop the connection (the client stopped waiting for it)."""
        late = _Held(seen)
        with self._lock:
            self._held.append(late)
        late.deliver.wait()
        try:
            if not release.is_set() and not self._stopping.is_set():
                status, *_ = connection.forward(self._paged(request, seen))
                self._record(seen, status)
        except (OSError, http.client.HTTPException) as err:
            self.errors.append(f"{seen}: late delivery failed: {type(err).__name__}: {err}")
        finally:
            late.done.set()

    def _after_answer(self, seen: Seen) -> None:
        """A GET has been answered: a LATE_AFTER_READ write of the same object goes now, in
        the gap between a client's read and whatever it decides from it."""
        if seen.method != "GET":
            return
        with self._lock:
            due = [
                h
                for h in self._held
                if h.seen.fault is Fault.LATE_AFTER_READ
                and h.seen.path.removesuffix("/scale") == seen.path
            ]
            self._held = [h for h in self._held if h not in due]
        for late in due:
            late.deliver.set()
            late.done.wait(UPSTREAM_TIMEOUT)

    def _answer_status(self, connection: _Connection, seen: Seen) -> None:
        assert seen.fault is not None
        code, reason, prefix = _STATUS[seen.fault]
        message = f"{prefix} (fault injected by the test proxy into {seen.method} {seen.path})"
        headers = [("Content-Type", "application/json")]
        if seen.fault is Fault.TOO_MANY_REQUESTS:
            headers.append(("Retry-After", str(self.retry_after)))
        answer = status_body(code, reason, message, self.retry_after)
        connection.respond(code, _REASON_PHRASE[code], headers, answer)

    def _forward(
        self, connection: _Connection, request: _Request, seen: Seen, release: threading.Event
    ) -> bool:
        """Forward and answer (or lose the answer: RESET_AFTER, STALL_AFTER); False when the
        connection is done."""
        try:
            status, reason, headers, body = connection.forward(self._paged(request, seen))
        except (OSError, http.client.HTTPException) as err:
            self.errors.append(f"{seen}: upstream failed: {type(err).__name__}: {err}")
            message = f"fault proxy: upstream failed: {err}"
            connection.respond(
                502, "Bad Gateway", [("Content-Type", "application/json")],
                status_body(502, "BadGateway", message),
            )  # fmt: skip
            return False
        self._record(seen, status)
        if seen.fault is Fault.RESET_AFTER:
            connection.reset()
            return False
        if seen.fault is Fault.STALL_AFTER:
            release.wait()
            return False
        connection.respond(status, reason, headers, body)
        self._after_answer(seen)
        return True


@contextmanager
def fault_proxy(server: APIServer, user: User, workdir: Path) -> Iterator[FaultProxy]:
    with FaultProxy.for_apiserver(server, user, workdir) as proxy:
        yield proxy
