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
import os
from collections.abc import Mapping
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
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader, KubeConfigMerger

    where = os.pathsep.join(str(p) for p in paths)
    try:
        merged = KubeConfigMerger(where).config
    except (ConfigException, OSError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot read kubeconfig {where}: {err}") from err
    chosen = context or first_current_context(paths)
    if not chosen:
        raise ConfigError(
            f"current-context is not set in {where}",
            hint="pass --context NAME, or run: kubectl config use-context NAME",
        )
    contexts = {c["name"]: c.value for c in merged["contexts"]} if "contexts" in merged else {}
    if chosen not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise ConfigError(
            f'context "{chosen}" does not exist in {where}',
            hint=f"known contexts: {known}",
        )
    configuration = Configuration()
    try:
        loader = KubeConfigLoader(config_dict=merged, active_context=chosen, config_base_path=None)
        loader.load_and_set(configuration)
    except ConfigException as err:
        raise ConfigError(f'kubeconfig context "{chosen}" is unusable: {err}') from err
    namespace = (contexts[chosen].get("context") or {}).get("namespace") or "default"
    return Connection(configuration, chosen, namespace, configuration.host)


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
        for entry in config.get(section) or ():
            body = entry.get(inner) or {}
            for data_key, file_key in fields.items():
                if body.get(data_key):
                    fd = os.memfd_create(file_key, 0)
                    held.append(fd)
                    os.write(fd, base64.b64decode(body.pop(data_key)))
                    body[file_key] = f"/proc/self/fd/{fd}"
    return config


def connection_from_dict(config: dict[str, Any], source: str) -> Connection:
    """A connection from a kubeconfig held in memory (a workload cluster's Secret).

    On Linux the credentials stay in memory (memfd); elsewhere the client's own temporary files,
    removed at exit, are the only copy.
    """
    from kubernetes.client.configuration import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader

    held: list[int] = []
    try:
        prepared = _in_memory_files(config, held) if hasattr(os, "memfd_create") else config
        context = prepared.get("current-context") or None
        configuration = Configuration()
        loader = KubeConfigLoader(config_dict=prepared, active_context=context, config_base_path="")
        loader.load_and_set(configuration)
    except (ConfigException, KeyError, TypeError, ValueError, AttributeError) as err:
        for fd in held:
            os.close(fd)
        raise ConfigError(f"the kubeconfig in {source} is unusable: {err}") from err
    return Connection(configuration, context, "default", configuration.host, tuple(held))
