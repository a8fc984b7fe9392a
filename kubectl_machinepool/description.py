"""describe's model: Clusters, their MachinePools and every instance, joined purely from a Snapshot.

An instance is one cloud VM as the objects show it: for pools with MachinePool Machines a Machine,
its infra machine and its Node; for pools without, a providerID of spec.providerIDList and the
Node with that providerID. Nodes are matched as the MachinePool controller matches them: by exact
providerID string. Problems are plain phrases for the reader; diagnose turns them into findings.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kubectl_machinepool.conditions import Condition
from kubectl_machinepool.deletion import DeletionVerdict, pool_deletion_verdict
from kubectl_machinepool.fields import dig, items, mapping, string_map, text
from kubectl_machinepool.humanize import human_duration
from kubectl_machinepool.model import PAUSED_ANNOTATION, MachinePool, machine_pool
from kubectl_machinepool.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.selector import matches
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, WorkloadNodes
from kubectl_machinepool.states import (
    MachineState,
    NodeState,
    ObjectState,
    infra_pool_state,
    machine_state,
    node_state,
    object_state,
)

OWNER_KIND_ANNOTATION = "cluster.x-k8s.io/owner-kind"
OWNER_NAME_ANNOTATION = "cluster.x-k8s.io/owner-name"
CLUSTER_NAMESPACE_ANNOTATION = "cluster.x-k8s.io/cluster-namespace"
CLUSTER_NAME_ANNOTATION = "cluster.x-k8s.io/cluster-name"


@dataclass(frozen=True, slots=True)
class Instance:
    provider_id: str | None
    machine: MachineState | None
    infra_machine: ObjectState | None
    node: NodeState | None
    # The providerID is in the pool's spec.providerIDList.
    listed: bool
    problems: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        return not self.problems

    @property
    def sort_name(self) -> str:
        if self.machine:
            return self.machine.object.name
        if self.node:
            return self.node.name
        return self.provider_id or ""


@dataclass(frozen=True, slots=True)
class Counts:
    desired: int | None
    # status.replicas: the instance count the infrastructure provider reports.
    provider_reported: int
    # The Node-based counters as the MachinePool controller last wrote them.
    status_ready: int
    status_available: int
    provider_ids: int
    # Computed here from the workload cluster's Nodes; None when the Nodes are not known.
    nodes_matched: int | None
    nodes_ready: int | None
    nodes_available: int | None
    machines: int | None


@dataclass(frozen=True, slots=True)
class PoolDescription:
    pool: MachinePool
    bootstrap: ObjectState | None
    infra: ObjectState | None
    counts: Counts
    kubelet_versions: tuple[tuple[str, int], ...]
    deletion: DeletionVerdict
    instances: tuple[Instance, ...]
    # Why nothing reconciles the pool now (pool annotation, Cluster spec.paused), or None.
    paused_by: str | None = None
    # The infra pool / bootstrap config kinds could not be listed (so None means unknown).
    infra_unread: bool = False
    bootstrap_unread: bool = False

    @property
    def uses_machines(self) -> bool:
        return self.counts.machines is not None


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    namespace: str
    name: str
    cluster: ObjectState | None
    # Clusters could not be listed: cluster None means unknown, not missing.
    cluster_unread: bool
    paused: bool
    nodes_read: bool
    nodes_note: str | None
    pools: tuple[PoolDescription, ...]
    # Every Node of the workload cluster (not only the pools'); None when not read.
    nodes: tuple[NodeState, ...] | None = None
    # The workload API server did not answer (not: refused us, or was not asked).
    workload_unreachable: bool = False


@dataclass(frozen=True, slots=True)
class Selection:
    """Which pools to describe; applied to live and offline snapshots alike."""

    namespace: str | None = None
    names: tuple[str, ...] = ()
    cluster: str | None = None
    selector: str | None = None


@dataclass(frozen=True, slots=True)
class Description:
    clusters: tuple[ClusterDescription, ...]
    now: datetime
    notes: tuple[str, ...] = field(default=())


# -- instances --------------------------------------------------------------------------------

_SEMVER_CORE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def same_version(kubelet: str, desired: str) -> bool:
    """Equal as far as both give major.minor(.patch): build suffixes (`-eks-1a2b3c`), a missing
    `v` and a missing patch (CAPA reports `1.33` for v1.33.0) do not count."""
    a, b = _SEMVER_CORE.match(kubelet), _SEMVER_CORE.match(desired)
    if not a or not b:
        return kubelet == desired
    if a.group(3) is None or b.group(3) is None:
        return a.groups()[:2] == b.groups()[:2]
    return a.groups() == b.groups()


def _condition_phrase(what: str, cond: Condition | None) -> str:
    if cond is None:
        return f"{what} reports no Ready condition"
    reason = f" ({cond.reason})" if cond.reason else ""
    return f"{what} not Ready{reason}"


@dataclass(frozen=True, slots=True)
class _Context:
    pool: MachinePool
    nodes_known: bool
    now: datetime
    uses_machines: bool = False
    # Whether Machines and the infra machine kind were listed: if not, absence proves nothing.
    machines_read: bool = True
    infra_machines_read: bool = True


def _machine_problems(instance: Instance, ctx: _Context) -> list[str]:
    machine, infra_machine = instance.machine, instance.infra_machine
    if machine is None:
        if infra_machine is not None:
            return [f"{infra_machine.kind} has no Machine"] if ctx.machines_read else []
        known = ctx.uses_machines and ctx.machines_read and ctx.infra_machines_read
        return ["no Machine and no infra machine for this providerID"] if known else []
    out = []
    deleting = machine.object.deleting_since
    if deleting is not None:
        stage = machine.object.conditions.get("Deleting")
        where = f" ({stage.reason})" if stage and stage.reason else ""
        out.append(f"Machine deleting for {human_duration(ctx.now - deleting)}{where}")
    else:
        ready = machine.object.conditions.get("Ready")
        if ready is None or not ready.good:
            out.append(_condition_phrase("Machine", ready))
    if infra_machine is None and machine.infra_name and ctx.infra_machines_read:
        out.append(f"{machine.infra_kind} {machine.infra_name} not found")
    return out


def _node_problems(instance: Instance, ctx: _Context) -> list[str]:
    node = instance.node
    if node is None:
        missing = ctx.nodes_known and instance.provider_id
        return ["no Node with this providerID"] if missing else []
    out = []
    if node.deleting_since is not None:
        out.append("Node is being deleted")
    elif node.ready is not True:
        out.append(_condition_phrase("Node", node.conditions.get("Ready")))
    if node.unschedulable:
        out.append("Node cordoned")
    desired = ctx.pool.desired_version
    if node.kubelet_version and desired and not same_version(node.kubelet_version, desired):
        out.append(f"kubelet {node.kubelet_version}, pool wants {desired}")
    return out


def _problems(instance: Instance, ctx: _Context) -> tuple[str, ...]:
    unlisted = (
        []
        if instance.listed or not instance.provider_id
        else ["providerID not in the pool's providerIDList"]
    )
    return (*_machine_problems(instance, ctx), *unlisted, *_node_problems(instance, ctx))


def _owned_by(machine: RawObject, pool: MachinePool) -> bool:
    """Core's rule: pool-name and cluster-name labels, and no controller other than this pool."""
    meta = mapping(machine.get("metadata"))
    labels = mapping(meta.get("labels"))
    if labels.get(POOL_NAME_LABEL) != pool_label_value(pool.name):
        return False
    if labels.get(CLUSTER_NAME_LABEL) != pool.cluster:
        return False
    for owner in items(meta.get("ownerReferences")):
        if owner.get("controller") is True:
            if owner.get("kind") != "MachinePool":
                return False
            if owner.get("uid") and pool.uid:
                return bool(owner.get("uid") == pool.uid)
            return bool(owner.get("name") == pool.name)
    return True


def claims_pool(node: NodeState, pool: MachinePool) -> bool:
    """The Node's owner annotations (add-only, so possibly stale) name this pool."""
    notes = node.annotations
    return (
        notes.get(OWNER_KIND_ANNOTATION) == "MachinePool"
        and notes.get(OWNER_NAME_ANNOTATION) == pool.name
        and notes.get(CLUSTER_NAMESPACE_ANNOTATION) == pool.namespace
    )


def _instances(
    pool: MachinePool,
    infra: ObjectState | None,
    snapshot: Snapshot,
    nodes: list[NodeState] | None,
    ctx: _Context,
) -> list[Instance]:
    by_pid: dict[str, NodeState] = {}
    by_name: dict[str, NodeState] = {}
    for node in nodes or ():
        by_name[node.name] = node
        if node.provider_id:
            by_pid[node.provider_id] = node  # duplicates: last one wins, as upstream
    listed = set(pool.provider_ids)
    found: list[Instance] = []

    def add(
        pid: str | None,
        machine: MachineState | None,
        infra_machine: ObjectState | None,
        node: NodeState | None,
    ) -> None:
        bare = Instance(pid, machine, infra_machine, node, pid in listed if pid else True)
        found.append(
            Instance(
                bare.provider_id, machine, infra_machine, node, bare.listed, _problems(bare, ctx)
            )
        )

    covered: set[str] = set()
    if infra is not None and ctx.uses_machines:
        group = infra.api_version.rpartition("/")[0]
        value = pool_label_value(pool.name)
        infra_machines = {
            text(dig(obj, "metadata", "name")) or "": obj
            for obj in snapshot.of_kind(group, str(pool.machine_kind))
            if dig(obj, "metadata", "namespace") == pool.namespace
            and dig(obj, "metadata", "labels", POOL_NAME_LABEL) == value
        }
        for raw in snapshot.of_kind(CAPI_GROUP, "Machine"):
            if dig(raw, "metadata", "namespace") != pool.namespace or not _owned_by(raw, pool):
                continue
            machine = machine_state(raw)
            infra_raw = infra_machines.pop(machine.infra_name or "", None)
            infra_state = object_state(infra_raw) if infra_raw else None
            pid = machine.provider_id or text(dig(infra_raw, "spec", "providerID"))
            matched = by_name.get(machine.node_name or "") or by_pid.get(pid or "")
            add(pid, machine, infra_state, matched)
        for raw in infra_machines.values():
            pid = text(dig(raw, "spec", "providerID"))
            add(pid, None, object_state(raw), by_pid.get(pid or ""))
        covered = {i.provider_id for i in found if i.provider_id}
    for pid in pool.provider_ids:
        if pid not in covered:
            add(pid, None, None, by_pid.get(pid))
            covered.add(pid)
    for node in nodes or ():
        if claims_pool(node, pool) and node.provider_id not in covered:
            add(node.provider_id, None, None, node)
    return sorted(found, key=lambda i: (i.healthy, i.sort_name))


# -- pools and clusters -----------------------------------------------------------------------


def node_available(node: NodeState, min_ready_seconds: int, now: datetime) -> bool:
    """Ready for at least minReadySeconds, the controller's definition of an available Node."""
    since = node.ready_since
    return (
        bool(node.ready)
        and since is not None
        and since + timedelta(seconds=min_ready_seconds) <= now
    )


def _counts(
    pool: MachinePool,
    instances: list[Instance],
    nodes_known: bool,
    now: datetime,
    machines: int | None,
) -> Counts:
    matched = [i.node for i in instances if i.node is not None and i.listed and i.provider_id]
    ready = [n for n in matched if n.ready]
    available = [n for n in ready if node_available(n, pool.min_ready_seconds, now)]
    return Counts(
        desired=pool.desired,
        provider_reported=pool.current,
        status_ready=pool.ready,
        status_available=pool.available,
        provider_ids=len(pool.provider_ids),
        nodes_matched=len(matched) if nodes_known else None,
        nodes_ready=len(ready) if nodes_known else None,
        nodes_available=len(available) if nodes_known else None,
        machines=machines,
    )


def _versions(instances: list[Instance]) -> tuple[tuple[str, int], ...]:
    counted = Counter(
        i.node.kubelet_version for i in instances if i.node and i.node.kubelet_version
    )
    return tuple(sorted(counted.items()))


def _uses_machines(pool: MachinePool, infra: ObjectState | None) -> bool:
    """MachinePool Machines exist when the infra pool names another kind as its machine kind."""
    return bool(pool.machine_kind) and infra is not None and pool.machine_kind != infra.kind


def _paused_by(pool: MachinePool, cluster_paused: bool) -> str | None:
    """Upstream pauses a pool for either reason; the Paused condition reports the same."""
    reasons = [PAUSED_ANNOTATION + " annotation"] if pool.paused else []
    if cluster_paused:
        reasons.append("Cluster spec.paused")
    return " and ".join(reasons) or None


def describe_pool(
    raw: RawObject,
    snapshot: Snapshot,
    nodes: list[NodeState] | None,
    now: datetime,
    cluster_paused: bool = False,
) -> PoolDescription:
    pool = machine_pool(raw, snapshot)
    ref, boot = pool.infrastructure_ref, pool.bootstrap_ref
    infra_raw = snapshot.find(ref.api_group, ref.kind, pool.namespace, ref.name) if ref else None
    boot_raw = snapshot.find(boot.api_group, boot.kind, pool.namespace, boot.name) if boot else None
    infra = infra_pool_state(infra_raw) if infra_raw else None
    uses_machines = _uses_machines(pool, infra)
    machine_group = infra.api_version.rpartition("/")[0] if infra else ""
    ctx = _Context(
        pool,
        nodes is not None,
        now,
        uses_machines,
        machines_read=snapshot.was_read(CAPI_GROUP, "Machine"),
        infra_machines_read=snapshot.was_read(machine_group, pool.machine_kind or ""),
    )
    instances = _instances(pool, infra, snapshot, nodes, ctx)
    machines = sum(1 for i in instances if i.machine) if uses_machines else None
    return PoolDescription(
        pool=pool,
        bootstrap=object_state(boot_raw) if boot_raw else None,
        infra=infra,
        counts=_counts(pool, instances, nodes is not None, now, machines),
        kubelet_versions=_versions(instances),
        deletion=pool_deletion_verdict(
            ref.api_group if ref else None,
            infra.kind if infra else None,
            pool.machine_kind,
            pool.replicas_managed_by,
        ),
        instances=tuple(instances),
        paused_by=_paused_by(pool, cluster_paused),
        infra_unread=ref is not None and not snapshot.was_read(ref.api_group, ref.kind),
        bootstrap_unread=boot is not None and not snapshot.was_read(boot.api_group, boot.kind),
    )


def selected(raw: RawObject, selection: Selection) -> bool:
    """Whether a MachinePool is in the selection (namespace, names, cluster, label selector)."""
    meta = mapping(raw.get("metadata"))
    if selection.namespace is not None and meta.get("namespace") != selection.namespace:
        return False
    if selection.names and meta.get("name") not in selection.names:
        return False
    if selection.cluster and dig(raw, "spec", "clusterName") != selection.cluster:
        return False
    labels = string_map(meta.get("labels"))
    return not selection.selector or matches(selection.selector, labels)


def describe(snapshot: Snapshot, selection: Selection, now: datetime) -> Description:
    """Every selected MachinePool, grouped under its Cluster, ordered by namespace and name."""
    by_cluster: dict[tuple[str, str], list[RawObject]] = {}
    for raw in snapshot.of_kind(CAPI_GROUP, "MachinePool"):
        if selected(raw, selection):
            key = (
                text(dig(raw, "metadata", "namespace")) or "",
                text(dig(raw, "spec", "clusterName")) or "",
            )
            by_cluster.setdefault(key, []).append(raw)
    if selection.cluster and not (selection.names or selection.selector):
        for raw in snapshot.of_kind(CAPI_GROUP, "Cluster"):
            meta = mapping(raw.get("metadata"))
            namespace = text(meta.get("namespace")) or ""
            wanted = selection.namespace is None or namespace == selection.namespace
            if wanted and meta.get("name") == selection.cluster:
                by_cluster.setdefault((namespace, selection.cluster), [])
    clusters = []
    for (namespace, name), raws in sorted(by_cluster.items()):
        workload: WorkloadNodes | None = snapshot.nodes_for(namespace, name)
        raw_nodes = workload.nodes if workload else None
        nodes = None if raw_nodes is None else [node_state(n) for n in raw_nodes]
        cluster_raw = snapshot.find(CAPI_GROUP, "Cluster", namespace, name)
        paused = dig(cluster_raw, "spec", "paused") is True
        pools = sorted(
            (describe_pool(raw, snapshot, nodes, now, paused) for raw in raws),
            key=lambda p: p.pool.name,
        )
        clusters.append(
            ClusterDescription(
                namespace=namespace,
                name=name,
                cluster=object_state(cluster_raw) if cluster_raw else None,
                cluster_unread=not snapshot.was_read(CAPI_GROUP, "Cluster"),
                paused=paused,
                nodes_read=nodes is not None,
                nodes_note=workload.note if workload else None,
                workload_unreachable=workload is not None and workload.unreachable,
                pools=tuple(pools),
                nodes=None if nodes is None else tuple(nodes),
            )
        )
    return Description(tuple(clusters), now, snapshot.notes)
