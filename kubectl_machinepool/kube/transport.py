"""HTTP to one API server: straight to it (pool.py), or through the proxy that applies.

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

import json
import warnings
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from kubectl_machinepool import __version__
from kubectl_machinepool.base.errors import ConfigError
from kubectl_machinepool.kube.interruptible import Timeouts, proxied_pools, stall_in
from kubectl_machinepool.kube.pool import POOL_SIZE, Answer, Direct, Headers
from kubectl_machinepool.kube.proxies import environment_proxies, proxy_for
from kubectl_machinepool.kube.settings import Settings, ca_data

if TYPE_CHECKING:
    import urllib3

SOCKS_SCHEMES = frozenset({"socks5", "socks5h", "socks4", "socks4a"})
USER_AGENT = f"kubectl-machinepool/{__version__}"
# What a request's path and query keep as they are, as urllib3 kept it: a name with a space or
# non-ASCII letters is percent-encoded, where http.client would refuse to send it.
URL_SAFE = "!$&'()*+,;=:@/?%"


class _Proxied:
    """Through a proxy, over urllib3: imported here only, its errors made the standard
    library's, its answers read as direct ones are."""

    def __init__(self, settings: Settings, proxy: str) -> None:
        import urllib3

        self._host = settings.host
        tls: dict[str, Any] = {
            "cert_reqs": "CERT_REQUIRED" if settings.verify else "CERT_NONE",
            "ca_certs": settings.ca_file,
            "ca_cert_data": ca_data(settings.ca_data) if settings.ca_data else None,
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
        self._pool: Direct | _Proxied = (
            Direct(settings) if proxy is None else _Proxied(settings, proxy)
        )

    def open(
        self, method: str, path: str, headers: Headers, body: Any | None, limits: Timeouts
    ) -> Answer:
        """Send one request, each phase within limits. path carries its query; headers get the
        User-Agent and the credentials added; a body is sent as JSON. None once closed: a
        watch's thread still running after its follower ended opens no more connections."""
        if self._closed:
            raise OSError("the run has closed its connections to the API server")
        # gzip as kubectl asks for it: a WAN's bandwidth, not the server's CPU, is what a
        # big list waits for; disable-compression is the kubeconfig's way out (pool.py).
        encoding = "gzip" if self.settings.compress else "identity"
        headers = [*headers, ("User-Agent", USER_AGENT), ("Accept-Encoding", encoding)]
        authorization = self.settings.auth.header()
        if authorization:
            headers.append(("Authorization", authorization))
        data = None if body is None else json.dumps(body).encode()
        return self._pool.open(method, quote(path, safe=URL_SAFE), headers, data, limits)

    def open_ahead(self, count: int, limits: Timeouts) -> None:
        """Have count connections ready for the reads after the first request (pool.py);
        through a proxy urllib3 opens them as it needs them."""
        if isinstance(self._pool, Direct) and not self._closed:
            self._pool.open_ahead(count, limits)

    def close(self) -> None:
        self._closed = True
        self._pool.close()
