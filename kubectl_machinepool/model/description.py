"""describe's model: Clusters, their MachinePools and every instance, joined purely from a Snapshot.

Instances and their problems come from instances.py; here they are counted and put under their
pool and Cluster. Problems are plain phrases for the reader; diagnose turns them into findings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import field, replace
from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.cloud import PoolCloud, companion_of, pool_cloud
from kubectl_machinepool.model.events import EventRecord, about, event_record, is_event
from kubectl_machinepool.model.healthchecks import KIND as HEALTH_CHECK
from kubectl_machinepool.model.healthchecks import (
    PoolHealthCheck,
    health_checks,
    pool_health_checks,
)
from kubectl_machinepool.model.instances import Instance, InstanceContext, pool_instances
from kubectl_machinepool.model.outsiders import (
    Group,
    OutsideNodes,
    PoolKeys,
    existing_pools,
    groups_by_cluster,
    held_by,
    kept_to,
    outside_nodes,
    unshown_pools,
)
from kubectl_machinepool.model.pool import (
    PAUSED_ANNOTATION,
    MachinePool,
    machine_pool,
    names_machines,
)
from kubectl_machinepool.model.selector import Selection, selected
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.model.states import (
    NodeState,
    ObjectState,
    infra_pool_state,
    node_state,
    object_state,
)
from kubectl_machinepool.model.zones import PoolZones, pool_zones
from kubectl_machinepool.providers.deletion import DeletionVerdict, pool_deletion_verdict
from kubectl_machinepool.providers.registry import infra_pool
from kubectl_machinepool.providers.targets import Target, infra_targets


@record
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


@record
class PoolDescription:
    pool: MachinePool
    bootstrap: ObjectState | None
    infra: ObjectState | None
    counts: Counts
    kubelet_versions: tuple[tuple[str, int], ...]
    deletion: DeletionVerdict
    instances: tuple[Instance, ...]
    # Why nothing reconciles the pool now (pool or infra pool annotation, Cluster spec.paused).
    paused_by: str | None = None
    # The infra pool / bootstrap config kinds could not be listed (so None means unknown).
    infra_unread: bool = False
    bootstrap_unread: bool = False
    # What the infra pool's own version and image fields target (targets.py, #7248).
    version_targets: tuple[Target, ...] = ()
    # The Events about the pool, its infra pool, bootstrap config and instances (Machines,
    # infra machines, Nodes), repeats folded, oldest last-seen first (events.py).
    events: tuple[EventRecord, ...] = ()
    # The MachineHealthChecks that select the pool's Machines or its template's labels
    # (healthchecks.py); None when they could not be read.
    health_checks: tuple[PoolHealthCheck, ...] | None = None
    # The pool's Nodes per zone against the zones its provider spreads it over (zones.py);
    # None when the Nodes were not read.
    zones: PoolZones | None = None
    # Where the pool and its instances live in its cloud (cloud.py); None: not verified.
    cloud: PoolCloud | None = None

    @property
    def uses_machines(self) -> bool:
        return self.counts.machines is not None


@record
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
    # The Nodes no pool's instances hold (outsiders.py); None when the Nodes were not read or
    # the selection left some of the Cluster's pools out (their Nodes would look unclaimed).
    outside: OutsideNodes | None = None


@record
class Description:
    clusters: tuple[ClusterDescription, ...]
    now: datetime
    notes: tuple[str, ...] = field(default=())

    @property
    def all_notes(self) -> tuple[str, ...]:
        """What could not be read, for the user: one warning each, the Nodes' included."""
        return (*self.notes, *(c.nodes_note for c in self.clusters if c.nodes_note))


# -- instances --------------------------------------------------------------------------------
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


def _paused_by(pool: MachinePool, cluster_paused: bool, infra_raw: RawObject | None) -> str | None:
    """Core pauses a pool for its annotation or the Cluster's spec.paused (its Paused condition
    says the same); the provider pauses the infra pool for the Cluster's or its own annotation
    (annotations.IsPaused): either way the rollout does not move."""
    reasons = [PAUSED_ANNOTATION + " annotation"] if pool.paused else []
    if cluster_paused:
        reasons.append("Cluster spec.paused")
    if PAUSED_ANNOTATION in mapping(dig(infra_raw, "metadata", "annotations")):
        kind, name = text(dig(infra_raw, "kind")), text(dig(infra_raw, "metadata", "name"))
        reasons.append(f"{PAUSED_ANNOTATION} annotation on {kind} {name}")
    condition = pool.conditions.get("Paused")
    if (
        not reasons
        and condition is not None
        and condition.status == "True"
        and not condition.legacy
    ):
        # Just unpaused: the controller has not reconciled the pool since, so it still is.
        reasons.append("the MachinePool's Paused condition (not yet reconciled since)")
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
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    uses_machines = infra is not None and names_machines(pool.machine_kind, infra.kind)
    machine_group = infra.group if infra else ""
    ctx = InstanceContext(
        pool,
        nodes is not None,
        now,
        uses_machines,
        machines_read=snapshot.was_read(CAPI_GROUP, "Machine"),
        infra_machines_read=snapshot.was_read(machine_group, pool.machine_kind or ""),
    )
    instances = pool_instances(pool, infra, snapshot, nodes, ctx)
    companion = companion_of(provider, infra_raw, snapshot)
    machines = sum(1 for i in instances if i.machine) if uses_machines else None
    checks = None
    if snapshot.was_read(CAPI_GROUP, HEALTH_CHECK):
        checks = pool_health_checks(raw, pool, instances, health_checks(snapshot))
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
        paused_by=_paused_by(pool, cluster_paused, infra_raw),
        infra_unread=ref is not None and not snapshot.was_read(ref.api_group, ref.kind),
        bootstrap_unread=boot is not None and not snapshot.was_read(boot.api_group, boot.kind),
        version_targets=infra_targets(provider, infra_raw, companion),
        health_checks=checks,
        zones=None if nodes is None else pool_zones(pool, instances, provider, infra_raw),
        cloud=pool_cloud(
            provider, pool, infra_raw, companion, instances, snapshot=snapshot, nodes=nodes
        ),
    )


def _node_states(workload: WorkloadNodes | None) -> list[NodeState] | None:
    """The Nodes' states as read live, or made now from a dump's Nodes; None: not read."""
    if workload is None or not workload.read:
        return None
    if workload.states is not None:
        return list(workload.states)
    return [node_state(n) for n in workload.nodes or ()]


def _outside(
    key: tuple[str, str],
    nodes: list[NodeState] | None,
    pools: list[PoolDescription],
    *,
    snapshot: Snapshot,
    existing: PoolKeys | None,
    groups: dict[tuple[str, str], frozenset[Group]],
    selection: Selection,
    now: datetime,
) -> OutsideNodes | None:
    """The Nodes no pool holds. A view of some pools (by name or selector) classifies them
    against every pool of the Cluster, then keeps those most likely the view's: a stray
    instance belongs to its pool's view as much as to the Cluster's."""
    if nodes is None:
        return None
    held = {i.node.name for p in pools for i in p.instances if i.node is not None}
    every = [p.pool for p in pools]
    partial = bool(selection.names or selection.selector)
    if partial:
        others = unshown_pools(snapshot, key, {p.pool.name for p in pools})
        every += others
        held = held.union(*(held_by(other, nodes) for other in others))
    foreign = frozenset().union(*(g for k, g in groups.items() if k != key))
    found = outside_nodes(
        *key, nodes, pools=every, held=held, existing=existing, now=now, foreign=foreign
    )
    return kept_to(found, {p.pool.name for p in pools}) if partial else found


EVENTS_GROUP = "events.k8s.io"


def _records(*sources: Iterable[RawObject] | None) -> list[EventRecord]:
    found = []
    for source in sources:
        for obj in source or ():
            record = event_record(obj) if is_event(obj) else None
            if record is not None:
                found.append(record)
    return found


def pool_objects(pool: PoolDescription, strays: Iterable[str] = ()) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of everything a pool is made of, for its Events; strays: the
    Nodes no pool holds that most likely are its own."""
    mp = pool.pool
    found = [("MachinePool", mp.namespace, mp.name)]
    for ref in (mp.infrastructure_ref, mp.bootstrap_ref):
        if ref is not None:
            found.append((ref.kind, mp.namespace, ref.name))
    for instance in pool.instances:
        if instance.machine is not None:
            found.append(("Machine", mp.namespace, instance.machine.object.name))
        if instance.infra_machine is not None:
            found.append((instance.infra_machine.kind, mp.namespace, instance.infra_machine.name))
        if instance.node is not None:
            found.append(("Node", "", instance.node.name))
    found += [("Node", "", name) for name in strays]
    return found


def _with_events(
    pool: PoolDescription, records: list[EventRecord], outside: OutsideNodes | None
) -> PoolDescription:
    if not records:
        return pool
    strays = (
        [n.node.name for n in outside.listed if pool.pool.name in n.likely_pools] if outside else []
    )
    return replace(pool, events=tuple(about(records, pool_objects(pool, strays))))


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
    existing = existing_pools(snapshot)
    groups = groups_by_cluster(snapshot)
    management_events = _records(
        snapshot.of_kind("", "Event"), snapshot.of_kind(EVENTS_GROUP, "Event")
    )
    for (namespace, name), raws in sorted(by_cluster.items()):
        workload = snapshot.nodes_for(namespace, name)
        nodes = _node_states(workload)
        cluster_raw = snapshot.find(CAPI_GROUP, "Cluster", namespace, name)
        paused = dig(cluster_raw, "spec", "paused") is True
        records = management_events + _records(workload.events if workload else None)
        pools = sorted(
            (describe_pool(raw, snapshot, nodes, now, paused) for raw in raws),
            key=lambda p: p.pool.name,
        )
        outside = _outside(
            (namespace, name),
            nodes,
            pools,
            snapshot=snapshot,
            existing=existing,
            groups=groups,
            selection=selection,
            now=now,
        )
        pools = [_with_events(p, records, outside) for p in pools]
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
                outside=outside,
            )
        )
    return Description(tuple(clusters), now, snapshot.notes)
