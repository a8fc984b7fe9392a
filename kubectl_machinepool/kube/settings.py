"""Where and how to connect to one API server: what a kubeconfig entry (or the pod's service
account) says, the credentials asked for before each request, and the TLS context made of them."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from dataclasses import field

from kubectl_machinepool.base.records import record


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
    compress: bool = True  # False: the kubeconfig's disable-compression
    auth: Auth = field(default_factory=Auth)


def ca_data(data: bytes) -> str | bytes:
    """PEM as text, DER as bytes: the forms the TLS context takes."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return data


def _no_password() -> str:
    # Without a callback OpenSSL asks on the terminal; a kubeconfig has no password to give.
    raise OSError("the client key is encrypted, and a kubeconfig gives no password for it")


def tls_context(settings: Settings) -> ssl.SSLContext:
    """What urllib3 made of the same settings: TLS 1.2 or later, the certificate and its host
    name checked (the name only in its subjectAltNames, as Go checks it) unless skipped."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if not settings.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif settings.ca_file or settings.ca_data:
        cadata = ca_data(settings.ca_data) if settings.ca_data else None
        context.load_verify_locations(settings.ca_file, cadata=cadata)
    else:
        context.load_default_certs()
    context.hostname_checks_common_name = False
    if settings.cert_file:
        context.load_cert_chain(settings.cert_file, settings.key_file, password=_no_password)
    context.set_alpn_protocols(["http/1.1"])
    return context
