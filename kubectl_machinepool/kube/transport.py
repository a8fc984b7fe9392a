"""HTTP to one API server: TLS, credentials and proxy settings, and a pool of connections.

The Kubernetes client's own transport is urllib3 and little more, but importing the client loads
every API and model module it has (0.22-0.28 s and ~35 MB per run); importing urllib3
alone takes 50-65 ms on top of the standard library's http.client and ssl, which it is built on.
So a direct connection goes over http.client, and urllib3 is imported only when a proxy applies:
it speaks to http://, https:// (TLS to the proxy itself) and, with PySocks, socks proxies. Either
way this decides what the client 37 decides: TLS verified unless the kubeconfig skips it, no
retries below ours, the kubeconfig's proxy-url or else HTTPS_PROXY/HTTP_PROXY with NO_PROXY.
Each phase of a request waits within its bound (interruptible.Timeouts), and one that passes it
raises Stalled, naming it. Failures are the standard library's exceptions, urllib3's translated
(apierrors.py words them).
"""

from __future__ import annotations

import http.client
import json
import selectors
import socket
import ssl
import threading
import warnings
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, urlsplit

from kubectl_machinepool import __version__
from kubectl_machinepool.base.errors import ConfigError
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.interruptible import (
    Response,
    Timeouts,
    phase,
    proxied_pools,
    stall_in,
)
from kubectl_machinepool.kube.parallel import MAX_PARALLEL
from kubectl_machinepool.kube.proxies import environment_proxies, proxy_for

if TYPE_CHECKING:
    import urllib3

# Connections kept per server: every read parallel.py runs at once, with room for a watch.
POOL_SIZE = 2 * MAX_PARALLEL
SOCKS_SCHEMES = frozenset({"socks5", "socks5h", "socks4", "socks4a"})
USER_AGENT = f"kubectl-machinepool/{__version__}"
Headers = list[tuple[str, str]]
# What a request's path and query keep as they are, as urllib3 kept it: a name with a space or
# non-ASCII letters is percent-encoded, where http.client would refuse to send it.
URL_SAFE = "!$&'()*+,;=:@/?%"


class Auth:
    """The Authorization header's value, asked for before every request: refresh (if any) may
    give a new one, as an exec plugin's token expires or a projected token file is rotated."""

    def __init__(
        self, value: str | None = None, refresh: Callable[[], str | None] | None = None
    ) -> None:
        self._value = value
        self._refresh = refresh
        # Parallel reads share one connection: one of them runs the plugin, the others wait.
        self._lock = threading.Lock()

    def header(self) -> str | None:
        if self._refresh is None:
            return self._value
        with self._lock:
            fresh = self._refresh()
            if fresh is not None:
                self._value = fresh
            return self._value


@record(slots=False)
class Settings:
    """Where and how to connect: what a kubeconfig entry (or the pod's service account) says."""

    host: str  # scheme://host[:port][/path], no trailing slash
    verify: bool = True  # False: insecure-skip-tls-verify
    ca_data: bytes | None = None  # PEM or DER, kept in memory
    ca_file: str | None = None
    cert_file: str | None = None  # client certificate and key: paths (memfd for inline data)
    key_file: str | None = None
    tls_server_name: str | None = None
    proxy_url: str | None = None  # the kubeconfig's proxy-url; None: the environment's
    auth: Auth = field(default_factory=Auth)


def _ca_data(data: bytes) -> str | bytes:
    """PEM as text, DER as bytes: the forms the TLS context takes."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return data


class Answer:
    """An answer left unread, direct or proxied: its status and headers, read1 and close."""

    def __init__(self, raw: http.client.HTTPResponse, release: Callable[[bool], None]) -> None:
        self._raw = raw
        # Told whether the connection may carry another request; called once.
        self._release: Callable[[bool], None] | None = release
        self.status = raw.status
        self.headers = raw.headers

    def read1(self, size: int) -> bytes:
        """At most size bytes, as soon as any come (b"": the end)."""
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
    connects and shakes hands within the bounds it was made with."""

    response_class = Response

    def __init__(
        self,
        host: str,
        port: int,
        tls: Callable[[], ssl.SSLContext] | None,
        server_name: str,
        limits: Timeouts,
    ) -> None:
        super().__init__(host, port, timeout=limits.connect)
        self._tls = tls
        self._server_name = server_name
        self._limits = limits
        if tls is not None:
            self.default_port = 443  # the Host header names the port only when not the usual

    def connect(self) -> None:
        with phase("connect", self._limits.connect):
            super().connect()
        if self._tls is not None:
            self.sock.settimeout(self._limits.handshake)
            with phase("handshake", self._limits.handshake):
                self.sock = self._tls().wrap_socket(self.sock, server_hostname=self._server_name)


def _dropped(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: the server closed it (or broke the
    protocol). urllib3 checks the same before reusing one: a request sent on it would fail."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(0))


def _no_password() -> str:
    # Without a callback OpenSSL asks on the terminal; a kubeconfig has no password to give.
    raise OSError("the client key is encrypted, and a kubeconfig gives no password for it")


class _Direct:
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
        self._closed = False

    def _tls(self) -> ssl.SSLContext:
        """Made at the first connection, so that an unusable CA or client certificate is
        reported as any failure to connect is."""
        with self._lock:
            if self._context is None:
                self._context = _tls_context(self._settings)
            return self._context

    def open(
        self, method: str, target: str, headers: Headers, body: bytes | None, limits: Timeouts
    ) -> Answer:
        conn = self._take(limits)
        try:
            if conn.sock is None:
                conn.connect()
            conn.sock.settimeout(limits.response)
            with phase("response", limits.response):  # a send the server does not take, too
                conn.putrequest(method, self._prefix + target)
                for name, value in headers:  # repeated names (Impersonate-Group) go out each
                    conn.putheader(name, value)
                if body is not None:
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                raw = conn.getresponse()
        except BaseException:
            conn.close()
            raise
        return Answer(raw, lambda reusable: self._give_back(conn, reusable))

    def _take(self, limits: Timeouts) -> _Connection:
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not _dropped(conn.sock):
                    return conn
                conn.close()
        server_name = self._settings.tls_server_name or self._host
        tls = self._tls if self._https else None
        return _Connection(self._host, self._port, tls, server_name, limits)

    def _give_back(self, conn: _Connection, reusable: bool) -> None:
        with self._lock:
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


def _tls_context(settings: Settings) -> ssl.SSLContext:
    """What urllib3 made of the same settings: TLS 1.2 or later, the certificate and its host
    name checked (the name only in its subjectAltNames, as Go checks it) unless skipped."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if not settings.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif settings.ca_file or settings.ca_data:
        cadata = _ca_data(settings.ca_data) if settings.ca_data else None
        context.load_verify_locations(settings.ca_file, cadata=cadata)
    else:
        context.load_default_certs()
    context.hostname_checks_common_name = False
    if settings.cert_file:
        context.load_cert_chain(settings.cert_file, settings.key_file, password=_no_password)
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Proxied:
    """Through a proxy, over urllib3: imported here only, its errors made the standard
    library's, its answers read as direct ones are."""

    def __init__(self, settings: Settings, proxy: str) -> None:
        import urllib3

        self._host = settings.host
        tls: dict[str, Any] = {
            "cert_reqs": "CERT_REQUIRED" if settings.verify else "CERT_NONE",
            "ca_certs": settings.ca_file,
            "ca_cert_data": _ca_data(settings.ca_data) if settings.ca_data else None,
            "cert_file": settings.cert_file,
            "key_file": settings.key_file,
            "retries": False,  # we retry reads ourselves (client.py) and say why we stopped
            "maxsize": POOL_SIZE,
        }
        if settings.tls_server_name:
            tls["server_hostname"] = settings.tls_server_name
        if not settings.verify:
            # The user chose insecure-skip-tls-verify; kubectl does not nag about it either.
            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        scheme = proxy.partition("://")[0].lower() if "://" in proxy else ""
        self._pool: urllib3.PoolManager
        try:
            if scheme in SOCKS_SCHEMES:
                self._pool = _socks(proxy, scheme, tls)
            else:
                self._pool = urllib3.ProxyManager(proxy, **tls)
        except (urllib3.exceptions.HTTPError, ValueError) as err:
            # Never repeat the URL: it may carry the proxy's password.
            where = "proxy-url" if settings.proxy_url is not None else "the proxy environment"
            raise ConfigError(
                f"the proxy URL in {where} cannot be used ({type(err).__name__})",
                hint="use http://, https:// or socks5:// with a host",
            ) from err
        self._pool.pool_classes_by_scheme = proxied_pools(self._pool.pool_classes_by_scheme)

    def open(
        self, method: str, target: str, headers: Headers, body: bytes | None, limits: Timeouts
    ) -> Answer:
        import urllib3

        try:
            response = self._pool.request(
                method,
                self._host + target,
                body=body,
                headers=urllib3.HTTPHeaderDict(headers),
                timeout=urllib3.Timeout(connect=limits.connect, read=limits.response),
                preload_content=False,
            )
        except urllib3.exceptions.HTTPError as err:
            raise _plain(err) from err

        def release(reusable: bool) -> None:
            if not reusable:
                response.close()
            response.release_conn()

        # Read as http.client's, as direct answers are: nothing is left for urllib3 to decode
        # (http.client asks for identity), and its wrapper around each read cost 0.1 s of CPU
        # per 30 MB of list answer.
        raw = cast(urllib3.HTTPResponse, response)._fp
        assert raw is not None  # a pool's answer always has one
        return Answer(raw, release)

    def close(self) -> None:
        self._pool.clear()


def _plain(err: urllib3.exceptions.HTTPError) -> OSError:
    """urllib3's error as the standard library's of the same kind, keeping its text: a phase
    that stalled (urllib3 wraps ours); a connection dropped before the answer came (a read may
    be asked again); else no connection made (refused, unresolved, TLS or the proxy failing)."""
    import urllib3

    text = str(err)
    if (stalled := stall_in(err)) is not None:
        return stalled
    if isinstance(err, urllib3.exceptions.NewConnectionError):
        return OSError(text)  # refused or unresolved: urllib3 derives it from its timeouts
    if isinstance(err, urllib3.exceptions.TimeoutError):
        return TimeoutError(text)
    if isinstance(err, urllib3.exceptions.ProtocolError):
        return ConnectionAbortedError(text)
    return OSError(text)


def _socks(proxy: str, scheme: str, tls: dict[str, Any]) -> urllib3.PoolManager:
    try:
        with warnings.catch_warnings():  # urllib3 warns before it fails: the error says it all
            warnings.simplefilter("ignore")
            from urllib3.contrib.socks import SOCKSProxyManager
    except ImportError:
        raise ConfigError(
            f"a {scheme} proxy needs the PySocks package, which is not installed",
            hint="install PySocks next to kubectl-machinepool, or use an http:// proxy",
        ) from None
    return SOCKSProxyManager(proxy, **tls)


class Transport:
    """Requests to one API server, direct or through the proxy that applies."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._closed = False
        proxy = proxy_for(settings.host, settings.proxy_url, environment_proxies())
        self._pool: _Direct | _Proxied = (
            _Direct(settings) if proxy is None else _Proxied(settings, proxy)
        )

    def open(
        self, method: str, path: str, headers: Headers, body: Any | None, limits: Timeouts
    ) -> Answer:
        """Send one request, each phase within limits. path carries its query; headers get the
        User-Agent and the credentials added; a body is sent as JSON. None once closed: a
        watch's thread still running after its follower ended opens no more connections."""
        if self._closed:
            raise OSError("the run has closed its connections to the API server")
        headers = [*headers, ("User-Agent", USER_AGENT)]
        authorization = self.settings.auth.header()
        if authorization:
            headers.append(("Authorization", authorization))
        data = None if body is None else json.dumps(body).encode()
        return self._pool.open(method, quote(path, safe=URL_SAFE), headers, data, limits)

    def close(self) -> None:
        self._closed = True
        self._pool.close()
