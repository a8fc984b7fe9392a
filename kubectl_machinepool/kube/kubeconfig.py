"""Kubeconfig documents, read and checked the way kubectl reads them, before anything uses them.

Which files: kubefiles.py, by kubectl's rules. Files of a $KUBECONFIG path list are merged: the
first file to name a cluster/context/user wins, and the first file that sets current-context wins.

Every document is validated and normalised into the frozen entries below: names are strings,
flags are booleans, data fields are base64, each entry's fields have the types kubectl's Go
structs give them (kubectl refuses a file that does not fit). Duplicated names are refused, as
kubectl does. Nothing downstream ever sees the raw document, so a value that only looks like a
name (`1`, `true`, `null`) can never select a different entry than the one that was checked.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from kubectl_machinepool.base.errors import ConfigError, MachinePoolError
from kubectl_machinepool.base.records import record


@record(slots=False)
class ClusterEntry:
    server: str
    ca_data: bytes | None = None
    ca_file: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    disable_compression: bool = False


@record(slots=False)
class ExecConfig:
    """An exec credential plugin, as kubectl runs it."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"
    # Where a relative command is found: the directory of the kubeconfig that names it.
    directory: str | None = None


@record(slots=False)
class UserEntry:
    token: str | None = None
    token_file: str | None = None
    cert_data: bytes | None = None
    cert_file: str | None = None
    key_data: bytes | None = None
    key_file: str | None = None
    username: str | None = None
    password: str | None = None
    exec: ExecConfig | None = None
    auth_provider: str | None = None
    auth_provider_config: tuple[tuple[str, str], ...] = ()
    # kubectl's as/as-groups/as-uid/as-user-extra, as the Impersonate-* headers it sends.
    impersonation: tuple[tuple[str, str], ...] = ()


@record(slots=False)
class ContextEntry:
    cluster: str
    user: str
    namespace: str | None = None


@record(slots=False)
class Kubeconfig:
    clusters: Mapping[str, ClusterEntry] = field(default_factory=dict)
    users: Mapping[str, UserEntry] = field(default_factory=dict)
    contexts: Mapping[str, ContextEntry] = field(default_factory=dict)
    current_context: str | None = None
    source: str = ""


def _read_yaml(path: Path) -> Any:
    # Imported at the first read: a run that only needs this module's types (or none of its
    # files) must not pay the YAML parser's import in its start-up.
    from kubectl_machinepool.offline.dump import read_documents

    try:
        content = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or str(err).splitlines()[0]
        raise ConfigError(f"cannot read kubeconfig {path}: {reason}") from err
    try:
        # Dumps' bounds on YAML aliases and nesting: a kubeconfig is small, its expansion too.
        documents = read_documents(str(path), content)
    except MachinePoolError as err:
        raise ConfigError(f"cannot read kubeconfig {path}: {err.message}") from err
    return documents[0] if documents else None


def read_files(paths: list[Path]) -> Kubeconfig:
    """The files merged the way kubectl merges them; relative paths are each file's own."""
    merged = Kubeconfig(source=os.pathsep.join(str(p) for p in paths))
    for path in paths:
        merged = _merge(merged, parse(_read_yaml(path), str(path), path.parent))
    return merged


def context_names(paths: list[Path]) -> list[tuple[str, str]]:
    """(context, its cluster) of every context in these files; the first file wins a name."""
    return sorted((name, c.cluster) for name, c in read_files(paths).contexts.items())


def _merge(first: Kubeconfig, later: Kubeconfig) -> Kubeconfig:
    return Kubeconfig(
        {**later.clusters, **first.clusters},
        {**later.users, **first.users},
        {**later.contexts, **first.contexts},
        first.current_context or later.current_context,
        first.source,
    )


# -- validation -------------------------------------------------------------------------------


class _Where:
    """Where in which document a value sits, for messages that point at it."""

    def __init__(self, source: str, path: str = "") -> None:
        self.source, self.path = source, path

    def at(self, key: str | int) -> _Where:
        step = f"[{key}]" if isinstance(key, int) else (f".{key}" if self.path else key)
        return _Where(self.source, self.path + step)

    def fail(self, expected: str) -> ConfigError:
        return ConfigError(
            f"kubeconfig {self.source} is invalid: {self.path or 'the document'} must be {expected}"
        )


def _mapping(value: Any, where: _Where, *, optional: bool = True) -> dict[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise where.fail("a mapping")
    return value


def _string(value: Any, where: _Where) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise where.fail("a string")
    return value or None


def _boolean(value: Any, where: _Where) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise where.fail("true or false")
    return value


def _strings(value: Any, where: _Where) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise where.fail("a list of strings")
    return tuple(value)


def _data(value: Any, where: _Where) -> bytes | None:
    text = _string(value, where)
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise where.fail("base64 data") from None


def _file(value: Any, where: _Where, directory: Path | None) -> str | None:
    text = _string(value, where)
    if text is None or directory is None:
        return text
    return str((directory / Path(text).expanduser()).resolve())


def _named(document: dict[str, Any], section: str, where: _Where) -> dict[str, dict[str, Any]]:
    """A section's entries by name; each name a string, given once, as kubectl insists."""
    entries = document.get(section)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise where.at(section).fail("a list")
    found: dict[str, dict[str, Any]] = {}
    for index, raw in enumerate(entries):
        here = where.at(section).at(index)
        entry = _mapping(raw, here, optional=False)
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise here.at("name").fail("a non-empty string")
        if name in found:
            raise ConfigError(
                f"kubeconfig {where.source} is invalid: {section} names {name!r} twice"
            )
        found[name] = _mapping(entry.get(section[:-1]), here.at(section[:-1]))
    return found


# A TLS server name is a DNS name or an IP address; anything else only breaks the handshake.
_HOST_NAME = re.compile(r"[A-Za-z0-9.:\-]{1,253}")
# kubectl sends one header per impersonation entry; nobody needs this many.
MAX_IMPERSONATION = 64


def _host_name(value: Any, where: _Where) -> str | None:
    name = _string(value, where)
    if name is not None and not _HOST_NAME.fullmatch(name):
        raise where.fail("a host name")
    return name


def _cluster(body: dict[str, Any], where: _Where, directory: Path | None) -> ClusterEntry:
    return ClusterEntry(
        server=_string(body.get("server"), where.at("server")) or "",
        ca_data=_data(
            body.get("certificate-authority-data"), where.at("certificate-authority-data")
        ),
        ca_file=_file(
            body.get("certificate-authority"), where.at("certificate-authority"), directory
        ),
        insecure=_boolean(
            body.get("insecure-skip-tls-verify"), where.at("insecure-skip-tls-verify")
        ),
        tls_server_name=_host_name(body.get("tls-server-name"), where.at("tls-server-name")),
        proxy_url=_string(body.get("proxy-url"), where.at("proxy-url")),
        disable_compression=_boolean(
            body.get("disable-compression"), where.at("disable-compression")
        ),
    )


def _exec(value: Any, where: _Where, directory: Path | None) -> ExecConfig | None:
    if value is None:
        return None
    body = _mapping(value, where, optional=False)
    env = []
    for index, item in enumerate(body.get("env") or []):
        pair = _mapping(item, where.at("env").at(index), optional=False)
        name = _string(pair.get("name"), where.at("env").at(index).at("name"))
        if name is None:
            raise where.at("env").at(index).at("name").fail("a non-empty string")
        env.append((name, _string(pair.get("value"), where.at("env").at(index)) or ""))
    return ExecConfig(
        command=_string(body.get("command"), where.at("command")) or "",
        api_version=_string(body.get("apiVersion"), where.at("apiVersion")) or "",
        args=_strings(body.get("args"), where.at("args")),
        env=tuple(env),
        provide_cluster_info=_boolean(
            body.get("provideClusterInfo"), where.at("provideClusterInfo")
        ),
        interactive_mode=_string(body.get("interactiveMode"), where.at("interactiveMode"))
        or "IfAvailable",
        directory=str(directory) if directory else None,
    )


def _impersonation(body: dict[str, Any], where: _Where) -> tuple[tuple[str, str], ...]:
    groups = body.get("as-groups")
    extra = _mapping(body.get("as-user-extra"), where.at("as-user-extra"))
    # Counted before anything is built: aliased lists would otherwise expand first.
    entries = (len(groups) if isinstance(groups, list) else 0) + sum(
        len(v) if isinstance(v, list) else 1 for v in extra.values()
    )
    if entries > MAX_IMPERSONATION:
        raise where.fail(f"at most {MAX_IMPERSONATION} impersonation entries")
    headers: list[tuple[str, str]] = []
    user = _string(body.get("as"), where.at("as"))
    if user:
        headers.append(("Impersonate-User", user))
    headers += [("Impersonate-Group", g) for g in _strings(groups, where.at("as-groups"))]
    uid = _string(body.get("as-uid"), where.at("as-uid"))
    if uid:
        headers.append(("Impersonate-Uid", uid))
    for key, values in extra.items():
        headers += [
            (f"Impersonate-Extra-{key}", v)
            for v in _strings(values, where.at("as-user-extra").at(key))
        ]
    return tuple(headers)


def _user(body: dict[str, Any], where: _Where, directory: Path | None) -> UserEntry:
    provider = _mapping(body.get("auth-provider"), where.at("auth-provider"))
    provider_config = _mapping(provider.get("config"), where.at("auth-provider").at("config"))
    if "auth-provider" in body and not provider:
        raise where.at("auth-provider").fail("a mapping with a name")
    return UserEntry(
        token=_string(body.get("token"), where.at("token")),
        token_file=_file(body.get("tokenFile"), where.at("tokenFile"), directory),
        cert_data=_data(body.get("client-certificate-data"), where.at("client-certificate-data")),
        cert_file=_file(body.get("client-certificate"), where.at("client-certificate"), directory),
        key_data=_data(body.get("client-key-data"), where.at("client-key-data")),
        key_file=_file(body.get("client-key"), where.at("client-key"), directory),
        username=_string(body.get("username"), where.at("username")),
        password=_string(body.get("password"), where.at("password")),
        exec=_exec(body.get("exec"), where.at("exec"), directory),
        auth_provider=_string(provider.get("name"), where.at("auth-provider").at("name"))
        or ("" if provider else None),
        auth_provider_config=tuple(
            (k, v) for k, v in provider_config.items() if isinstance(v, str)
        ),
        impersonation=_impersonation(body, where),
    )


def _context(body: dict[str, Any], where: _Where) -> ContextEntry:
    return ContextEntry(
        cluster=_string(body.get("cluster"), where.at("cluster")) or "",
        user=_string(body.get("user"), where.at("user")) or "",
        namespace=_string(body.get("namespace"), where.at("namespace")),
    )


def parse(document: Any, source: str, directory: Path | None) -> Kubeconfig:
    """A validated kubeconfig; file paths resolve against directory (None: kept as written)."""
    where = _Where(source)
    if document is not None and not isinstance(document, dict):
        raise ConfigError(f"kubeconfig {source} is not a kubeconfig (expected a mapping)")
    doc = _mapping(document, where)
    clusters = _named(doc, "clusters", where)
    users = _named(doc, "users", where)
    contexts = _named(doc, "contexts", where)
    return Kubeconfig(
        {n: _cluster(b, where.at("clusters").at(n), directory) for n, b in clusters.items()},
        {n: _user(b, where.at("users").at(n), directory) for n, b in users.items()},
        {n: _context(b, where.at("contexts").at(n)) for n, b in contexts.items()},
        _string(doc.get("current-context"), where.at("current-context")),
        source,
    )
