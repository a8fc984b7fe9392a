"""HTTP to one API server over urllib3: TLS, credentials and proxy settings, and the pool.

The Kubernetes client's own transport is this and little more, but importing it loads every API
and model module of the client (a fifth of a second and ~28 MB per run); so it is done here with
urllib3 alone, deciding what the client 37 decides: TLS verified unless the kubeconfig skips it,
no retries below ours, the kubeconfig's proxy-url or else HTTPS_PROXY/HTTP_PROXY with NO_PROXY.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import urllib3

from kubectl_machinepool import __version__
from kubectl_machinepool.errors import ConfigError
from kubectl_machinepool.parallel import MAX_PARALLEL

# Connections kept per server: every read parallel.py runs at once, with room for a watch.
POOL_SIZE = 2 * MAX_PARALLEL
SOCKS_SCHEMES = frozenset({"socks5", "socks5h", "socks4", "socks4a"})
USER_AGENT = f"kubectl-machinepool/{__version__}"
Timeout = float | tuple[float | None, float] | None


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


@dataclass(frozen=True)
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


def environment_proxies() -> dict[str, str]:
    """Proxies by scheme (and "no"), as urllib finds them: the environment, the OS elsewhere."""
    from urllib.request import getproxies

    return getproxies()


def proxy_for(settings: Settings, proxies: dict[str, str]) -> str | None:
    """The proxy to reach settings.host through, None for a direct connection."""
    proxy = settings.proxy_url
    if proxy is None:
        proxy = proxies.get(urlsplit(settings.host).scheme) or proxies.get("all")
    if not proxy or bypassed(settings.host, proxies.get("no") or ""):
        return None
    return proxy


def bypassed(url: str, no_proxy: str) -> bool:
    """Whether NO_PROXY (comma-separated: `*`, names and their subdomains, host:port, CIDR
    ranges and addresses) exempts the URL from the proxy."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host:
        return True
    with_port = parts.netloc.lower().rpartition("@")[2]
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for rule in (r.strip().lower() for r in no_proxy.split(",")):
        if rule == "*":
            return True
        if address is not None and _in_network(address, rule):
            return True
        name = rule.lstrip(".")
        if name and any(n == name or n.endswith("." + name) for n in (host, with_port)):
            return True
    return False


def _in_network(address: ipaddress.IPv4Address | ipaddress.IPv6Address, rule: str) -> bool:
    try:
        return address in ipaddress.ip_network(rule, strict=False)
    except ValueError:
        return False


def pool_manager(settings: Settings, proxies: dict[str, str]) -> urllib3.PoolManager:
    """The connection pool for settings, direct or through its proxy."""
    tls: dict[str, Any] = {
        "cert_reqs": "CERT_REQUIRED" if settings.verify else "CERT_NONE",
        "ca_certs": settings.ca_file,
        "ca_cert_data": _ca_data(settings.ca_data) if settings.ca_data else None,
        "cert_file": settings.cert_file,
        "key_file": settings.key_file,
        "retries": False,  # we retry reads ourselves (kube.py) and say why we stopped
        "maxsize": POOL_SIZE,
    }
    if settings.tls_server_name:
        tls["server_hostname"] = settings.tls_server_name
    if not settings.verify:
        # The user chose insecure-skip-tls-verify; kubectl does not nag about it either.
        warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
    proxy = proxy_for(settings, proxies)
    if proxy is None:
        return urllib3.PoolManager(**tls)
    scheme = proxy.partition("://")[0].lower() if "://" in proxy else ""
    try:
        if scheme in SOCKS_SCHEMES:
            return _socks(proxy, scheme, tls)
        return urllib3.ProxyManager(proxy, **tls)
    except (urllib3.exceptions.HTTPError, ValueError) as err:
        # Never repeat the URL: it may carry the proxy's password.
        where = "proxy-url" if settings.proxy_url is not None else "the proxy environment"
        raise ConfigError(
            f"the proxy URL in {where} cannot be used ({type(err).__name__})",
            hint="use http://, https:// or socks5:// with a host",
        ) from err


def _ca_data(data: bytes) -> str | bytes:
    """PEM as text, DER as bytes: the forms the TLS context takes."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return data


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
    """Requests to one API server; answers are urllib3 responses left unread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._pool = pool_manager(settings, environment_proxies())

    def open(
        self,
        method: str,
        path: str,
        headers: urllib3.HTTPHeaderDict,
        body: Any | None,
        timeout: Timeout,
    ) -> urllib3.BaseHTTPResponse:
        """Send one request. path carries its query; headers get the User-Agent and the
        credentials added; a body is sent as JSON."""
        headers.setdefault("User-Agent", USER_AGENT)
        authorization = self.settings.auth.header()
        if authorization:
            headers["Authorization"] = authorization
        return self._pool.request(
            method,
            self.settings.host + path,
            body=None if body is None else json.dumps(body),
            headers=headers,
            timeout=_timeout(timeout),
            preload_content=False,
        )

    def close(self) -> None:
        self._pool.clear()


def _timeout(value: Timeout) -> urllib3.Timeout | None:
    """A number bounds the whole request; a pair, (connect, each read). None or 0: no bound."""
    if isinstance(value, tuple):
        return urllib3.Timeout(connect=value[0], read=value[1])
    return urllib3.Timeout(total=value) if value else None
