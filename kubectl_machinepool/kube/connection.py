"""Connections to API servers, built only from validated kubeconfig entries (kubeconfig.py).

The management cluster's kubeconfig is the user's own: its exec plugins (run, and bounded, by
execplugin.py), token files and certificate paths are used as kubectl uses them. A workload
cluster's `<cluster>-kubeconfig` Secret is written by whoever may write Secrets in its namespace:
from it only inline credentials are used (no command runs, no local file is read).

Credentials never touch the disk: the CA goes into the TLS context as data, client certificates
and keys into anonymous in-memory files (memfd) held for the connection's lifetime. The client
library's kubeconfig loader, which writes them to temporary files that outlive a kill, is not used,
nor is the rest of the library: what a connection needs is in settings.Settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from kubectl_machinepool.base.errors import ConfigError, MachinePoolError
from kubectl_machinepool.base.inputfiles import Budget, read_file
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube import execplugin
from kubectl_machinepool.kube.kubeconfig import (
    ClusterEntry,
    ExecConfig,
    Kubeconfig,
    UserEntry,
    parse,
    read_files,
)
from kubectl_machinepool.kube.kubefiles import kubeconfig_paths
from kubectl_machinepool.kube.settings import Auth, Settings

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# Refresh an exec plugin's token this long before it expires, as client-go does.
EXPIRY_MARGIN = timedelta(seconds=10)
# The client's in-cluster loader reads the service account token again after this long.
SERVICE_ACCOUNT_TOKEN_PERIOD = timedelta(minutes=1)
# A CA bundle of every public root is about 200 KiB; a token or a key is a few KiB.
CREDENTIAL_FILE_LIMIT = 1 << 20


@record(slots=False)
class Connection:
    """A ready client configuration and what kubectl would print about it."""

    settings: Settings
    context: str | None  # None when running in-cluster
    namespace: str
    # The server URL for messages: without any user info it carried.
    server: str
    # In-memory files holding credentials; closed with the connection.
    held_files: tuple[int, ...] = ()
    # Impersonate-* headers from the kubeconfig user's as/as-groups, as kubectl sends them.
    headers: tuple[tuple[str, str], ...] = ()


def load_connection(
    kubeconfig: str | None,
    context: str | None,
    env: Mapping[str, str] | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
    *,
    plugin_timeout: float | None = None,
) -> Connection:
    """The management cluster: kubeconfig files as kubectl finds them, else in-cluster.
    plugin_timeout bounds each run of an exec credential plugin (execplugin.py)."""
    env = os.environ if env is None else env
    paths = kubeconfig_paths(kubeconfig, env)
    if paths:
        try:
            config = read_files(paths)
            chosen = context or config.current_context
            if not chosen:
                raise ConfigError(
                    f"current-context is not set in {config.source}",
                    hint="pass --context NAME, or run: kubectl config use-context NAME",
                )
            return _connect(config, chosen, trusted=True, plugin_timeout=plugin_timeout)
        except ConfigError as err:
            # The user's own files: what kubectl reads from them is the first thing to see.
            err.hint = err.hint or "kubectl config view --minify shows what kubectl reads there"
            raise
    if env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"):
        return _in_cluster(env, service_account_dir)
    raise ConfigError(
        "no kubeconfig found and not running in a cluster",
        hint="set KUBECONFIG or pass --kubeconfig FILE",
    )


def connection_from_dict(document: Any, source: str) -> Connection:
    """A workload cluster's connection from the kubeconfig in its Secret: inline credentials
    only, nothing run, nothing read from this machine."""
    config = parse(document, source, directory=None)
    if not config.current_context:
        raise ConfigError(f"the kubeconfig in {source} sets no current-context")
    return _connect(config, config.current_context, trusted=False)


def _refuse_unsafe(cluster: ClusterEntry, user: UserEntry, source: str) -> None:
    unsafe = [
        key
        for key, value in (
            ("exec", user.exec),
            ("auth-provider", user.auth_provider),
            ("tokenFile", user.token_file),
            ("client-certificate", user.cert_file),
            ("client-key", user.key_file),
            ("certificate-authority", cluster.ca_file),
            ("proxy-url", cluster.proxy_url),
        )
        if value is not None
    ]
    if unsafe:
        raise ConfigError(
            f"the kubeconfig in {source} uses {', '.join(unsafe)}; from a Secret only inline "
            "credentials are used",
            hint="pass --workload-kubeconfig FILE with a kubeconfig you trust",
        )


def _server(url: str, context: str, source: str) -> str:
    """The URL to connect to and to show: any user info in it dropped (it is never sent)."""
    if not url:
        raise ConfigError(f'kubeconfig context "{context}" names no cluster server in {source}')
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # a bad port raises here
    except ValueError:
        port, parts = -1, None
    if parts is None or port == -1 or parts.scheme not in ("https", "http") or not parts.hostname:
        raise ConfigError(f'kubeconfig context "{context}" in {source} has no usable server URL')
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def _connect(
    config: Kubeconfig, context: str, *, trusted: bool, plugin_timeout: float | None = None
) -> Connection:
    entry = config.contexts.get(context)
    if entry is None:
        raise ConfigError(
            f'context "{context}" does not exist in {config.source}',
            hint=f"known contexts: {', '.join(sorted(config.contexts)) or 'none'}",
        )
    cluster = config.clusters.get(entry.cluster)
    if cluster is None:
        raise ConfigError(
            f'kubeconfig context "{context}" names no cluster server in {config.source}'
        )
    user = config.users.get(entry.user, UserEntry())
    if not trusted:
        _refuse_unsafe(cluster, user, config.source)
    host = _server(cluster.server, context, config.source)
    held: list[int] = []
    try:
        auth, cert_file, key_file = _authenticate(
            user,
            cluster=cluster,
            context=context,
            source=config.source,
            held=held,
            plugin_timeout=plugin_timeout,
        )
    except BaseException:
        for fd in held:
            os.close(fd)
        raise
    ca_data = cluster.ca_data or None
    if ca_data is None and cluster.ca_file:
        ca_data = _credential_file(cluster.ca_file)
    settings = Settings(
        host,
        verify=not cluster.insecure,
        ca_data=ca_data,
        cert_file=cert_file,
        key_file=key_file,
        tls_server_name=cluster.tls_server_name,
        proxy_url=cluster.proxy_url,
        compress=not cluster.disable_compression,
        auth=auth,
    )
    namespace = entry.namespace or "default"
    return Connection(settings, context, namespace, host, tuple(held), user.impersonation)


def _in_memory(name: str, data: bytes, held: list[int]) -> str:
    """A path to data that exists only in this process's memory."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
        path = f"/proc/self/fd/{fd}"
    else:  # no memfd: a file unlinked at once, reachable only through the open descriptor
        import tempfile

        fd, temporary = tempfile.mkstemp(prefix="kubectl-machinepool-")
        os.unlink(temporary)
        path = f"/dev/fd/{fd}"
    held.append(fd)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return path


def _bearer(token: str, where: str) -> str:
    value = token.strip()
    if not value or not value.isprintable() or any(c.isspace() for c in value):
        # Never repeat the token: it is a credential.
        raise ConfigError(f"the token in {where} is not a single word of printable text")
    return f"Bearer {value}"


def _authenticate(
    user: UserEntry,
    *,
    cluster: ClusterEntry,
    context: str,
    source: str,
    held: list[int],
    plugin_timeout: float | None,
) -> tuple[Auth, str | None, str | None]:
    """The Authorization header, and the client certificate's and key's paths."""
    cert: bytes | str | None = user.cert_data or user.cert_file
    key: bytes | str | None = user.key_data or user.key_file
    auth = Auth()
    if user.exec is not None:
        status = execplugin.run(user.exec, cluster, context, plugin_timeout)
        if status.token is not None:
            refresh = None
            if status.expiry is not None:
                refresh = _refresher(user.exec, cluster, context, status, plugin_timeout)
            auth = Auth(_bearer(status.token, "exec plugin output"), refresh)
        else:
            cert, key = status.cert, status.key
    elif user.auth_provider is not None:
        auth = Auth(_auth_provider_token(user, context))
    elif user.token:
        auth = Auth(_bearer(user.token, f'context "{context}"'))
    elif user.token_file:
        auth = Auth(_bearer(_read_file(user.token_file), user.token_file))
    elif user.username is not None and user.password is not None:
        import base64

        pair = f"{user.username}:{user.password}".encode()
        auth = Auth(f"Basic {base64.b64encode(pair).decode()}")
    if (cert is None) != (key is None):
        raise ConfigError(f'kubeconfig context "{context}" in {source} has a client certificate '
                          "without its key, or a key without its certificate")  # fmt: skip
    if cert is None or key is None:
        return auth, None, None
    return auth, _path_of(cert, "client-certificate", held), _path_of(key, "client-key", held)


def _path_of(value: bytes | str, name: str, held: list[int]) -> str:
    data = _credential_file(value) if isinstance(value, str) else value
    return _in_memory(name, data, held)


def _credential_file(path: str) -> bytes:
    """A file a kubeconfig names, read now and then held in memory: a regular file only, as a
    FIFO or a device would hold the command (in a fleet, every context at once) forever."""
    try:
        return read_file(path, Budget(path), limit=CREDENTIAL_FILE_LIMIT)
    except MachinePoolError as err:
        raise ConfigError(err.message) from err


def _read_file(path: str) -> str:
    try:
        return _credential_file(path).decode()
    except UnicodeDecodeError as err:
        raise ConfigError(f"cannot read {path}: not UTF-8 text") from err


def _auth_provider_token(user: UserEntry, context: str) -> str:
    config = dict(user.auth_provider_config)
    if user.auth_provider == "oidc" and config.get("id-token"):
        return _bearer(config["id-token"], f'context "{context}" (auth-provider oidc)')
    raise ConfigError(
        f'context "{context}" uses auth-provider {user.auth_provider or "(unnamed)"}, which '
        "kubectl no longer supports (or the oidc id-token is missing)",
        hint="use the provider's exec credential plugin, as kubectl 1.26 and later require",
    )


# -- exec credential plugins ------------------------------------------------------------------


def _refresher(
    plugin: ExecConfig,
    cluster: ClusterEntry,
    context: str,
    first: execplugin.Credential,
    timeout: float | None,
) -> Callable[[], str | None]:
    """Asked before each request: runs the plugin again once the token expires."""
    state = {"expiry": first.expiry}

    def refresh() -> str | None:
        expiry = state["expiry"]
        if expiry is None or datetime.now(UTC) + EXPIRY_MARGIN < expiry:
            return None
        fresh = execplugin.run(plugin, cluster, context, timeout)
        if fresh.token is None:
            raise ConfigError(f'the credential plugin of context "{context}" stopped giving tokens')
        state["expiry"] = fresh.expiry
        return _bearer(fresh.token, "exec plugin output")

    return refresh


def _in_cluster(env: Mapping[str, str], service_account_dir: Path) -> Connection:
    """The pod's service account, read as the client's InClusterConfigLoader reads it."""
    host, port = env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]
    token = _service_account_token(service_account_dir / "token")
    first = token()
    ca_file = service_account_dir / "ca.crt"
    _pod_file(ca_file, "Service certification file does not exist.", "Cert file exists but empty.")
    server = "https://" + (f"[{host}]" if ":" in host or "%" in host else host) + f":{port}"
    settings = Settings(server, ca_file=str(ca_file), auth=Auth(first, token))
    ns_file = service_account_dir / "namespace"
    namespace = ns_file.read_text().strip() if ns_file.is_file() else "default"
    return Connection(settings, None, namespace or "default", server)


def _service_account_token(path: Path) -> Callable[[], str | None]:
    """The token, read again once a minute has passed: the kubelet rotates it."""
    due = [datetime.min.replace(tzinfo=UTC)]

    def read() -> str | None:
        if datetime.now(UTC) < due[0]:
            return None
        token = _pod_file(
            path, "Service token file does not exist.", "Token file exists but empty."
        )
        due[0] = datetime.now(UTC) + SERVICE_ACCOUNT_TOKEN_PERIOD
        return f"bearer {token}"

    return read


def _pod_file(path: Path, missing: str, empty: str) -> str:
    content = _read_file(str(path)) if path.is_file() else None
    if not content:
        why = missing if content is None else empty
        raise ConfigError(f"in-cluster configuration is unusable: {why}")
    return content
