"""Values for shell completion: pools, Machines, Nodes, namespaces, contexts, Clusters, rules.

Every TAB is a fresh process, so this path stays light: the raw HTTP client (never the typed
APIs), a short timeout, metadata-only lists where names suffice, and a few seconds of cache
so that the second TAB of a word answers without a request. Any failure yields no values: a
broken cluster (or dump) must never break the shell. Given -f, pools and Clusters come from
the dump, read within the dump reader's bounds, as the command itself would read them.

A cached answer is found from the flags and the kubeconfig files' names and times alone, so the
modules that read the kubeconfig and talk to the server (and the YAML parser) are imported only
when the cache has no answer: a warm TAB pays for click and this module, nothing more.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import CompletionItem

from kubectl_machinepool.base.fields import dig, text
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.kube.kubefiles import kubeconfig_files, kubeconfig_paths

if TYPE_CHECKING:
    from kubectl_machinepool.kube.names import Read, Values

TIMEOUT = 2.0
# A credential plugin (aws, gcloud) may take seconds to start; a TAB must still end.
PLUGIN_TIMEOUT = 10.0
TTL = 5.0


def _params(ctx: click.Context) -> dict[str, Any]:
    """Every option typed so far, on this command and its parents."""
    merged: dict[str, Any] = {}
    for level in reversed(list(_chain(ctx))):
        merged.update({k: v for k, v in level.params.items() if v not in (None, (), False)})
    return merged


def _chain(ctx: click.Context | None) -> list[click.Context]:
    found = []
    while ctx is not None:
        found.append(ctx)
        ctx = ctx.parent
    return found


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kubectl-machinepool", "completion")


def _cached(key: list[Any], produce: Callable[[], Values]) -> Values:
    # The file is named by a checksum and holds the whole key, which must match: entries whose
    # checksums collide only replace each other. (A checksum, not hashlib: loading OpenSSL
    # would cost every warm TAB a few milliseconds.) Imported here, not at the top: every
    # command imports this module for its flags, and only a TAB needs these.
    import json
    import zlib

    exact = json.dumps(key, default=str)
    directory = _cache_dir()
    path = os.path.join(directory, f"{zlib.crc32(exact.encode()):08x}.json")
    try:
        if time.time() - os.stat(path).st_mtime < TTL:
            with open(path, encoding="utf-8") as cached:
                entry = json.load(cached)
            if entry["key"] == exact:
                return [(str(v), str(h)) for v, h in entry["values"]]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    values = produce()
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as cache:
            cache.write(json.dumps({"key": exact, "values": values}))
    except OSError:
        pass  # no cache, still an answer
    return values


def _offer(values: Values, incomplete: str) -> list[CompletionItem]:
    # A candidate goes back to the shell as one word on one line: a value with white space or
    # control characters (a hostile name) would break that protocol, and is never offered.
    return [
        CompletionItem(v, help=escape(h) or None)
        for v, h in values
        if v.startswith(incomplete) and _one_word(v)
    ]


def _one_word(value: str) -> bool:
    return value.isprintable() and not any(c.isspace() for c in value)


def _cache_key(what: str, params: dict[str, Any]) -> list[Any]:
    """What the answer depends on, known without loading the kubeconfig (the slow part): the
    flags, and which kubeconfig files there are and when they last changed."""
    paths = kubeconfig_files(params.get("kubeconfig"), os.environ)
    files = [(p, os.stat(p).st_mtime_ns) for p in paths]
    scope = [params.get(k) for k in ("context", "namespace", "all_namespaces", "pool")]
    return [what, files, *scope]


def _from_cluster(
    ctx: click.Context, incomplete: str, reader: str, params: dict[str, Any] | None = None
) -> list[CompletionItem]:
    """The values kube.names.<reader> reads, that module imported only when the cache has no
    answer."""
    params = _params(ctx) if params is None else params

    def produce() -> Values:
        from kubectl_machinepool.kube import names

        read: Read = getattr(names, reader)
        return names.read_names(
            read,
            kubeconfig=params.get("kubeconfig"),
            context=params.get("context"),
            namespace=params.get("namespace"),
            all_namespaces=bool(params.get("all_namespaces")),
            pool=params.get("pool"),
            timeout=TIMEOUT,
            plugin_timeout=PLUGIN_TIMEOUT,
        )

    try:
        return _offer(_cached(_cache_key(reader, params), produce), incomplete)
    except Exception:  # completion answers nothing rather than break the shell
        return []


def _dump_key(what: str, filenames: tuple[str, ...], namespace: str | None) -> list[Any]:
    """What a dump's answer depends on: each path named and when it last changed. Anything
    but a file or a directory (stdin, a FIFO, a device) is refused here: reading it would
    wait for a writer, or never end, while the user waits for a TAB."""
    files = []
    for name in filenames:
        path = os.path.abspath(name)
        info = os.stat(path)
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            raise ValueError(f"{name} is neither a file nor a directory")
        files.append((path, info.st_mtime_ns, info.st_size))
    return [what, files, namespace]


def _pool_help(pool: dict[str, Any]) -> str:
    cluster = text(dig(pool, "spec", "clusterName"))
    return f"Cluster {cluster}" if cluster else ""


# The completers a dump answers: the kind each lists, and what is said of each object.
_IN_DUMP: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "pools": ("MachinePool", _pool_help),
    "clusters": ("Cluster", lambda _cluster: ""),
}


def _from_dump(params: dict[str, Any], incomplete: str, reader: str) -> list[CompletionItem]:
    """The names of -f's objects of reader's kind, in the namespace typed (-n), all without."""
    filenames = tuple(params["filenames"])
    namespace = None if params.get("all_namespaces") else params.get("namespace")
    kind, described = _IN_DUMP[reader]

    def produce() -> Values:
        from kubectl_machinepool.base.apiversion import CAPI_GROUP
        from kubectl_machinepool.offline.dump import load_dump

        found = {
            (text(dig(obj, "metadata", "name")) or "", described(obj))
            for obj in load_dump(filenames, None).of_kind(CAPI_GROUP, kind)
            if namespace is None or dig(obj, "metadata", "namespace") == namespace
        }
        return sorted(found)

    try:
        key = _dump_key(f"dump {reader}", filenames, namespace)
        return _offer(_cached(key, produce), incomplete)
    except Exception:  # a missing or malformed dump offers nothing, quietly
        return []


def _revisions_in_dump(params: dict[str, Any], incomplete: str) -> list[CompletionItem]:
    filenames, pool = tuple(params["filenames"]), params["pool"]
    namespace = params.get("namespace")

    def produce() -> Values:
        from kubectl_machinepool.base.apiversion import CAPI_GROUP
        from kubectl_machinepool.kube.names import revision_values
        from kubectl_machinepool.offline.dump import load_dump

        return [
            value
            for obj in load_dump(filenames, None).of_kind(CAPI_GROUP, "MachinePool")
            if dig(obj, "metadata", "name") == pool
            and namespace in (None, dig(obj, "metadata", "namespace"))
            for value in revision_values(obj)
        ]

    try:
        return _offer(
            _cached(_dump_key(f"dump revisions {pool}", filenames, namespace), produce), incomplete
        )
    except Exception:  # a missing or malformed dump offers nothing, quietly
        return []


def revisions(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """rollout history --revision and undo --to-revision: the revisions recorded on the pool
    named, in the cluster or in -f's dump."""
    params = _params(ctx)
    # Completing an option's value, click leaves the words before it unassigned: the pool is
    # the first of them.
    named = params.get("pool") or next((a for a in ctx.args if not a.startswith("-")), None)
    if not named:
        return []
    params["pool"] = named.rpartition("/")[2]  # TYPE/NAME as every command takes it
    if params.get("filenames"):
        return _revisions_in_dump(params, incomplete)
    return _from_cluster(ctx, incomplete, "revisions", params)


Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def _values_of(reader: str) -> Completer:
    def complete(
        ctx: click.Context, _param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        if reader in _IN_DUMP and (params := _params(ctx)).get("filenames"):
            return _from_dump(params, incomplete, reader)
        return _from_cluster(ctx, incomplete, reader)

    return complete


pool_names = _values_of("pools")
cluster_names = _values_of("clusters")
machine_names = _values_of("machines")
node_names = _values_of("nodes")
namespace_names = _values_of("namespaces")
# upgrade's --version: versions the pools and topologies ask for; --set: the infra kinds' fields.
versions = _values_of("versions")
set_paths = _values_of("set_paths")


def context_values(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from kubectl_machinepool.kube.kubeconfig import context_names

    try:
        paths = kubeconfig_paths(_params(ctx).get("kubeconfig"), os.environ)
        values = [
            (name, f"cluster {cluster}" if cluster else "")
            for name, cluster in context_names(paths)
        ]
    except Exception:  # a broken kubeconfig offers nothing, quietly
        return []
    return _offer(values, incomplete)


def rule_codes(
    _ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """explain's argument: every rule's code, with its title; explain takes any case."""
    from kubectl_machinepool.diagnostics.rules import RULES

    return _offer([(rule.code, rule.title) for rule in RULES], incomplete.upper())


def fixable_rule_codes(
    _ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """fix --rule: the codes of the rules one of this tool's writes remedies, with the command."""
    from kubectl_machinepool.diagnostics.rules import RULES

    fixable = [(r.code, f"{r.title}: {r.remedy.command}") for r in RULES if r.remedy]
    return _offer(fixable, incomplete.upper())
