"""A read's workload clusters reached before its MachinePools are in: the Clusters the same scope's
pools named the last time (and the one --cluster names), each one's kubeconfig Secret read
beside the MachinePool LIST and TCP connections to the server it named last time opened then.

Over a wide-area link the workload cluster's Nodes end a describe's longest chain: the
MachinePool LIST gives spec.clusterName, the `<cluster>-kubeconfig` Secret the server and the
credentials, then TCP, TLS and the Node LIST, each a round trip after the one before (7 in
all). One scope (server, context, namespace, names, selectors) is read again and again, and
its pools seldom move to another Cluster, nor a Cluster to another server: remembering both,
the Secret GET goes out with the MachinePool LIST and the workload server's TCP handshakes are
done by the time it answers, so only TLS and the Node LIST follow (5). Credentials are never
kept: TLS waits for the Secret.

What is kept, in the user's cache directory (a file per management server and context, the
user's alone), is names and server URLs; it is read as untrusted, each value checked for what
it must be. A wrong guess costs a Secret GET and a few TCP connections; what the read shows is
the same, as the read itself takes the Clusters from the pools.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import zlib
from collections.abc import Iterable
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.interruptible import timeouts
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.pool import park
from kubectl_machinepool.kube.proxies import environment_proxies, proxy_for
from kubectl_machinepool.kube.workload import WORKLOAD_TIMEOUT, workload_kube
from kubectl_machinepool.model.selector import Selection, selected

# More Clusters than reads run at once (parallel.MAX_PARALLEL) are not worth guessing at.
MAX_REMEMBERED = 8
# Scopes (and workload servers) kept per management server and context, the newest.
MAX_SCOPES = 64
MAX_FILE = 128 << 10
# A namespace or a Cluster's name: a DNS subdomain, as the API server admits them.
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_written = threading.Lock()  # one run's reads remember one at a time

Clusters = list[tuple[str, str]]


def pools_read(
    kube: Kube,
    namespace: str | None,
    selection: Selection,
    override: str | None,
    timeout: float | None,
    *,
    ahead: int,
    connections: int,
    selector: bool = False,
) -> list[RawObject]:
    """Every MachinePool in scope (by selection's label selector too, if selector), with ahead
    connections opened beside their LIST for the reads after it (kube.open_ahead), and the
    Clusters this scope's pools named last time reached beside it (their Secret GETs on
    connections of their own, so as many fewer are opened ahead; connections TCP connections
    to each one's server); then those the selected pools name now, remembered for the next
    read. --workload-kubeconfig reads no Secret: none is started."""
    label_selector = selection.selector if selector else None
    memory = _Memory(kube)
    scope = json.dumps([namespace, sorted(selection.names), selection.selector, selection.cluster])
    remembered = memory.scopes.get(scope, []) if override is None else []
    named = {(namespace, selection.cluster)} if namespace and selection.cluster else set()
    guessed = sorted({*remembered, *_names(named)}) if override is None else []
    kube.open_ahead(max(ahead - len(guessed), 0))
    _warm(kube, memory, guessed, timeout, connections)
    pools = [
        p
        for p in kube.machine_pools(namespace, label_selector)
        if selected(p, Selection(namespace, selector=label_selector))
    ]
    if override is None:
        found = _names(
            (text(dig(p, "metadata", "namespace")), text(dig(p, "spec", "clusterName")))
            for p in pools
            if selected(p, selection)
        )
        if len(found) <= MAX_REMEMBERED:  # more: each read's own slot bounds how many at once
            _warm(kube, memory, found, timeout, 0)
        if found != remembered:
            memory.remember(scopes={scope: found if len(found) <= MAX_REMEMBERED else []})
    return pools


def _warm(
    kube: Kube, memory: _Memory, clusters: Clusters, timeout: float | None, connections: int
) -> None:
    """Each Cluster's Secret read in the background, and connections parked to its server;
    workload.workload_of() takes what each made."""
    for namespace, cluster in clusters:
        key = (namespace, cluster, None, timeout)
        if key in kube.workloads or key in kube.warming:
            continue
        server = memory.servers.get(f"{namespace}/{cluster}")
        if server and connections and proxy_for(server, None, environment_proxies()) is None:
            park(server, connections, timeouts(timeout or WORKLOAD_TIMEOUT))
        made = partial(_reached, kube, memory, namespace, cluster, timeout)
        # slot=False: the Node read that takes it waits for it under its own slot.
        kube.warming[key] = Pending(made, slot=False)


def _reached(
    kube: Kube, memory: _Memory, namespace: str, cluster: str, timeout: float | None
) -> Kube:
    made = workload_kube(kube, namespace, cluster, None, timeout)
    kube.adopt(made)  # closed with the run, taken or not
    server = made.connection.settings.host
    if memory.servers.get(f"{namespace}/{cluster}") != server and _url(server):
        memory.remember(servers={f"{namespace}/{cluster}": server})
    return made


def _names(clusters: Iterable[tuple[str | None, str | None]]) -> Clusters:
    """Those that are names, sorted, once each."""
    return sorted({(n, c) for n, c in clusters if _name(n) and _name(c)})  # type: ignore[misc]


def _name(value: object) -> bool:
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def _url(value: object) -> bool:
    if not isinstance(value, str) or len(value) > 2048 or not value.isprintable():
        return False
    try:
        parts = urlsplit(value)
        return parts.scheme == "https" and bool(parts.hostname) and parts.port != 0
    except ValueError:
        return False


class _Memory:
    """The file of one management server and context: its scopes' Clusters and the workload
    servers last reached, as far as they are what they must be."""

    def __init__(self, kube: Kube) -> None:
        self._owner = json.dumps([kube.connection.server, kube.connection.context])
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        self._path = os.path.join(
            base, "kubectl-machinepool", "clusters", f"{zlib.crc32(self._owner.encode()):08x}.json"
        )
        self.scopes: dict[str, Clusters] = {}
        self.servers: dict[str, str] = {}
        self._recall()

    def _recall(self) -> None:
        try:
            with open(self._path, "rb") as cached:
                data = cached.read(MAX_FILE + 1)
            entry = json.loads(data) if len(data) <= MAX_FILE else None
        except (OSError, ValueError, RecursionError):
            return
        if not isinstance(entry, dict) or entry.get("owner") != self._owner:
            return
        for scope, listed in _newest(entry.get("scopes")):
            if isinstance(listed, list) and len(listed) <= MAX_REMEMBERED:
                pairs = [tuple(i) for i in listed if isinstance(i, list) and len(i) == 2]
                if len(found := _names(pairs)) == len(listed):
                    self.scopes[scope] = found
        for cluster, server in _newest(entry.get("servers")):
            namespace, _, name = cluster.partition("/")
            if _name(namespace) and _name(name) and _url(server):
                self.servers[cluster] = server

    def remember(
        self, *, scopes: dict[str, Clusters] | None = None, servers: dict[str, str] | None = None
    ) -> None:
        """Written whole or not at all (another run may read it meanwhile), over what the file
        holds now; the oldest go first. No cache is no error."""
        with _written:
            self._recall()
            for mine, new in ((self.scopes, scopes or {}), (self.servers, servers or {})):
                for key, value in new.items():
                    mine.pop(key, None)
                    mine[key] = value  # type: ignore[assignment]
            entry = {
                "owner": self._owner,
                "scopes": dict(list(self.scopes.items())[-MAX_SCOPES:]),
                "servers": dict(list(self.servers.items())[-MAX_SCOPES:]),
            }
            directory = os.path.dirname(self._path)
            try:
                os.makedirs(directory, mode=0o700, exist_ok=True)
                fd, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")  # mode 0600
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(entry, out)
                os.replace(temporary, self._path)
            except OSError:
                pass


def _newest(value: Any) -> list[tuple[Any, Any]]:
    """A mapping's last MAX_SCOPES items, or none from what is not a mapping."""
    return list(value.items())[-MAX_SCOPES:] if isinstance(value, dict) else []
