"""What to read for each command: one LIST per kind in scope, never one request per object.

Only the MachinePool list and API discovery are essential. Everything else that cannot be read
(RBAC, a missing CRD, an unreachable workload cluster) becomes a note and the rest is still shown.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from kubectl_machinepool.connection import connection_from_dict, load_connection
from kubectl_machinepool.description import Selection, selected
from kubectl_machinepool.disruption import Disruption, disruption_of
from kubectl_machinepool.dump import read_documents
from kubectl_machinepool.errors import MachinePoolError, UnreachableError
from kubectl_machinepool.fields import dig, text
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.poolname import POOL_NAME_LABEL
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, WorkloadNodes, group_of

NODES = Resource("", "v1", "Node", "nodes", namespaced=False)
SECRETS = Resource("", "v1", "Secret", "secrets")
PODS = Resource("", "v1", "Pod", "pods")
BUDGETS = Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
DEPLOYMENTS = Resource("apps", "v1", "Deployment", "deployments")
BOOTSTRAP_TOKENS = "type=bootstrap.kubernetes.io/token"
# clusterctl labels the core provider's components with this.
CORE_PROVIDER = "cluster.x-k8s.io/provider=cluster-api"
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


class _Reads:
    """Secondary reads: a failure (RBAC, missing CRD, a 5xx from a webhook) becomes a note."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.notes: list[str] = []
        self.unread: list[tuple[str, str]] = []
        self.unread_notes: list[tuple[str, str, str]] = []
        # Reads only rules need stay silent in describe: their absence is said by the findings.
        self.quiet = False

    def read(
        self,
        group: str,
        kind: str,
        namespace: str | None,
        consequence: str,
        *,
        version: str | None = None,
        selector: str | None = None,
    ) -> list[RawObject]:
        try:
            resource = self.kube.resource(group, kind, version)
        except MachinePoolError as err:
            return self._failed(group, kind, consequence, err)
        return self.read_resource(resource, namespace, consequence, selector=selector)

    def read_resource(
        self,
        resource: Resource,
        namespace: str | None,
        consequence: str,
        *,
        selector: str | None = None,
        metadata_only: bool = False,
    ) -> list[RawObject]:
        try:
            return self.kube.list(resource, namespace, selector, metadata_only=metadata_only)
        except MachinePoolError as err:
            return self._failed(resource.group, resource.kind, consequence, err)

    def _failed(
        self, group: str, kind: str, consequence: str, err: MachinePoolError
    ) -> list[RawObject]:
        if not self.quiet:
            note = f"cannot read {kind} objects, so {consequence}: {err.message}"
            self.notes.append(note)
            self.unread_notes.append((group, kind, note))
        self.unread.append((group, kind))
        return []

    def kinds(
        self, kinds: dict[tuple[str, str], str | None], namespace: str | None, consequence: str
    ) -> list[RawObject]:
        found: list[RawObject] = []
        for (group, kind), version in sorted(kinds.items()):
            found += self.read(group, kind, namespace, consequence, version=version)
        return found


def _machine_pools(kube: Kube, namespace: str | None, selection: Selection) -> list[RawObject]:
    resource = Resource(CAPI_GROUP, kube.capi_version(), "MachinePool", "machinepools")
    pools = kube.list(resource, namespace, selection.selector)
    return [p for p in pools if selected(p, selection)]


def read_pools(kube: Kube, namespace: str | None, selector: str | None) -> Snapshot:
    """For `list`: MachinePools in scope and their infra pools."""
    pools = _machine_pools(kube, namespace, Selection(namespace, selector=selector))
    reads = _Reads(kube)
    refs = _template_refs(pools, "infrastructureRef")
    infra = reads.kinds(refs, namespace, "MACHINES shows <unknown>")
    return Snapshot.of(
        [*pools, *infra], reads.notes, unread=reads.unread, unread_notes=reads.unread_notes
    )


def _machine_kinds(infra: list[RawObject]) -> set[tuple[str, str, str]]:
    """(group, version, kind) of the per-instance kinds infra pools declare (not their own)."""
    found = set()
    for obj in infra:
        kind = (obj.get("status") or {}).get("infrastructureMachineKind")
        if isinstance(kind, str) and kind and kind != obj.get("kind"):
            group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
            found.add((group, version, kind))
    return found


def _machines(reads: _Reads, infra: list[RawObject], namespace: str | None) -> list[RawObject]:
    """MachinePool Machines and infra machines, where an infra pool says it has them."""
    kinds = _machine_kinds(infra)
    if not kinds:
        return []
    capi = reads.kube.capi_version()
    why = "instances show without them"
    found = reads.read(
        CAPI_GROUP, "Machine", namespace, why, version=capi, selector=POOL_NAME_LABEL
    )
    for group, version, kind in sorted(kinds):
        # Core lists the machine kind in the infra pool's own API version.
        found += reads.read(group, kind, namespace, why, version=version, selector=POOL_NAME_LABEL)
    return found


def _secret_kubeconfig(kube: Kube, namespace: str, cluster: str) -> object:
    name = f"{cluster}-kubeconfig"
    secret = kube.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{name}")
    value = dig(secret, "data", "value")
    unusable = MachinePoolError(f"Secret {namespace}/{name} holds no kubeconfig under key value")
    try:
        if not isinstance(value, str):
            raise unusable
        content = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as err:
        raise unusable from err
    # Whoever writes the Secret writes this YAML: dumps' bounds on nesting and aliases apply.
    documents = read_documents(f"Secret {namespace}/{name}", content)
    return documents[0] if documents else None


def _token_secrets(workload: Kube) -> tuple[str, ...] | None:
    """Names of the workload cluster's bootstrap token Secrets (metadata only), if readable."""
    try:
        found = workload.list(
            SECRETS, "kube-system", field_selector=BOOTSTRAP_TOKENS, metadata_only=True
        )
    except MachinePoolError:
        return None
    return tuple(sorted(str(s["metadata"].get("name", "")) for s in found))


def workload_kube(
    kube: Kube, namespace: str, cluster: str, override: str | None, timeout: float | None
) -> Kube:
    """A connection to a Cluster's workload API server: its kubeconfig Secret, or override."""
    if override:
        connection = load_connection(override, None)
    else:
        config = _secret_kubeconfig(kube, namespace, cluster)
        connection = connection_from_dict(config, f"Secret {namespace}/{cluster}-kubeconfig")
    return Kube(connection, timeout or WORKLOAD_TIMEOUT)


def workload_disruption(
    kube: Kube,
    namespace: str,
    cluster: str,
    override: str | None,
    timeout: float | None,
    *,
    node: str,
) -> Disruption:
    """The PodDisruptionBudgets a drain of this Node would meet now, or why that is unknown."""
    try:
        with workload_kube(kube, namespace, cluster, override, timeout) as workload:
            pods = workload.list(PODS, None, field_selector=f"spec.nodeName={node}")
            budgets = workload.list(BUDGETS, None)
    except MachinePoolError as err:
        return Disruption(None, err.message)
    return disruption_of(pods, budgets)


def workload_nodes(
    kube: Kube,
    namespace: str,
    cluster: str,
    override: str | None,
    timeout: float | None,
    *,
    tokens: bool = False,
) -> WorkloadNodes:
    """The Nodes of a Cluster's workload cluster, through its kubeconfig Secret (or override)."""
    try:
        with workload_kube(kube, namespace, cluster, override, timeout) as workload:
            nodes = workload.list(NODES, None)
            token_secrets = _token_secrets(workload) if tokens else None
    except MachinePoolError as err:
        note = f"Nodes of Cluster {namespace}/{cluster} are not shown: {err.message}"
        unreachable = isinstance(err, UnreachableError)
        return WorkloadNodes(namespace, cluster, None, note, unreachable=unreachable)
    return WorkloadNodes(namespace, cluster, tuple(nodes), token_secrets=token_secrets)


def _control_plane_refs(clusters: list[RawObject]) -> dict[tuple[str, str], str | None]:
    kinds: dict[tuple[str, str], str | None] = {}
    for cluster in clusters:
        ref = dig(cluster, "spec", "controlPlaneRef")
        kind = text(dig(ref, "kind"))
        if kind:
            api_version = text(dig(ref, "apiVersion")) or ""
            group = text(dig(ref, "apiGroup")) or group_of(api_version)
            kinds.setdefault((group, kind), api_version.rpartition("/")[2] or None)
    return kinds


def read_description(
    kube: Kube,
    namespace: str | None,
    selection: Selection,
    workload_kubeconfig: str | None,
    timeout: float | None,
    *,
    diagnosis: bool = False,
    report_extras: bool = False,
) -> Snapshot:
    """For `describe` and the commands after it: pools, their Clusters, provider objects, Nodes.

    diagnosis adds what only rules need: the core controller Deployment (its version), control
    planes, Secret names in scope and the workload's bootstrap token Secret names. Every pool in
    scope is kept, selected or not, so a Node naming a pool that is not there is really orphaned.
    """
    resource = Resource(CAPI_GROUP, kube.capi_version(), "MachinePool", "machinepools")
    every_pool = kube.list(resource, namespace)
    pools = [p for p in every_pool if selected(p, selection)]
    reads = _Reads(kube)
    objects: list[RawObject] = list(every_pool)
    clusters = {
        (p["metadata"].get("namespace", ""), (p.get("spec") or {}).get("clusterName", ""))
        for p in pools
    }
    cluster_objects: list[RawObject] = []
    # A Cluster asked for by name is read even when it has no pool left: its Nodes can still
    # name pools that went (orphans), and saying so is the point of asking.
    named = selection.cluster if not (selection.names or selection.selector) else None
    if pools or named:
        why = "Clusters show as not readable"
        for obj in reads.read(CAPI_GROUP, "Cluster", namespace, why, version=kube.capi_version()):
            key = (obj["metadata"].get("namespace", ""), obj["metadata"].get("name"))
            if key in clusters or key[1] == named:
                cluster_objects.append(obj)
                clusters.add(key)
    objects += cluster_objects
    infra_refs = _template_refs(pools, "infrastructureRef")
    infra = reads.kinds(infra_refs, namespace, "infra pools are not shown")
    objects += infra
    bootstrap_refs = _template_refs(pools, "bootstrap")
    objects += reads.kinds(bootstrap_refs, namespace, "bootstrap configs are not shown")
    objects += _machines(reads, infra, namespace)
    secrets_scope = None
    if diagnosis and (pools or cluster_objects):
        reads.quiet = not report_extras
        objects += reads.kinds(
            _control_plane_refs(cluster_objects), namespace, "version skew is not checked"
        )
        objects += reads.read_resource(
            DEPLOYMENTS, None, "the Cluster API version is unknown", selector=CORE_PROVIDER
        )
        secrets = reads.read_resource(
            SECRETS,
            namespace,
            "missing bootstrap data Secrets are not detected",
            metadata_only=True,
        )
        objects += secrets
        if ("", "Secret") not in reads.unread:
            secrets_scope = namespace or ""
    workloads = [
        workload_nodes(kube, ns, name, workload_kubeconfig, timeout, tokens=diagnosis)
        for ns, name in sorted(clusters)
    ]
    return Snapshot.of(
        objects,
        reads.notes,
        workloads,
        reads.unread,
        secrets_scope,
        unread_notes=reads.unread_notes,
    )
