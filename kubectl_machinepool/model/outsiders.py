"""Nodes of a Cluster's workload cluster that no MachinePool's instances hold (issue 14).

describe must account for every Node: control-plane Nodes and MachineDeployment Nodes are only
counted (their Machines explain them); every other unclaimed Node is listed with what makes it
interesting: Cluster API's uninitialized taint, a providerID that looks like one of a pool's but
is not in its providerIDList, owner annotations naming a pool that is gone (rule MP1001), NotReady.
Pure: the pools' instances and the Nodes in, the classification out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import dig, strings, text
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.instances import (
    CLUSTER_NAME_ANNOTATION,
    CLUSTER_NAMESPACE_ANNOTATION,
    OWNER_KIND_ANNOTATION,
    OWNER_NAME_ANNOTATION,
)
from kubectl_machinepool.model.pool import MachinePool, machine_pool
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import NodeState

UNINITIALIZED_TAINT = "node.cluster.x-k8s.io/uninitialized:NoSchedule"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
MACHINE_ANNOTATION = "cluster.x-k8s.io/machine"
_AZURE_VMSS_VM = "/virtualmachines/"


@record
class OutsideNode:
    node: NodeState
    # Plain phrases for the reader, in a fixed order; empty when nothing stands out.
    reasons: tuple[str, ...]
    # Pools (names, in the Cluster's namespace) this Node most likely belongs to, sorted.
    likely_pools: tuple[str, ...]
    # How long the uninitialized taint has been on the Node, and since when it is measured.
    tainted_for: timedelta | None = None
    tainted_since_ready: bool = False
    # Pools whose providerIDs share the Node's provider group (a pool's instance no list
    # holds), and what that group is: "VMSS", "managed instance group" or "zone" (AWS
    # providerIDs name only the zone, which other node groups share).
    same_group: tuple[str, ...] = ()
    group: str | None = None


@record
class OutsideNodes:
    control_plane: int
    machine_deployments: int
    # Every other unclaimed Node, sorted by name.
    listed: tuple[OutsideNode, ...]
    # A view of some pools only: listed holds just the Nodes most likely theirs (these names),
    # classified against all of the Cluster's pools.
    kept_to: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return self.control_plane + self.machine_deployments + len(self.listed)

    def likely_of(self, pool: str) -> tuple[str, ...]:
        """The names of the Nodes most likely this pool's."""
        return tuple(n.node.name for n in self.listed if pool in n.likely_pools)


# -- ownership --------------------------------------------------------------------------------


PoolKeys = AbstractSet[tuple[str | None, str | None]]


Group = tuple[str, ...]


def groups_by_cluster(snapshot: Snapshot) -> dict[tuple[str, str], frozenset[Group]]:
    """The cloud groups (VMSS, MIG) of every MachinePool's providerIDs, by (namespace, Cluster):
    a dump holds the Nodes of several workload clusters, and an unannotated Node in a VMSS of
    another Cluster's pool is that Cluster's. AWS zones are shared by Clusters and left out."""
    found: dict[tuple[str, str], set[Group]] = {}
    for pool in snapshot.of_kind(CAPI_GROUP, "MachinePool"):
        namespace = text(dig(pool, "metadata", "namespace")) or ""
        groups = found.setdefault((namespace, text(dig(pool, "spec", "clusterName")) or ""), set())
        for pid in strings(dig(pool, "spec", "providerIDList")):
            group = provider_group(pid)
            if group is not None and group[0] != "aws":
                groups.add(group)
    return {k: frozenset(v) for k, v in found.items()}


def existing_pools(snapshot: Snapshot) -> PoolKeys | None:
    """(namespace, name) of every MachinePool in the snapshot, or None when they were not read."""
    if not snapshot.was_read(CAPI_GROUP, "MachinePool"):
        return None
    return frozenset(
        (text(dig(p, "metadata", "namespace")), text(dig(p, "metadata", "name")))
        for p in snapshot.of_kind(CAPI_GROUP, "MachinePool")
    )


def gone_owner(
    node: NodeState,
    namespace: str,
    cluster: str,
    existing: PoolKeys,
) -> tuple[str, str] | None:
    """(namespace, name) of the MachinePool the Node's owner annotations name when it belongs to
    this Cluster and no such pool exists (rule MP1001), else None."""
    notes = node.annotations
    if notes.get(OWNER_KIND_ANNOTATION) != "MachinePool":
        return None
    owner = (notes.get(CLUSTER_NAMESPACE_ANNOTATION), notes.get(OWNER_NAME_ANNOTATION))
    # A dump's Nodes stand for every Cluster in it: keep each Node to its own Cluster.
    named_cluster = notes.get(CLUSTER_NAME_ANNOTATION, cluster)
    if owner[0] != namespace or named_cluster != cluster or owner in existing:
        return None
    return namespace, owner[1] or ""


def of_other_cluster(node: NodeState, namespace: str, cluster: str) -> bool:
    """The Node's Cluster API annotations name another Cluster (several Clusters in one dump)."""
    notes = node.annotations
    name = notes.get(CLUSTER_NAME_ANNOTATION)
    ns = notes.get(CLUSTER_NAMESPACE_ANNOTATION)
    return (name is not None and name != cluster) or (ns is not None and ns != namespace)


def is_control_plane(node: NodeState) -> bool:
    return (
        CONTROL_PLANE_LABEL in node.labels
        or node.annotations.get(OWNER_KIND_ANNOTATION) == "KubeadmControlPlane"
    )


def is_machine_deployment(node: NodeState) -> bool:
    """MachineSet-owned, or a Machine's Node whose owner is not a MachinePool."""
    kind = node.annotations.get(OWNER_KIND_ANNOTATION)
    machine = MACHINE_ANNOTATION in node.annotations
    return kind == "MachineSet" or (machine and kind != "MachinePool")


# -- providerID groups ------------------------------------------------------------------------


_GROUP_NAMES = {"azure": "VMSS", "gce": "managed instance group", "aws": "zone"}


def provider_group(provider_id: str | None) -> tuple[str, ...] | None:
    """The part of a providerID that instances of one cloud group share, or None when the
    provider's naming is not known: Azure's VMSS, AWS's zone, GCE's project and MIG prefix."""
    if not provider_id:
        return None
    scheme, sep, path = provider_id.partition("://")
    if not sep:
        return None
    if scheme == "azure":
        # Azure resource IDs compare case-insensitively.
        head, found, _ = path.lower().rpartition(_AZURE_VMSS_VM)
        return ("azure", head) if found and "/virtualmachinescalesets/" in head else None
    parts = path.strip("/").split("/")
    if scheme == "aws" and len(parts) == 2 and parts[1].startswith("i-"):
        return ("aws", parts[0])
    if scheme == "gce" and len(parts) == 3:
        prefix, dash, _ = parts[2].rpartition("-")
        # MIG instances are named <base-name>-<suffix>; regional MIGs span zones.
        return ("gce", parts[0], prefix) if dash and prefix else None
    return None


@record
class _PoolIndex:
    # Pool names by providerID group, and by providerID (each looked up once per Node).
    by_group: dict[tuple[str, ...], frozenset[str]]
    by_id: dict[str, frozenset[str]]


def _index(pools: Sequence[MachinePool]) -> _PoolIndex:
    by_group: dict[tuple[str, ...], set[str]] = {}
    by_id: dict[str, set[str]] = {}
    for pool in pools:
        for pid in pool.provider_ids:
            by_id.setdefault(pid, set()).add(pool.name)
            group = provider_group(pid)
            if group is not None:
                by_group.setdefault(group, set()).add(pool.name)
    return _PoolIndex(
        {k: frozenset(v) for k, v in by_group.items()}, {k: frozenset(v) for k, v in by_id.items()}
    )


def _similar_pools(node: NodeState, index: _PoolIndex) -> tuple[tuple[str, ...], str | None]:
    """Pools whose providerIDs share the Node's group, less those that list it, and what the
    group is."""
    group = provider_group(node.provider_id)
    if group is None:
        return (), None
    listing = index.by_id.get(node.provider_id or "", frozenset())
    similar = tuple(sorted(index.by_group.get(group, frozenset()) - listing))
    return similar, _GROUP_NAMES[group[0]] if similar else None


# -- classification ---------------------------------------------------------------------------


def _taint(node: NodeState, now: datetime) -> tuple[timedelta | None, bool]:
    if UNINITIALIZED_TAINT not in node.taints:
        return None, False
    since = node.ready_since or node.created
    return (now - since if since else None), node.ready_since is not None


def _reasons(
    node: NodeState,
    tainted_for: timedelta | None,
    since_ready: bool,
    similar: tuple[str, ...],
    gone: tuple[str, str] | None,
) -> tuple[str, ...]:
    reasons = []
    if UNINITIALIZED_TAINT in node.taints:
        lasted = (
            f" for {human_duration(tainted_for)} since {'Ready' if since_ready else 'creation'}"
            if tainted_for is not None
            else ""
        )
        reasons.append(f"carries {UNINITIALIZED_TAINT}{lasted}")
    if similar:
        noun = "pool" if len(similar) == 1 else "pools"
        reasons.append(
            f"providerID looks like one of {noun} {', '.join(similar)} but is not in "
            "spec.providerIDList"
        )
    if gone is not None:
        reasons.append(
            f"owner annotations name MachinePool {gone[0]}/{gone[1]}, which does not exist"
        )
    if node.ready is not True:
        reasons.append("NotReady" if node.ready is False else "Ready unknown")
    return tuple(reasons)


def unshown_pools(
    snapshot: Snapshot, key: tuple[str, str], shown: AbstractSet[str]
) -> list[MachinePool]:
    """The pools of this (namespace, Cluster) that a view leaves out."""
    found = [machine_pool(raw, snapshot) for raw in snapshot.of_kind(CAPI_GROUP, "MachinePool")]
    return [p for p in found if (p.namespace, p.cluster) == key and p.name not in shown]


def held_by(pool: MachinePool, nodes: Sequence[NodeState]) -> set[str]:
    """The Nodes a pool holds by its providerIDList or its nodeRefs: how a pool left out of a
    view still claims its Nodes."""
    listed = set(pool.provider_ids)
    held = {name for name, _ in pool.node_refs}
    return held | {n.name for n in nodes if n.provider_id is not None and n.provider_id in listed}


def kept_to(outside: OutsideNodes, pools: AbstractSet[str]) -> OutsideNodes:
    """The Nodes most likely of these pools, for a view of them alone."""
    listed = tuple(n for n in outside.listed if not pools.isdisjoint(n.likely_pools))
    return OutsideNodes(
        outside.control_plane, outside.machine_deployments, listed, tuple(sorted(pools))
    )


def outside_nodes(
    namespace: str,
    cluster: str,
    nodes: Sequence[NodeState],
    *,
    pools: Sequence[MachinePool],
    held: Iterable[str],
    existing: PoolKeys | None,
    now: datetime,
    foreign: AbstractSet[Group] = frozenset(),
) -> OutsideNodes:
    """Classify the Nodes whose names are not in held. existing: every MachinePool
    (namespace, name) in the snapshot, or None when MachinePools could not be listed.
    Nodes whose Cluster API annotations name another Cluster are that Cluster's and skipped: a
    dump's Nodes stand for every Cluster in it, and one API server may serve several workload
    clusters (test environments do), so counting them would make the output depend on others.
    For the same reason a Node in a cloud group of another Cluster's pools (foreign), and of none
    of this one's, is skipped."""
    claimed = set(held)
    index = _index(pools)
    control_plane = machine_deployments = 0
    listed = []
    for node in sorted(nodes, key=lambda n: n.name):
        if node.name in claimed or of_other_cluster(node, namespace, cluster):
            continue
        cloud = provider_group(node.provider_id)
        if cloud in foreign and cloud not in index.by_group:
            continue
        if is_control_plane(node):
            control_plane += 1
            continue
        if is_machine_deployment(node):
            machine_deployments += 1
            continue
        similar, group = _similar_pools(node, index)
        gone = gone_owner(node, namespace, cluster, existing) if existing is not None else None
        tainted_for, since_ready = _taint(node, now)
        likely = similar or ((gone[1],) if gone else ())
        reasons = _reasons(node, tainted_for, since_ready, similar, gone)
        listed.append(OutsideNode(node, reasons, likely, tainted_for, since_ready, similar, group))
    return OutsideNodes(control_plane, machine_deployments, tuple(listed))
