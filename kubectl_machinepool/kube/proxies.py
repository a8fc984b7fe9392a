"""Which proxy an API server is reached through: the kubeconfig's proxy-url, else HTTPS_PROXY or
HTTP_PROXY from the environment, unless NO_PROXY exempts the server (as Go's net/http reads it)."""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit


def environment_proxies() -> dict[str, str]:
    """Proxies by scheme (and "no") from the `<scheme>_proxy` variables, as urllib's
    getproxies_environment reads them (a lowercase name wins). Only the environment, as
    kubectl: not the OS settings urllib.request reads on macOS, and not its 7 ms import."""
    proxies: dict[str, str] = {}
    for lowercase in (False, True):
        for name, value in os.environ.items():
            if name[-6:].lower() != "_proxy" or (name == name.lower()) != lowercase:
                continue
            if value:
                proxies[name[:-6].lower()] = value
            elif lowercase:
                proxies.pop(name[:-6].lower(), None)
    # As urllib: under CGI, HTTP_PROXY may be the client's Proxy header (httpoxy).
    if "REQUEST_METHOD" in os.environ and not os.environ.get("http_proxy"):
        proxies.pop("http", None)
    return proxies


def proxy_for(host: str, proxy_url: str | None, proxies: dict[str, str]) -> str | None:
    """The proxy to reach host through (the kubeconfig's proxy-url, else the environment's),
    None for a direct connection."""
    proxy = proxy_url
    if proxy is None:
        proxy = proxies.get(urlsplit(host).scheme) or proxies.get("all")
    if not proxy or bypassed(host, proxies.get("no") or ""):
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
