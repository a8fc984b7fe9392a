"""Rules about Nodes and their references (R7, R8, R10, R23)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.diagnostics.core import (
    AUTOSCALER,
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import claims_pool
from kubectl_machinepool.model.outsiders import (
    UNINITIALIZED_TAINT,
    OutsideNode,
    existing_pools,
    gone_owner,
)

V1_12 = (1, 12, 0)


def node_ref_uid_mismatch(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    if ctx.nodes is None:
        return
    by_name = {n.name: n for n in ctx.nodes}
    stale = [
        name
        for name, uid in pool.pool.node_refs
        if uid and name in by_name and by_name[name].uid and by_name[name].uid != uid
    ]
    if not stale:
        return
    fixed = ctx.capi.between(V1_12, (99, 0, 0))
    message = f"status.nodeRefs name Nodes {names(stale)} whose uid changed: they were re-created"
    if fixed:
        message += (
            f"; Cluster API {ctx.capi} re-checks uids, so this should clear on the next reconcile"
        )
    elif fixed is None:
        message += (
            f"; before v1.12.0 Cluster API keeps such references (version unknown: "
            f"{ctx.capi.source})"
        )
    yield rule.finding(
        pool, pool_subject(pool), message, instances=tuple(stale),
        severity=Severity.INFO if fixed else Severity.WARNING,
    )  # fmt: skip


def node_ref_dangling(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    if ctx.nodes is None:
        return
    by_name = {n.name: n for n in ctx.nodes}
    listed = set(pool.pool.provider_ids)
    missing = [name for name, _ in pool.pool.node_refs if name and name not in by_name]
    moved = [
        name
        for name, _ in pool.pool.node_refs
        if name in by_name and by_name[name].provider_id not in listed
    ]
    parts = []
    if missing:
        parts.append(f"name Nodes that do not exist: {names(missing)}")
    if moved:
        parts.append(f"name Nodes whose providerID is not in spec.providerIDList: {names(moved)}")
    if parts:
        message = "status.nodeRefs " + "; and ".join(parts)
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(missing + moved))


def node_refs_short(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    cond = mp.conditions.get("ReplicasReady")
    if cond is None or cond.status != "False" or cond.reason != "WaitingForReplicasReady":
        return
    lasted = ctx.now - cond.since if cond.since else None
    if len(mp.node_refs) == mp.ready or lasted is None or lasted < ctx.thresholds.scaling:
        return
    message = (
        f"{len(mp.node_refs)} Nodes are referenced but {mp.ready} are Ready, for "
        f"{human_duration(lasted)} (ReplicasReady False, WaitingForReplicasReady)"
    )
    yield rule.finding(pool, pool_subject(pool), message)


def ready_count_stale(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """The controller returns early while every replica counted Ready and the nodeRefs still
    match (machinepool_controller_noderef.go), so a Node that turns NotReady later is never
    subtracted: phase, ReplicasReady and the counters keep saying all is well."""
    mp = pool.pool
    cond = mp.conditions.get("ReplicasReady")
    if ctx.nodes is None or cond is None or cond.status != "True":
        return
    down = [i.node for i in pool.instances if i.node and i.listed and i.node.ready is not True]
    if not down or pool.counts.nodes_ready is None or pool.counts.nodes_ready >= mp.ready:
        return
    since = [c.since for n in down if (c := n.conditions.get("Ready")) and c.since]
    lasted = f", for {human_duration(ctx.now - min(since))}" if since else ""
    message = (
        f"status counts {mp.ready} Ready Nodes (ReplicasReady True) but {names([n.name for n in down])} "
        f"{'is' if len(down) == 1 else 'are'} not Ready{lasted}: once every replica was Ready the "
        "controller stops recounting while its nodeRefs match, so the pool still looks healthy"
    )
    yield rule.finding(pool, pool_subject(pool), message, instances=tuple(n.name for n in down))


def duplicate_provider_ids(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    if ctx.nodes is None:
        return
    listed = set(pool.pool.provider_ids)
    counted = Counter(n.provider_id for n in ctx.nodes if n.provider_id in listed)
    doubled = sorted(pid for pid, count in counted.items() if pid and count > 1)
    if doubled:
        holders = [n.name for n in ctx.nodes if n.provider_id in doubled]
        message = (
            f"more than one Node has the providerID {names(doubled)} (Nodes {names(holders)}): "
            "the last one seen wins, so nodeRefs may point at the wrong Node"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(holders))


def uninitialized_taint(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    late = [
        i.node.name
        for i in pool.instances
        if i.node
        and UNINITIALIZED_TAINT in i.node.taints
        and i.node.ready_since
        and ctx.now - i.node.ready_since > ctx.thresholds.taint
    ]
    if late:
        message = (
            f"Nodes {names(late)} still carry {UNINITIALIZED_TAINT} more than "
            f"{human_duration(ctx.thresholds.taint)} after turning Ready: nothing schedules there"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(late))


def _likely(outside: OutsideNode) -> str:
    pools = ", ".join(outside.likely_pools)
    if not pools:
        return "no pool's providerIDs or owner annotations point at it"
    if any(r.startswith("owner annotations") for r in outside.reasons):
        return f"its owner annotations name MachinePool {pools}, which does not exist"
    return f"it most likely belongs to {pools}: same provider group as the pool's providerIDs"


def uninitialized_taint_outside(rule: Rule, ctx: Context) -> Iterator[Finding]:
    """R8 for the Nodes no pool lists: nothing will remove their taint until one does."""
    outside = ctx.cluster.outside
    for listed in outside.listed if outside else ():
        lasted = listed.tainted_for
        if not listed.tainted_since_ready or lasted is None or lasted <= ctx.thresholds.taint:
            continue
        message = (
            f"Node {listed.node.name} still carries {UNINITIALIZED_TAINT} "
            f"{human_duration(lasted)} after turning Ready and no pool lists its providerID; "
            f"{_likely(listed)}"
        )
        yield rule.node_finding(ctx, listed.node, message)


def stale_ownership(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    claiming = [
        i.node.name
        for i in pool.instances
        if i.node and not i.listed and claims_pool(i.node, pool.pool)
    ]
    if not claiming:
        return
    lead = f"Nodes {names(claiming)} carry this pool's owner annotations but their providerIDs"
    if pool.paused_by:
        # Nothing copies the infra pool's list while the pool is paused: these are new
        # instances the pool has not recorded yet, not stale ones.
        message = (
            f"{lead} are not in the frozen spec.providerIDList: new instances the pool has not "
            f"recorded because reconciliation is paused ({pool.paused_by})"
        )
    else:
        message = f"{lead} are not in spec.providerIDList (the annotations are never removed)"
    yield rule.finding(pool, pool_subject(pool), message, instances=tuple(claiming))


def orphan_nodes(rule: Rule, ctx: Context) -> Iterator[Finding]:
    """Nodes whose owner annotations name a MachinePool that no longer exists."""
    existing = existing_pools(ctx.snapshot)
    if ctx.nodes is None or existing is None:
        return
    for node in ctx.nodes:
        owner = gone_owner(node, ctx.cluster.namespace, ctx.cluster.name, existing)
        if owner is not None:
            state = "Ready" if node.ready else "NotReady"
            message = (
                f"Node {node.name} ({state}) belongs to MachinePool {owner[0]}/{owner[1]}, which "
                "does not exist: Cluster API skipped deleting it when the pool went"
            )
            yield rule.node_finding(ctx, node, message)


RULES = [
    Rule(
        "MP0701",
        "R7a",
        "nodeRefs point at re-created Nodes",
        Severity.WARNING,
        "a status.nodeRefs entry names an existing Node whose uid differs from the recorded uid; "
        "info on Cluster API v1.12.0 and later, which re-checks uids",
        "Nodes were re-created with the same name (an AKS upgrade, for example); before v1.12.0 the "
        "controller compared only counts and kept the stale references.",
        "Upgrade Cluster API to v1.12.0 or later (PR #12392; not backported to v1.11).",
        (CAPI + "12388", CAPI + "12392"),
        node_ref_uid_mismatch,
        needs_reconcile=True,
    ),
    Rule(
        "MP0702",
        "R7b",
        "nodeRefs point at missing or foreign Nodes",
        Severity.WARNING,
        "a status.nodeRefs entry names a Node that does not exist, or one whose providerID is not "
        "in spec.providerIDList",
        "A retired Node awaits deletion; if it persists, the reconcile is failing.",
        "Check the Cluster's RemoteConnectionProbe condition and the capi-controller-manager logs "
        "(see also MP0501).",
        (),
        node_ref_dangling,
        needs_reconcile=True,
    ),
    Rule(
        "MP0703",
        "R7c",
        "Referenced Nodes not all Ready",
        Severity.INFO,
        "ReplicasReady is False (WaitingForReplicasReady) for longer than --scaling-grace and the "
        "number of nodeRefs differs from the ready count",
        "Some matched Nodes are not Ready; normal for a moment during scaling or a rollout.",
        "If it persists, inspect the NotReady Nodes (describe lists them first).",
        (CAPI + "10541",),
        node_refs_short,
        needs_reconcile=True,
    ),
    Rule(
        "MP0705",
        "R7e",
        "Pool counts NotReady Nodes as Ready",
        Severity.WARNING,
        "ReplicasReady is True and status counts more Ready Nodes than the workload cluster has "
        "among the pool's providerIDs",
        "Once all replicas were Ready and status.nodeRefs still match the Nodes by name and uid, "
        "the MachinePool controller returns before recounting: a Node that goes NotReady later "
        "leaves phase Running, ReplicasReady True and readyReplicas unchanged (observed with "
        "Cluster API v1.14.2).",
        "Trust the Node-based counts (this tool's READY); repair or replace the NotReady Nodes "
        "(kubectl machinepool delete-machine where the provider supports it).",
        (),
        ready_count_stale,
    ),
    Rule(
        "MP0704",
        "R7d",
        "Two Nodes share a providerID",
        Severity.WARNING,
        "more than one workload Node has the same spec.providerID from the pool's providerIDList",
        "The mapping is ambiguous (last seen wins): nodeRefs may point at the wrong Node and "
        "cluster-autoscaler fails with 'expected len==1, got 2'.",
        "Remove the stale duplicate Node object.",
        (CAPI + "8856", CAPI + "11071", AUTOSCALER + "6397"),
        duplicate_provider_ids,
    ),
    Rule(
        "MP0801",
        "R8",
        "Uninitialized taint not removed",
        Severity.WARNING,
        "a pool Node, or a Node no pool lists (named with the pool it likely belongs to), still has "
        "node.cluster.x-k8s.io/uninitialized:NoSchedule longer than --taint-grace after its Ready "
        "condition turned True",
        "Nothing schedules on the Node. Usually the Node is not matched (MP0103, MP0401), or, with "
        "MachinePool Machines, two controllers race to remove the taint.",
        "Check that the providerID is in spec.providerIDList and the infra pool is ready; with "
        "Machines check the Machine's NodeHealthy. Removing the taint by hand skips the label sync "
        "it guards.",
        (CAPI + "8258", CAPI + "8442", CAPI + "9858", CAPI + "14053"),
        uninitialized_taint,
        check_cluster=uninitialized_taint_outside,
        needs_reconcile=True,
    ),
    Rule(
        "MP1001",
        "R10",
        "Orphan Nodes of a deleted pool",
        Severity.WARNING,
        "a Node's cluster.x-k8s.io/owner-kind is MachinePool and its owner-name (in "
        "cluster-namespace) names a MachinePool that does not exist",
        "Cluster API skips deleting a pool's Nodes once nodeDeletionTimeoutSeconds (10 s) has passed "
        "since the pool's deletionTimestamp, which it usually has: the Nodes stay behind.",
        "Delete those Node objects unless a cloud-controller-manager removes Nodes of deleted "
        "instances; raise spec.template.spec.deletion.nodeDeletionTimeoutSeconds before deleting pools.",
        (CAPI + "14024", CAPI + "14026", CAPI + "10553"),
        check_cluster=orphan_nodes,
    ),
    Rule(
        "MP2301",
        "R23",
        "Stale Node ownership annotations",
        Severity.INFO,
        "a Node's owner annotations name this pool but its providerID is not in spec.providerIDList; in a paused pool said to be a new instance not yet recorded",
        "The annotations are add-only: the Node may have moved, or the list is stale (MP0103). While reconciliation is paused nothing copies the infra pool's list, so new instances are missing from it.",
        "Trust spec.providerIDList; investigate only if MP0103 or MP0401 also fire.",
        (),
        stale_ownership,
    ),
]
