"""Rules about pools stuck ScalingUp (R1): which instances are missing, and why; and instances
that joined the workload cluster but no pool tracks (R1e)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import (
    CAPA,
    CAPI,
    CAPZ,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
    since,
)
from kubectl_machinepool.diagnostics.replicas import replica_writes, v1beta2_ready
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import OWNER_KIND_ANNOTATION, claims_pool
from kubectl_machinepool.model.outsiders import UNINITIALIZED_TAINT, OutsideNode, provider_group
from kubectl_machinepool.model.states import NodeState


def scaling_since(pool: PoolDescription, ctx: Context) -> datetime | None:
    """The latest moment the data shows the scale-up could have started; None if nothing tells.

    ReplicasReady turns False only once the provider reports more instances than are Ready: it
    stays True right after spec.replicas is raised, and throughout a CAPZ scale-up (whose
    status.replicas counts only ready instances), so its True transition says nothing.
    """
    marks: list[datetime | None] = []
    cond = pool.pool.conditions.first("ReplicasReady", "Ready")
    if cond is not None and cond.status == "False":
        marks.append(cond.since)
    # A managedFields time is that manager's last write, no earlier than the replicas change;
    # the write that created the pool dates nothing the pool's own age does not.
    created = pool.pool.created
    marks += [
        w for w in replica_writes(ctx.raw_pool(pool)).values() if w and created and w > created
    ]
    for instance in pool.instances:
        if instance.node is not None and instance.node.ready:
            continue
        machine = instance.machine.object if instance.machine else None
        marks += [obj.created for obj in (machine, instance.infra_machine) if obj is not None]
    # A time after now means the clocks disagree (or --now looks back): it dates nothing.
    known = [m for m in marks if m is not None and m <= ctx.now]
    return max(known) if known else None


@record
class StuckScaling:
    """A pool ScalingUp short of Ready Nodes past the grace period, or for an unknown time."""

    lasted: timedelta | None

    @property
    def severity(self) -> Severity | None:
        # Without a start time the finding is stated, not judged.
        return None if self.lasted is not None else Severity.INFO


def stuck_scaling_up(pool: PoolDescription, ctx: Context) -> StuckScaling | None:
    """A short ScalingUp after every providerIDList change is normal: the controller resets its
    ready count to 0 until Nodes are matched again (R1d)."""
    mp, counts = pool.pool, pool.counts
    if mp.phase != "ScalingUp" or counts.desired is None or counts.status_ready >= counts.desired:
        return None
    lasted = since(scaling_since(pool, ctx), ctx.now)
    if lasted is not None and lasted < ctx.thresholds.scaling:
        return None
    return StuckScaling(lasted)


def _copied_counter(pool: PoolDescription, ctx: Context) -> str:
    """Evidence that the v1beta2 counter hides the problem, for pools without Machines."""
    path, top = v1beta2_ready(pool, ctx)
    if pool.uses_machines or top is None:
        return ""
    return f"; {path} says {top}/{pool.counts.desired} because it copies status.replicas"


def _lead(pool: PoolDescription, stuck: StuckScaling) -> str:
    c = pool.counts
    if stuck.lasted is None:
        return (
            f"ScalingUp with {c.status_ready} of {c.desired} Nodes Ready (since when, the data "
            "does not say: no False ReplicasReady, managedFields or new instance dates it)"
        )
    return (
        f"ScalingUp for {human_duration(stuck.lasted)} with {c.status_ready} of {c.desired} "
        "Nodes Ready"
    )


def scaling_up_missing_nodes(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    stuck = stuck_scaling_up(pool, ctx)
    if stuck is None or ctx.nodes is None:
        return
    missing = [
        i.provider_id for i in pool.instances if i.provider_id and i.listed and i.node is None
    ]
    if missing:
        message = (
            f"{_lead(pool, stuck)}: no Node has the providerID {names(missing)}"
            f"{_copied_counter(pool, ctx)}"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, instances=tuple(missing), severity=stuck.severity
        )


def scaling_up_not_ready_nodes(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    stuck = stuck_scaling_up(pool, ctx)
    if stuck is None or ctx.nodes is None:
        return
    sick = [i.node.name for i in pool.instances if i.node and i.listed and i.node.ready is not True]
    if sick:
        message = (
            f"{_lead(pool, stuck)}: Nodes not Ready: {names(sick)}{_copied_counter(pool, ctx)}"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, instances=tuple(sick), severity=stuck.severity
        )


def _belongs_elsewhere(node: NodeState, pool: PoolDescription, ctx: Context) -> bool:
    """A Node that another pool, a MachineDeployment or another Cluster accounts for: by its
    owner annotations, by its providerID, or by a cloud group (VMSS, MIG) only other pools' or
    Machines' providerIDs are in (a dump holds the Nodes of several workload clusters)."""
    notes = node.annotations
    if OWNER_KIND_ANNOTATION in notes and not claims_pool(node, pool.pool):
        return True
    elsewhere = ctx.provider_ids_elsewhere(pool)
    if node.provider_id in elsewhere:
        return True
    group = provider_group(node.provider_id)
    if group is None or group[0] == "aws":  # an AWS zone is no group of one pool's
        return False
    mine = {provider_group(pid) for pid in pool.pool.provider_ids}
    return group not in mine and group in {provider_group(pid) for pid in elsewhere}


def scaling_up_stale_list(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    stuck = stuck_scaling_up(pool, ctx)
    if stuck is None or ctx.nodes is None:
        return
    listed = set(pool.pool.provider_ids)
    stale = [
        node.name
        for node in ctx.nodes
        if node.ready
        and node.provider_id not in listed
        and (
            any(i.node is node and not i.listed for i in pool.instances)
            or (UNINITIALIZED_TAINT in node.taints and not _belongs_elsewhere(node, pool, ctx))
        )
    ]
    if stale:
        message = (
            f"{_lead(pool, stuck)}: Ready Nodes {names(stale)} are not in spec.providerIDList "
            "(the infra pool's list is stale, or the infra pool is not ready and the list frozen)"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, instances=tuple(stale), severity=stuck.severity
        )


def scaling_up_unexplained(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """ScalingUp too long where no sub-rule can name the cause (no Nodes, or counters stale)."""
    stuck = stuck_scaling_up(pool, ctx)
    if stuck is None:
        return
    if ctx.nodes is not None and any(
        (i.listed and (i.node is None or i.node.ready is not True)) or not i.listed
        for i in pool.instances
    ):
        return  # MP0101-MP0103 name the cause
    counts = pool.counts
    if ctx.nodes is None:
        why = "the workload cluster's Nodes were not read, so the cause cannot be named"
    elif counts.desired is not None and counts.provider_reported < counts.desired:
        why = (
            f"the provider reports only {counts.provider_reported} instances (status.replicas): "
            "the rest have not been launched, or not yet reported"
        )
    else:
        why = "every listed providerID has a Ready Node, so the status counters are stale"
    message = f"{_lead(pool, stuck)}; {why}{_copied_counter(pool, ctx)}"
    yield rule.finding(pool, pool_subject(pool), message, severity=stuck.severity)


def _untracked_evidence(outside: OutsideNode) -> str | None:
    """Why the Node looks like an instance of its pool(s), or None when the evidence is too
    thin: an AWS providerID names only a zone, which other node groups share, so there the
    Node must also carry Cluster API's taint. (A Node whose owner annotations name a pool is
    that pool's instance, not an outsider: MP2301 speaks of it.)"""
    if outside.group != "zone":
        return f"the same {outside.group}"
    if UNINITIALIZED_TAINT in outside.node.taints:
        return f"the same zone, and it carries {UNINITIALIZED_TAINT}"
    return None


def untracked_instance(rule: Rule, ctx: Context) -> Iterator[Finding]:
    """R1e: an instance joined the workload cluster, but no pool's providerIDList holds it."""
    outside = ctx.cluster.outside
    deleting = {p.pool.name for p in ctx.cluster.pools if p.pool.deleting_since}
    for listed in outside.listed if outside else ():
        node = listed.node
        pools = [p for p in listed.same_group if p not in deleting]
        # The earliest moment the Node shows: its creation, or its Ready transition when a
        # restored or re-created object carries a later creationTimestamp.
        seen = min((t for t in (node.created, node.ready_since) if t is not None), default=None)
        joined = ctx.now - seen if seen else None
        if not pools or joined is None or joined <= ctx.thresholds.scaling:
            continue
        evidence = _untracked_evidence(listed)
        if evidence is None:
            continue
        message = (
            f"Node {node.name} joined {human_duration(joined)} ago with providerID "
            f"{node.provider_id}, which looks like an instance of pool {', '.join(pools)} "
            f"({evidence}), but no spec.providerIDList lists it: Cluster API does not count "
            "it, sync its labels or remove its uninitialized taint"
        )
        yield rule.node_finding(ctx, node, message)


RULES = [
    Rule(
        "MP0100",
        "R1",
        "ScalingUp too long, cause not visible",
        Severity.WARNING,
        "phase ScalingUp for longer than --scaling-grace while the Node-based ready count "
        "(status.deprecated.v1beta1.readyReplicas) is below spec.replicas, and no sub-rule "
        "(MP0101-MP0103) names a cause",
        "The new v1beta2 counters are copied from the infra provider, so the pool can look "
        "healthy; only Node matching tells. Without the workload Nodes the cause stays hidden.",
        "Read the workload cluster's Nodes (describe with access to the <cluster>-kubeconfig "
        "Secret, or --workload-kubeconfig) and compare spec.providerIDList with node.spec.providerID.",
        (CAPI + "10541", CAPI + "9858"),
        scaling_up_unexplained,
        needs_reconcile=True,
    ),
    Rule(
        "MP0101",
        "R1a",
        "ScalingUp: instances without a Node",
        Severity.WARNING,
        "phase ScalingUp for longer than --scaling-grace, and some spec.providerIDList entry has no "
        "Node whose spec.providerID equals it exactly",
        "The instance never joined, or its providerID is written differently; Cluster API "
        "matches the strings byte for byte and the pool never reaches Running.",
        "Check the instance's bootstrap and kubeadm join logs; compare the providerID strings byte "
        "for byte (Cluster API does not normalise them).",
        (CAPI + "10541", CAPI + "9858", CAPA + "4618", CAPZ + "4982"),
        scaling_up_missing_nodes,
        needs_reconcile=True,
    ),
    Rule(
        "MP0102",
        "R1b",
        "ScalingUp: matched Nodes not Ready",
        Severity.WARNING,
        "phase ScalingUp for longer than --scaling-grace, and Nodes matched to spec.providerIDList "
        "are not Ready",
        "The Nodes exist but kubelet or the CNI is not healthy, so the pool stays ScalingUp.",
        "Investigate the NotReady Nodes in the workload cluster (kubelet, container runtime, CNI).",
        (CAPI + "10541",),
        scaling_up_not_ready_nodes,
        needs_reconcile=True,
    ),
    Rule(
        "MP0103",
        "R1c",
        "ScalingUp: Ready Nodes missing from providerIDList",
        Severity.WARNING,
        "phase ScalingUp for longer than --scaling-grace, and Ready Nodes that carry the "
        "uninitialized taint or claim the pool are not in spec.providerIDList",
        "The infra pool's providerIDList is stale, or the infra pool is not ready and Cluster API "
        "froze the list: new instances are never matched and keep the uninitialized taint.",
        "Check the infra pool's Ready condition and provider logs; on CAPA use a version that "
        "reconciles AWSMachinePool periodically (CAPA#4618); on CAPZ see CAPZ PR #5537.",
        (CAPI + "10541", CAPA + "4618", CAPZ + "4982"),
        scaling_up_stale_list,
        needs_reconcile=True,
    ),
    Rule(
        "MP0104",
        "R1e",
        "Instance joined but no pool tracks it",
        Severity.WARNING,
        "a workload Node no pool holds, older than --scaling-grace, whose providerID is in the same "
        "VMSS or managed instance group as a pool's providerIDs (for AWS, the same zone and the "
        "uninitialized taint) but in no spec.providerIDList",
        "The infra pool's providerIDList is stale (the provider stopped reconciling it, or the infra "
        "pool is not ready and Cluster API froze the list), or the cloud group was scaled outside "
        "Cluster API: the instance is not counted, its labels are not synced and its taint stays.",
        "Check the infra pool's Ready condition and provider logs (CAPA#4618, CAPZ PR #5537); if the "
        "group was scaled by hand, scale it back through the MachinePool's spec.replicas.",
        (CAPI + "10541", CAPI + "9858", CAPA + "4618", CAPZ + "4982"),
        check_cluster=untracked_instance,
        needs_reconcile=True,
    ),
]
