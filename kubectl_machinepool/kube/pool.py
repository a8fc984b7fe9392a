"""Kept-alive connections straight to one API server over http.client, and the answers read
from them.

Over a wide-area link, what a read plan waits for is round trips, and a new connection costs two
before its request goes out (TCP, then TLS 1.3). So a plan opens, beside its first request, the
connections its next reads will take (open_ahead): they cost the round trips the first request
pays anyway, and later reads find them idle. A connection opened once a session ticket is in
resumes that TLS session: the server skips its certificate and the client's verification.
"""

from __future__ import annotations

import http.client
import selectors
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable
from urllib.parse import urlsplit

from kubectl_machinepool.kube.interruptible import Response, Timeouts, phase
from kubectl_machinepool.kube.parallel import MAX_PARALLEL, start_daemon
from kubectl_machinepool.kube.settings import Settings, tls_context

# Connections kept per server: every read parallel.py runs at once, with room for a watch.
POOL_SIZE = 2 * MAX_PARALLEL
Headers = list[tuple[str, str]]


# How long a connection parked before its server's credentials were known (park()) may be
# taken: a server or a load balancer in between may end one that stays silent, and a guess
# is for the run that made it (its Secret answers within a few round trips).
PARKED_FOR = 5.0
_parked: dict[tuple[str, int], list[tuple[float, socket.socket]]] = {}
_parked_lock = threading.Lock()


def park(url: str, count: int, limits: Timeouts) -> None:
    """Open count TCP connections to url's server in the background, for the connections made
    to it in the next seconds to take (warmstart.py: the workload server a kubeconfig Secret
    will name, its TCP round trip paid while the Secret is read). Never an error: one that
    fails or is not taken costs nothing but itself."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return
    address = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))

    def connect() -> None:
        try:
            sock = socket.create_connection(address, timeout=limits.connect)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, ValueError):
            return
        with _parked_lock:
            _parked.setdefault(address, []).append((time.monotonic(), sock))

    _close_stale()
    for _ in range(count):
        start_daemon(connect)


def _close_stale() -> None:
    """Those of an earlier guess that no connection took."""
    stale = []
    with _parked_lock:
        for waiting in _parked.values():
            stale += [sock for at, sock in waiting if time.monotonic() - at >= PARKED_FOR]
            waiting[:] = [(at, sock) for at, sock in waiting if sock not in stale]
    for sock in stale:
        sock.close()


def _unpark(host: str, port: int) -> socket.socket | None:
    """A connection parked for host:port in the last PARKED_FOR seconds that the server has
    not closed, taken by one caller alone; older ones are closed."""
    while True:
        with _parked_lock:
            if not (waiting := _parked.get((host, port))):
                return None
            parked, sock = waiting.pop()
        if time.monotonic() - parked < PARKED_FOR and not _dropped(sock):
            return sock
        sock.close()


class BadEncoding(Exception):
    """An answer in an encoding not asked for, or gzip that does not inflate."""


class Answer:
    """An answer left unread, direct or proxied: its status and headers, read1 and close.

    Asked for gzip (transport.py), the API server compresses list and get answers of 128 KiB or
    more: 1000 Nodes come as about 0.3 MiB instead of 5.4. read1 inflates as the bytes come, never
    more than it was asked for at once, so the size bounds of answers.py hold for what a small
    compressed answer would inflate to.
    """

    def __init__(self, raw: http.client.HTTPResponse, release: Callable[[bool], None]) -> None:
        self._raw = raw
        # Told whether the connection may carry another request; called once.
        self._release: Callable[[bool], None] | None = release
        self.status = raw.status
        self.headers = raw.headers
        self._encoding = (raw.headers.get("Content-Encoding") or "identity").strip().lower()
        self._inflate = zlib.decompressobj(31) if self._encoding == "gzip" else None

    def read1(self, size: int) -> bytes:
        """At most size bytes, as soon as any come (b"": the end)."""
        if self._inflate is None:
            if self._encoding != "identity":
                raise BadEncoding(f"an answer in {self._encoding!r}, which was not asked for")
            return self._read1(size)
        try:
            return self._inflated(self._inflate, size)
        except zlib.error as err:
            raise BadEncoding(f"an answer whose gzip does not inflate ({err})") from None

    def _inflated(self, inflate: zlib._Decompress, size: int) -> bytes:
        while True:
            if inflate.unconsumed_tail:
                data = inflate.decompress(inflate.unconsumed_tail, size)
            elif chunk := self._read1(size):
                if inflate.eof:
                    continue  # bytes after the gzip stream: read (the connection is reused)
                data = inflate.decompress(chunk, size)
            else:
                data = b"" if inflate.eof else inflate.decompress(b"", size)
                if not data and not inflate.eof:
                    raise http.client.IncompleteRead(b"")  # the stream was cut short
                return data
            if data:
                return data

    def _read1(self, size: int) -> bytes:
        data = self._raw.read1(size)
        if not data:
            # http.client's read1 neither says that a Content-Length answer was cut short
            # nor closes one read to its end, which its connection needs to be used again.
            if self._raw.length:
                raise http.client.IncompleteRead(b"", self._raw.length)
            self._raw.close()
        return data

    def close(self) -> None:
        """Done with it: its connection goes back to the pool if the answer was read to its
        end; one left part-read (an error, a bound, a watch stopped early) is closed instead,
        as the next request on it would find the rest of this answer."""
        release, self._release = self._release, None
        if release is not None:
            read_to_end = self._raw.isclosed()
            self._raw.close()
            release(read_to_end)


class _Connection(http.client.HTTPConnection):
    """One keep-alive connection, over TLS when given a context: the certificate is checked
    against server_name (tls-server-name, else the host), which is also the SNI sent. It
    connects and shakes hands within the bounds it was made with, resuming the session given."""

    response_class = Response

    def __init__(
        self,
        host: str,
        port: int,
        tls: Callable[[], tuple[ssl.SSLContext, ssl.SSLSession | None]] | None,
        server_name: str,
        limits: Timeouts,
    ) -> None:
        super().__init__(host, port, timeout=limits.connect)
        self._tls = tls
        # Whether its TLS session was offered to the pool yet (Direct._give_back).
        self.session_offered = False
        self._server_name = server_name
        self._limits = limits
        if tls is not None:
            self.default_port = 443  # the Host header names the port only when not the usual

    def connect(self) -> None:
        if (parked := _unpark(self.host, self.port)) is not None:
            self.sock = parked
        else:
            with phase("connect", self._limits.connect):
                super().connect()
        if self._tls is not None:
            context, session = self._tls()
            self.sock.settimeout(self._limits.handshake)
            with phase("handshake", self._limits.handshake):
                self.sock = context.wrap_socket(
                    self.sock, server_hostname=self._server_name, session=session
                )


def _dropped(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: the server closed it (or broke the
    protocol). urllib3 checks the same before reusing one: a request sent on it would fail.
    Over TLS, what is there may be only the session tickets a TLS 1.3 server sends after the
    handshake, unread on a connection opened ahead: read, they leave it as it was."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        if not selector.select(0):
            return False
    if not isinstance(sock, ssl.SSLSocket):
        return True
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        sock.recv(1)  # data no request asked for, or the end: either way not to be used
    except ssl.SSLWantReadError:
        return False  # records, but no data: the tickets
    except OSError:
        pass
    finally:
        sock.settimeout(timeout)
    return True


class Direct:
    """Straight to the server over http.client: up to POOL_SIZE idle connections kept."""

    def __init__(self, settings: Settings) -> None:
        parts = urlsplit(settings.host)
        self._settings = settings
        self._host = parts.hostname or ""
        self._https = parts.scheme == "https"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._session: ssl.SSLSession | None = None
        self._closed = False

    def _tls(self) -> tuple[ssl.SSLContext, ssl.SSLSession | None]:
        """The context, made at the first connection (so that an unusable CA or client
        certificate is reported as any failure to connect is), and a session to resume."""
        with self._lock:
            if self._context is None:
                self._context = tls_context(self._settings)
            return self._context, self._session

    def open_ahead(self, count: int, limits: Timeouts) -> None:
        """Have count connections idle: those missing opened now, side by side (a read plan
        run again on the same pool, as a followed view's, finds them there). One that fails
        is let go: the read that would have taken it connects itself, and says why."""
        with self._lock:
            missing = count - len(self._idle)
        for _ in range(missing):
            start_daemon(self._ahead, limits)

    def _ahead(self, limits: Timeouts) -> None:
        conn = self._new(limits)
        try:
            conn.connect()
        except Exception:
            conn.close()
            return
        self._give_back(conn, reusable=True, answered=False)

    def open(
        self, method: str, target: str, headers: Headers, body: bytes | None, limits: Timeouts
    ) -> Answer:
        conn = self._take(limits)
        try:
            if conn.sock is None:
                conn.connect()
            conn.sock.settimeout(limits.response)
            with phase("response", limits.response):  # a send the server does not take, too
                conn.putrequest(method, self._prefix + target, skip_accept_encoding=True)
                for name, value in headers:  # repeated names (Impersonate-Group) go out each
                    conn.putheader(name, value)
                if body is not None:
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                raw = conn.getresponse()
        except BaseException:
            conn.close()
            raise
        return Answer(raw, lambda reusable: self._give_back(conn, reusable=reusable))

    def _take(self, limits: Timeouts) -> _Connection:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn.sock):
                    return conn
                conn.close()
        return self._new(limits)

    def _new(self, limits: Timeouts) -> _Connection:
        server_name = self._settings.tls_server_name or self._host
        tls = self._tls if self._https else None
        return _Connection(self._host, self._port, tls, server_name, limits)

    def _give_back(self, conn: _Connection, *, reusable: bool, answered: bool = True) -> None:
        # A TLS 1.3 ticket comes after the handshake, with the first answer: kept from there,
        # once per connection. Python hands out a copy of the session (its certificate chain
        # decoded again) at each access; one per answer made a followed view grow by megabytes
        # a minute (tests/benchmarks/watchsoak.py).
        session = None
        if answered and isinstance(conn.sock, ssl.SSLSocket) and not conn.session_offered:
            session, conn.session_offered = conn.sock.session, True
        with self._lock:
            if session is not None and session.has_ticket:
                self._session = session
            # No socket: the server said it closes the connection after this answer. Closed:
            # a watch thread still running after its follower ended gives its connection back.
            if (
                reusable
                and conn.sock is not None
                and len(self._idle) < POOL_SIZE
                and not self._closed
            ):
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()
