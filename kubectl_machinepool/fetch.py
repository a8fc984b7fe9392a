"""What to read for each command: one LIST per kind in scope, never one request per object.

Only the MachinePool list and API discovery are essential. Everything else that cannot be read
(RBAC, a missing CRD, an unreachable workload cluster) becomes a note and the rest is still shown.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

import yaml

from kubectl_machinepool.description import Selection, selected
from kubectl_machinepool.errors import ClusterAccessError, MachinePoolError, NotFoundError
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.kubeconfig import connection_from_dict, load_connection
from kubectl_machinepool.poolname import POOL_NAME_LABEL
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, WorkloadNodes, group_of

NODES = Resource("", "v1", "Node", "nodes", namespaced=False)
# A workload cluster is secondary: without --request-timeout, do not wait for it forever.
WORKLOAD_TIMEOUT = 10.0


def _template_refs(pools: Iterable[RawObject], field: str) -> dict[tuple[str, str], str | None]:
    """(group, kind) of each referenced infra pool or bootstrap config, and a v1beta1 version."""
    kinds: dict[tuple[str, str], str | None] = {}
    for pool in pools:
        template = ((pool.get("spec") or {}).get("template") or {}).get("spec") or {}
        ref = template.get(field) or {}
        if field == "bootstrap":
            ref = ref.get("configRef") or {}
        if not ref.get("kind"):
            continue
        api_version = ref.get("apiVersion", "")
        group = ref.get("apiGroup") or group_of(api_version)
        kinds.setdefault((group, ref["kind"]), api_version.rpartition("/")[2] or None)
    return kinds


def _list_kinds(
    kube: Kube,
    kinds: dict[tuple[str, str], str | None],
    namespace: str | None,
    notes: list[str],
    consequence: str,
) -> list[RawObject]:
    found: list[RawObject] = []
    for (group, kind), version in sorted(kinds.items()):
        try:
            found.extend(kube.list(kube.resource(group, kind, version), namespace))
        except (ClusterAccessError, NotFoundError) as err:
            notes.append(f"cannot read {kind} objects, so {consequence}: {err.message}")
    return found


def _machine_pools(kube: Kube, namespace: str | None, selection: Selection) -> list[RawObject]:
    resource = Resource(CAPI_GROUP, kube.capi_version(), "MachinePool", "machinepools")
    pools = kube.list(resource, namespace, selection.selector)
    return [p for p in pools if selected(p, selection)]


def read_pools(kube: Kube, namespace: str | None, selector: str | None) -> Snapshot:
    """For `list`: MachinePools in scope and their infra pools."""
    pools = _machine_pools(kube, namespace, Selection(namespace, selector=selector))
    notes: list[str] = []
    infra = _list_kinds(
        kube,
        _template_refs(pools, "infrastructureRef"),
        namespace,
        notes,
        "MACHINES shows <unknown>",
    )
    return Snapshot.of([*pools, *infra], notes)


def _machines(
    kube: Kube, infra: list[RawObject], namespace: str | None, notes: list[str]
) -> list[RawObject]:
    """MachinePool Machines and infra machines, where an infra pool says it has them."""
    machine_kinds = {
        (group_of(str(obj.get("apiVersion"))), str(obj["apiVersion"]).rpartition("/")[2], kind)
        for obj in infra
        if (kind := (obj.get("status") or {}).get("infrastructureMachineKind"))
        and kind != obj.get("kind")
    }
    if not machine_kinds:
        return []
    found: list[RawObject] = []
    resource = Resource(CAPI_GROUP, kube.capi_version(), "Machine", "machines")
    try:
        found += kube.list(resource, namespace, POOL_NAME_LABEL)
    except (ClusterAccessError, NotFoundError) as err:
        notes.append(f"cannot read Machines, so instances show without them: {err.message}")
    for group, version, kind in sorted(machine_kinds):
        try:
            # Core lists the machine kind in the infra pool's own API version.
            found += kube.list(kube.resource(group, kind, version), namespace, POOL_NAME_LABEL)
        except (ClusterAccessError, NotFoundError) as err:
            notes.append(f"cannot read {kind} objects: {err.message}")
    return found


def _secret_kubeconfig(kube: Kube, namespace: str, cluster: str) -> dict[str, object]:
    name = f"{cluster}-kubeconfig"
    secret = kube.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{name}")
    try:
        config = yaml.safe_load(base64.b64decode((secret.get("data") or {})["value"]))
    except (KeyError, ValueError, yaml.YAMLError) as err:
        raise MachinePoolError(
            f"Secret {namespace}/{name} holds no kubeconfig under key value"
        ) from err
    if not isinstance(config, dict):
        raise MachinePoolError(f"Secret {namespace}/{name} holds no kubeconfig under key value")
    return config


def workload_nodes(
    kube: Kube, namespace: str, cluster: str, override: str | None, timeout: float | None
) -> WorkloadNodes:
    """The Nodes of a Cluster's workload cluster, through its kubeconfig Secret (or override)."""
    try:
        if override:
            connection = load_connection(override, None)
        else:
            config = _secret_kubeconfig(kube, namespace, cluster)
            connection = connection_from_dict(config, f"Secret {namespace}/{cluster}-kubeconfig")
        with Kube(connection, timeout or WORKLOAD_TIMEOUT) as workload:
            nodes = workload.list(NODES, None)
    except MachinePoolError as err:
        note = f"Nodes of Cluster {namespace}/{cluster} are not shown: {err.message}"
        return WorkloadNodes(namespace, cluster, None, note)
    return WorkloadNodes(namespace, cluster, tuple(nodes))


def read_description(
    kube: Kube,
    namespace: str | None,
    selection: Selection,
    workload_kubeconfig: str | None,
    timeout: float | None,
) -> Snapshot:
    """For `describe` and later read commands: pools, their Clusters, provider objects, Nodes."""
    pools = _machine_pools(kube, namespace, selection)
    notes: list[str] = []
    objects: list[RawObject] = list(pools)
    cluster_names = {
        (p["metadata"].get("namespace", ""), (p.get("spec") or {}).get("clusterName", ""))
        for p in pools
    }
    if pools:
        clusters = Resource(CAPI_GROUP, kube.capi_version(), "Cluster", "clusters")
        try:
            objects += [
                c for c in kube.list(clusters, namespace)
                if (c["metadata"].get("namespace", ""), c["metadata"].get("name")) in cluster_names
            ]  # fmt: skip
        except (ClusterAccessError, NotFoundError) as err:
            notes.append(f"cannot read Clusters: {err.message}")
    infra = _list_kinds(
        kube,
        _template_refs(pools, "infrastructureRef"),
        namespace,
        notes,
        "infra pools are not shown",
    )
    objects += infra
    objects += _list_kinds(
        kube,
        _template_refs(pools, "bootstrap"),
        namespace,
        notes,
        "bootstrap configs are not shown",
    )
    objects += _machines(kube, infra, namespace, notes)
    workloads = [
        workload_nodes(kube, ns, name, workload_kubeconfig, timeout)
        for ns, name in sorted(cluster_names)
    ]
    return Snapshot.of(objects, notes, workloads)
