"""One pool's instances, joined purely from a Snapshot, each with its problems as plain phrases.

An instance is one cloud VM as the objects show it: for pools with MachinePool Machines a Machine,
its infra machine and its Node; for pools without, a providerID of spec.providerIDList and the
Node with that providerID. Nodes are matched as the MachinePool controller matches them: by exact
providerID string (or, for a Machine, its nodeRef name first).
"""

from __future__ import annotations

import functools
from datetime import datetime

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, strings, text
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.kubeversion import release, same_release
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.conditions import Condition
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import (
    MachineState,
    NodeState,
    ObjectState,
    machine_state,
    object_state,
)

OWNER_KIND_ANNOTATION = "cluster.x-k8s.io/owner-kind"
OWNER_NAME_ANNOTATION = "cluster.x-k8s.io/owner-name"
CLUSTER_NAMESPACE_ANNOTATION = "cluster.x-k8s.io/cluster-namespace"
CLUSTER_NAME_ANNOTATION = "cluster.x-k8s.io/cluster-name"


@record
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


@functools.lru_cache(maxsize=256)  # asked per Node; a pool's Nodes run a few versions
def same_version(kubelet: str, desired: str) -> bool:
    """Equal as far as both give major.minor(.patch), each read whole (base/kubeversion.py):
    build suffixes (`-eks-1a2b3c`), a missing `v` and a missing patch (CAPA reports `1.33` for
    v1.33.0) do not count. A value that is no version equals nothing."""
    a, b = release(kubelet), release(desired)
    return a is not None and b is not None and same_release(a, b)


def _condition_phrase(what: str, cond: Condition | None) -> str:
    if cond is None:
        return f"{what} reports no Ready condition"
    reason = f" ({cond.reason})" if cond.reason else ""
    return f"{what} not Ready{reason}"


@record
class InstanceContext:
    pool: MachinePool
    nodes_known: bool
    now: datetime
    uses_machines: bool = False
    # Whether Machines and the infra machine kind were listed: if not, absence proves nothing.
    machines_read: bool = True
    infra_machines_read: bool = True


def _machine_problems(instance: Instance, ctx: InstanceContext) -> list[str]:
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


def _node_problems(instance: Instance, ctx: InstanceContext) -> list[str]:
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


def _problems(instance: Instance, ctx: InstanceContext) -> tuple[str, ...]:
    unlisted = (
        []
        if instance.listed or not instance.provider_id
        else ["providerID not in the pool's providerIDList"]
    )
    return (*_machine_problems(instance, ctx), *unlisted, *_node_problems(instance, ctx))


def _owned_by(machine: RawObject, pool: MachinePool, label_value: str) -> bool:
    """Core's rule: pool-name (label_value) and cluster-name labels, and no controller other
    than this pool."""
    meta = mapping(machine.get("metadata"))
    labels = mapping(meta.get("labels"))
    if labels.get(POOL_NAME_LABEL) != label_value:
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


def pool_instances(
    pool: MachinePool,
    infra: ObjectState | None,
    snapshot: Snapshot,
    nodes: list[NodeState] | None,
    ctx: InstanceContext,
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
        group = infra.group
        value = pool_label_value(pool.name)
        infra_machines = {
            text(dig(obj, "metadata", "name")) or "": obj
            for obj in snapshot.of_kind(group, str(pool.machine_kind))
            if dig(obj, "metadata", "namespace") == pool.namespace
            and dig(obj, "metadata", "labels", POOL_NAME_LABEL) == value
        }
        for raw in snapshot.of_kind(CAPI_GROUP, "Machine"):
            in_namespace = dig(raw, "metadata", "namespace") == pool.namespace
            if not in_namespace or not _owned_by(raw, pool, value):
                continue
            machine = snapshot.made_of(raw, machine_state)
            infra_raw = infra_machines.pop(machine.infra_name or "", None)
            infra_state = snapshot.made_of(infra_raw, object_state) if infra_raw else None
            pid = machine.provider_id or text(dig(infra_raw, "spec", "providerID"))
            matched = by_name.get(machine.node_name or "") or by_pid.get(pid or "")
            add(pid, machine, infra_state, matched)
        for raw in infra_machines.values():
            pid = text(dig(raw, "spec", "providerID"))
            add(pid, None, snapshot.made_of(raw, object_state), by_pid.get(pid or ""))
        covered = {i.provider_id for i in found if i.provider_id}
    # The infra pool's own list too: while the pool's copy is frozen (infra pool not ready,
    # reconciliation paused) a surge instance is only there.
    listing = snapshot.find(infra.group, infra.kind, infra.namespace, infra.name) if infra else None
    for pid in (*pool.provider_ids, *strings(dig(listing, "spec", "providerIDList"))):
        if pid not in covered:
            add(pid, None, None, by_pid.get(pid))
            covered.add(pid)
    for node in nodes or ():
        if claims_pool(node, pool) and node.provider_id not in covered:
            add(node.provider_id, None, None, node)
    return sorted(found, key=lambda i: (i.healthy, i.sort_name))


def uncopied(pool: MachinePool, listing: RawObject | None, kind: str) -> list[str]:
    """The infra pool's spec.providerIDList where the MachinePool's copy differs: its controller
    has that write left to make, and a generation to observe after it. The instances are counted
    from both lists, so without this a rollout could look done before the copy."""
    theirs, ours = set(strings(dig(listing, "spec", "providerIDList"))), set(pool.provider_ids)
    if not theirs or theirs == ours:
        return []
    return [
        f"the MachinePool's spec.providerIDList to take up {kind}'s "
        f"({len(theirs - ours)} to add, {len(ours - theirs)} to drop)"
    ]
