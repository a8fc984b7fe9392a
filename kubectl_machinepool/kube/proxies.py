"""Which proxy an API server is reached through: the kubeconfig's proxy-url, else HTTPS_PROXY or
HTTP_PROXY from the environment, unless NO_PROXY exempts the server (as Go's net/http reads it)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def environment_proxies() -> dict[str, str]:
    """Proxies by scheme (and "no"), as urllib finds them: the environment, the OS elsewhere."""
    from urllib.request import getproxies

    return getproxies()


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
