"""Find the management cluster the way kubectl does.

Rules (kubectl's, not the Python client's `load_config()`):
  --kubeconfig FILE      exactly that file, which must exist;
  else $KUBECONFIG       a path list, merged: the first file to name a cluster/context/user wins,
                         and the first file that sets current-context wins (the 37.x client's
                         merger lets the last one win, so we pick it ourselves);
  else ~/.kube/config    when it exists;
  else in-cluster        only when there is no kubeconfig at all and the pod environment is set.
Exec credential plugins, tokens, client certificates and auth-providers are handled by the
client's KubeConfigLoader, which never writes refreshed tokens back here (no persister).
"""

from __future__ import annotations

import base64
import copy
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubectl_machinepool.errors import ConfigError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class Connection:
    """A ready client configuration and what kubectl would print about it."""

    configuration: Any  # kubernetes.client.Configuration
    context: str | None  # None when running in-cluster
    namespace: str
    server: str
    # Anonymous in-memory files holding credentials; closed with the connection.
    held_files: tuple[int, ...] = ()
    # Impersonate-* headers from the kubeconfig user's as/as-groups, as kubectl sends them.
    headers: tuple[tuple[str, str], ...] = ()


def kubeconfig_paths(flag: str | None, env: Mapping[str, str]) -> list[Path]:
    if flag:
        path = Path(flag).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"kubeconfig file {flag} does not exist",
                hint="pass an existing file to --kubeconfig, or drop the flag to use KUBECONFIG",
            )
        return [path]
    if env.get("KUBECONFIG"):
        listed = [Path(p).expanduser() for p in env["KUBECONFIG"].split(os.pathsep) if p]
        return [p for p in listed if p.is_file()]
    home = Path(env.get("HOME", "~")).expanduser() / ".kube" / "config"
    return [home] if home.is_file() else []


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot read kubeconfig {path}: {err}") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"kubeconfig {path} is not a kubeconfig (expected a mapping)")
    return data


def first_current_context(paths: list[Path]) -> str | None:
    for path in paths:
        current = _read_yaml(path).get("current-context")
        if current:
            return str(current)
    return None


def context_names(paths: list[Path]) -> list[tuple[str, str]]:
    """(context, its cluster) of every context in these files; the first file wins a name."""
    found: dict[str, str] = {}
    for path in paths:
        for entry in _read_yaml(path).get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name"):
                context = entry.get("context")
                cluster = context.get("cluster", "") if isinstance(context, dict) else ""
                found.setdefault(str(entry["name"]), str(cluster))
    return sorted(found.items())


def load_connection(
    kubeconfig: str | None,
    context: str | None,
    env: Mapping[str, str] | None = None,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> Connection:
    env = os.environ if env is None else env
    paths = kubeconfig_paths(kubeconfig, env)
    if paths:
        return _from_kubeconfig(paths, context)
    if env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"):
        return _in_cluster(env, service_account_dir)
    raise ConfigError(
        "no kubeconfig found and not running in a cluster",
        hint="set KUBECONFIG or pass --kubeconfig FILE",
    )


def _from_kubeconfig(paths: list[Path], context: str | None) -> Connection:
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigMerger

    where = os.pathsep.join(str(p) for p in paths)
    for path in paths:
        _read_yaml(path)  # each file must be a mapping before the client's merger sees it
    try:
        merged = KubeConfigMerger(where).config
    except (ConfigException, OSError, yaml.YAMLError, TypeError, KeyError, AttributeError) as err:
        raise ConfigError(f"cannot read kubeconfig {where}: {err}") from err
    chosen = context or first_current_context(paths)
    if not chosen:
        raise ConfigError(
            f"current-context is not set in {where}",
            hint="pass --context NAME, or run: kubectl config use-context NAME",
        )
    return _connect(merged, chosen, where, base_path=None)


def _plain(node: Any) -> Any:
    """The dict or list inside the client's ConfigNode wrappers (or the value itself)."""
    return node.value if hasattr(node, "safe_get") else node


def _entry(config: Any, section: str, name: str) -> dict[str, Any]:
    """The body of a named kubeconfig entry (a context, cluster or user), or {}."""
    top = _plain(config)
    entries = _plain(top.get(section)) if isinstance(top, dict) else None
    for node in entries if isinstance(entries, list) else ():
        item = _plain(node)
        if isinstance(item, dict) and item.get("name") == name:
            body = _plain(item.get(section[:-1]))
            return dict(body) if isinstance(body, dict) else {}
    return {}


def _impersonation(user: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """kubectl's as/as-groups/as-uid/as-user-extra, as the Impersonate-* headers it sends."""
    headers: list[tuple[str, str]] = []
    if user.get("as"):
        headers.append(("Impersonate-User", str(user["as"])))
    headers += [("Impersonate-Group", str(g)) for g in user.get("as-groups") or ()]
    if user.get("as-uid"):
        headers.append(("Impersonate-Uid", str(user["as-uid"])))
    for key, values in (user.get("as-user-extra") or {}).items():
        headers += [(f"Impersonate-Extra-{key}", str(v)) for v in values or ()]
    return tuple(headers)


@contextmanager
def _credential_errors() -> Iterator[list[str]]:
    """The client logs a failing exec plugin and goes on without credentials; collect instead."""
    errors: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            errors.append(record.getMessage())

    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = [Collect(logging.ERROR)]
    try:
        yield errors
    finally:
        root.handlers = saved


def _connect(
    config: Any, context: str, where: str, base_path: str | None, held: tuple[int, ...] = ()
) -> Connection:
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader

    context_body = _entry(config, "contexts", context)
    if not context_body:
        top = _plain(config)
        entries = [_plain(c) for c in (top.get("contexts") or ())] if isinstance(top, dict) else []
        names = [c.get("name") for c in entries if isinstance(c, dict)]
        raise ConfigError(
            f'context "{context}" does not exist in {where}',
            hint=f"known contexts: {', '.join(sorted(str(n) for n in names if n)) or 'none'}",
        )
    user = _entry(config, "users", str(context_body.get("user", "")))
    configuration = Configuration()
    try:
        with _credential_errors() as errors:
            loader = KubeConfigLoader(
                config_dict=config, active_context=context, config_base_path=base_path
            )
            loader.load_and_set(configuration)
    except (ConfigException, TypeError, KeyError, AttributeError, ValueError) as err:
        raise ConfigError(f'kubeconfig context "{context}" is unusable: {err}') from err
    if errors and "exec" in user:
        raise ConfigError(
            f'getting credentials for context "{context}" failed: {errors[0]}'.splitlines()[0],
            hint="run the credential plugin named in the kubeconfig by hand to see why",
        )
    if not configuration.host or configuration.host == "http://localhost":
        raise ConfigError(f'kubeconfig context "{context}" names no cluster server in {where}')
    namespace = context_body.get("namespace") or "default"
    return Connection(
        configuration, context, namespace, configuration.host, held, _impersonation(user)
    )


def _in_cluster(env: Mapping[str, str], service_account_dir: Path) -> Connection:
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.incluster_config import InClusterConfigLoader

    configuration = Configuration()
    try:
        InClusterConfigLoader(
            token_filename=str(service_account_dir / "token"),
            cert_filename=str(service_account_dir / "ca.crt"),
            environ=env,
        ).load_and_set(configuration)
    except ConfigException as err:
        raise ConfigError(f"in-cluster configuration is unusable: {err}") from err
    ns_file = service_account_dir / "namespace"
    namespace = ns_file.read_text().strip() if ns_file.is_file() else "default"
    return Connection(configuration, None, namespace or "default", configuration.host)


# kubeconfig fields whose data the client would otherwise copy into temporary files on disk.
_DATA_FIELDS = {
    "clusters": ("cluster", {"certificate-authority-data": "certificate-authority"}),
    "users": (
        "user",
        {"client-certificate-data": "client-certificate", "client-key-data": "client-key"},
    ),
}


def _in_memory_files(config: dict[str, Any], held: list[int]) -> dict[str, Any]:
    """Move certificate data into memfd files, so the Python client reads but never writes them."""
    config = copy.deepcopy(config)
    for section, (inner, fields) in _DATA_FIELDS.items():
        entries = config.get(section)
        for entry in entries if isinstance(entries, list) else ():
            body = entry.get(inner) if isinstance(entry, dict) else None
            if not isinstance(body, dict):
                continue  # malformed: the client's own parsing reports it as a ConfigError
            for data_key, file_key in fields.items():
                if body.get(data_key):
                    fd = os.memfd_create(file_key, 0)
                    held.append(fd)
                    os.write(fd, base64.b64decode(body.pop(data_key)))
                    body[file_key] = f"/proc/self/fd/{fd}"
    return config


# What a Secret's kubeconfig may not ask for: running commands or reading local files. Anyone
# who can write Secrets in the namespace would otherwise act on the operator's machine.
_UNSAFE_USER_KEYS = ("exec", "auth-provider", "tokenFile", "client-certificate", "client-key")
_UNSAFE_CLUSTER_KEYS = ("certificate-authority",)


def _refuse_unsafe(config: dict[str, Any], context: str, source: str) -> None:
    context_body = _entry(config, "contexts", context)
    user = _entry(config, "users", str(context_body.get("user", "")))
    cluster = _entry(config, "clusters", str(context_body.get("cluster", "")))
    unsafe = [k for k in _UNSAFE_USER_KEYS if k in user] + [
        k for k in _UNSAFE_CLUSTER_KEYS if k in cluster
    ]
    if unsafe:
        raise ConfigError(
            f"the kubeconfig in {source} uses {', '.join(unsafe)}; from a Secret only inline "
            "credentials are used",
            hint="pass --workload-kubeconfig FILE with a kubeconfig you trust",
        )


def connection_from_dict(config: dict[str, Any], source: str) -> Connection:
    """A connection from a kubeconfig held in memory (a workload cluster's Secret).

    Only inline credentials are accepted. On Linux they stay in memory (memfd); elsewhere the
    client's own temporary files, removed at exit, are the only copy.
    """
    context = str(config.get("current-context") or "")
    _refuse_unsafe(config, context, source)
    held: list[int] = []
    try:
        prepared = _in_memory_files(config, held) if hasattr(os, "memfd_create") else config
        return _connect(prepared, context, source, base_path="", held=tuple(held))
    except (ConfigError, ValueError, TypeError) as err:
        for fd in held:
            os.close(fd)
        if isinstance(err, ConfigError):
            raise
        raise ConfigError(f"the kubeconfig in {source} is unusable: {err}") from err
