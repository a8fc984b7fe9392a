"""Names shell completion offers, read from the management cluster: one LIST each, metadata
only where names suffice, each with a short description (value, description)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubectl_machinepool.base import kubeversion
from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group
from kubectl_machinepool.base.fields import dig, items, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import load_connection
from kubectl_machinepool.kube.poolread import read_pool
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.poolname import POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.model.revisions import read_history
from kubectl_machinepool.providers.registry import infra_pool
from kubectl_machinepool.providers.upgrades import settable

Values = list[tuple[str, str]]  # (value, description)
# What a read is given: the server, the namespace in scope (None: all), and --pool when typed.
Read = Callable[[Kube, str | None, str | None], Values]
NAMESPACES = Resource("", "v1", "Namespace", "namespaces", namespaced=False)


def read_names(
    read: Read,
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    pool: str | None,
    timeout: float,
    plugin_timeout: float,
) -> Values:
    """read() against the kubeconfig's cluster, in the namespace the flags and context give."""
    connection = load_connection(kubeconfig, context, plugin_timeout=plugin_timeout)
    scope = None if all_namespaces else namespace or connection.namespace
    with Kube(connection, timeout) as kube:
        return read(kube, scope, pool)


def _capi(kube: Kube, kind: str, plural: str) -> Resource:
    return Resource(CAPI_GROUP, kube.capi_version(), kind, plural)


def _pools(kube: Kube, namespace: str | None) -> list[dict[str, Any]]:
    return kube.list(_capi(kube, "MachinePool", "machinepools"), namespace)


def pools(kube: Kube, namespace: str | None, _pool: str | None) -> Values:
    return sorted(
        (text(dig(p, "metadata", "name")) or "", f"Cluster {dig(p, 'spec', 'clusterName')}")
        for p in _pools(kube, namespace)
    )


def clusters(kube: Kube, namespace: str | None, _pool: str | None) -> Values:
    found = kube.list(_capi(kube, "Cluster", "clusters"), namespace, metadata_only=True)
    return sorted((text(dig(c, "metadata", "name")) or "", "") for c in found)


def machines(kube: Kube, namespace: str | None, pool: str | None) -> Values:
    """Machines of the pool given with --pool, else of every pool in the namespace."""
    selector = f"{POOL_NAME_LABEL}={pool_label_value(pool)}" if pool else POOL_NAME_LABEL
    return sorted(
        (
            text(dig(m, "metadata", "name")) or "",
            f"Node {dig(m, 'status', 'nodeRef', 'name') or '(none)'}",
        )
        for m in kube.list(_capi(kube, "Machine", "machines"), namespace, selector)
    )


def nodes(kube: Kube, namespace: str | None, pool: str | None) -> Values:
    """The Nodes the pools reference (status.nodeRefs): no workload cluster round trip."""
    found = []
    for mp in _pools(kube, namespace):
        name = text(dig(mp, "metadata", "name")) or ""
        if pool and name != pool:
            continue
        for ref in items(dig(mp, "status", "nodeRefs")):
            found.append((text(ref.get("name")) or "", f"MachinePool {name}"))
    return sorted(found)


def namespaces(kube: Kube, _namespace: str | None, _pool: str | None) -> Values:
    found = kube.list(NAMESPACES, None, metadata_only=True)
    return sorted((text(dig(n, "metadata", "name")) or "", "") for n in found)


def versions(kube: Kube, namespace: str | None, _pool: str | None) -> Values:
    """The Kubernetes versions the pools and the Clusters' topologies ask for: what upgrade is
    usually given (the control plane's, after it moved first), each a release --version takes."""
    found: dict[str, str] = {}
    for pool in _pools(kube, namespace):
        if version := _release(dig(pool, "spec", "template", "spec", "version")):
            found.setdefault(version, f"MachinePool {dig(pool, 'metadata', 'name')}")
    for cluster in kube.list(_capi(kube, "Cluster", "clusters"), namespace):
        if version := _release(dig(cluster, "spec", "topology", "version")):
            found[version] = f"Cluster {dig(cluster, 'metadata', 'name')} topology"
    return sorted(found.items())


def _release(value: Any) -> str | None:
    """The value, when it is a release read whole (base/kubeversion.py)."""
    found = kubeversion.version(text(value))
    return str(found) if found is not None and found.plain else None


def set_paths(kube: Kube, namespace: str | None, _pool: str | None) -> Values:
    """The fields upgrade's --set may name, for the infra pool kinds the pools use."""
    found: dict[str, str] = {}
    for pool in _pools(kube, namespace):
        ref = dig(pool, "spec", "template", "spec", "infrastructureRef")
        provider = infra_pool(ref_group(ref), text(dig(ref, "kind")))
        for path in settable(provider.upgrade) if provider else ():
            found.setdefault(f"{path}=", provider.kind if provider else "")
    return sorted(found.items())


def revision_values(pool: dict[str, Any]) -> Values:
    """The revisions recorded on a MachinePool, newest first, each with what made it."""
    history = read_history(pool)
    return [(str(r.number), r.cause) for r in reversed(history.revisions)]


def revisions(kube: Kube, namespace: str | None, pool: str | None) -> Values:
    """The revisions of the pool named (rollout history's and undo's argument): one GET."""
    if not pool or namespace is None:
        return []
    return revision_values(read_pool(kube, namespace, pool))
