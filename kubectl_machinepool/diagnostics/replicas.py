"""Rules about replica counts and who sets them (R1, R2, R3, R19, R24)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from kubectl_machinepool.description import OWNER_KIND_ANNOTATION, PoolDescription, claims_pool
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
from kubectl_machinepool.fields import dig, integer, items, mapping, text
from kubectl_machinepool.humanize import human_duration
from kubectl_machinepool.snapshot import RawObject
from kubectl_machinepool.states import NodeState
from kubectl_machinepool.timeutil import parse_time

UNINITIALIZED_TAINT = "node.cluster.x-k8s.io/uninitialized:NoSchedule"


def _replica_writes(raw: RawObject) -> dict[str, datetime | None]:
    """Field managers owning spec.replicas and when each last wrote (managedFields, live only)."""
    writes: dict[str, datetime | None] = {}
    for entry in items(dig(raw, "metadata", "managedFields")):
        fields = mapping(entry.get("fieldsV1"))
        manager = text(entry.get("manager"))
        if "f:replicas" in mapping(fields.get("f:spec")) and manager:
            writes[manager] = parse_time(entry.get("time"))
    return writes


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
        w for w in _replica_writes(ctx.raw_pool(pool)).values() if w and created and w > created
    ]
    for instance in pool.instances:
        if instance.node is not None and instance.node.ready:
            continue
        machine = instance.machine.object if instance.machine else None
        marks += [obj.created for obj in (machine, instance.infra_machine) if obj is not None]
    # A time after now means the clocks disagree (or --now looks back): it dates nothing.
    known = [m for m in marks if m is not None and m <= ctx.now]
    return max(known) if known else None


@dataclass(frozen=True, slots=True)
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


def _v1beta2_ready(pool: PoolDescription, ctx: Context) -> tuple[str, int | None]:
    """The v1beta2 ready counter and its path: top level in v1beta2, status.v1beta2 in v1beta1."""
    path: tuple[str, ...] = ("status", "readyReplicas")
    if not pool.pool.api_version.endswith("/v1beta2"):
        path = ("status", "v1beta2", "readyReplicas")
    return ".".join(path), integer(dig(ctx.raw_pool(pool), *path))


def _copied_counter(pool: PoolDescription, ctx: Context) -> str:
    """Evidence that the v1beta2 counter hides the problem, for pools without Machines."""
    path, top = _v1beta2_ready(pool, ctx)
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
    """A Node that another pool, a MachineDeployment or another Cluster accounts for."""
    notes = node.annotations
    if OWNER_KIND_ANNOTATION in notes and not claims_pool(node, pool.pool):
        return True
    return node.provider_id in ctx.provider_ids_elsewhere(pool)


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


def scaling_two_authorities(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if mp.phase != "Scaling" or not mp.replicas_managed_by:
        return
    low, high = mp.autoscaler_bounds
    if low is not None or high is not None:
        message = (
            f"replicas-managed-by ({mp.replicas_managed_by}) and the cluster-autoscaler min/max "
            f"annotations ({low}..{high}) are both set: two authorities write spec.replicas"
        )
        yield rule.finding(pool, pool_subject(pool), message)
        return
    message = (
        f"phase Scaling: spec.replicas ({mp.desired}) is driven by {mp.replicas_managed_by} and "
        f"differs from the {mp.ready} Ready Nodes; the provider writes the cloud's count back"
    )
    yield rule.finding(pool, pool_subject(pool), message, severity=Severity.INFO)


def replicas_fight(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    low, high = mp.autoscaler_bounds
    if not mp.replicas_managed_by and low is None and high is None:
        return
    managers = sorted(_replica_writes(ctx.raw_pool(pool)))
    if len(managers) > 1:
        message = (
            f"spec.replicas is written by {len(managers)} field managers: {', '.join(managers)}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def replicas_out_of_bounds(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    low, high = mp.autoscaler_bounds
    if mp.desired is None or (low is None and high is None):
        return
    if (low is not None and mp.desired < low) or (high is not None and mp.desired > high):
        message = (
            f"spec.replicas is {mp.desired}, outside the cluster-autoscaler bounds "
            f"{'?' if low is None else low}..{'?' if high is None else high}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def synthetic_counters(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    # With a machine kind (even GKE's self-named one, MP1902) the counters come from Machines;
    # without the infra pool (unreadable, or gone while deleting) nobody knows where they come from.
    if pool.pool.machine_kind or pool.infra is None:
        return
    path, top = _v1beta2_ready(pool, ctx)
    truth = (
        pool.counts.nodes_ready if pool.counts.nodes_ready is not None else pool.counts.status_ready
    )
    if top is not None and top != truth:
        message = (
            f"{path} says {top} but {truth} Nodes are Ready: without MachinePool Machines the "
            "v1beta2 ready/available counters copy status.replicas"
        )
        yield rule.finding(pool, pool_subject(pool), message)


PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")


def pressure_conditions_missing(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    """With Machines, v1beta2 readiness goes through each Machine's NodeHealthy, which is True
    only when the Node reports Ready and all three pressure conditions False; a kubelet (or
    virtual-kubelet) that omits them leaves NodeHealthy Unknown and the counters at 0."""
    if not pool.uses_machines or pool.counts.nodes_ready is None:
        return
    lacking = [
        i.node.name
        for i in pool.instances
        if i.node
        and i.node.ready
        and i.machine
        and (health := i.machine.object.conditions.get("NodeHealthy")) is not None
        and health.status == "Unknown"
        and any(i.node.conditions.get(kind) is None for kind in PRESSURE_CONDITIONS)
    ]
    path, top = _v1beta2_ready(pool, ctx)
    if lacking and (top or 0) < pool.counts.nodes_ready:
        message = (
            f"{path} says {top or 0} while {pool.counts.nodes_ready} Nodes are Ready: Nodes "
            f"{names(lacking)} report no {'/'.join(PRESSURE_CONDITIONS)} condition, so their "
            "Machines' NodeHealthy stays Unknown and they never count as Ready"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(lacking))


def self_named_machine_kind(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if pool.infra is not None and mp.machine_kind and mp.machine_kind == pool.infra.kind:
        message = (
            f"{pool.infra.kind} names itself as infrastructureMachineKind: Cluster API counts "
            "this pool's ready replicas from Machines that never exist"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def provider_id_list_size(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    size = len(pool.pool.provider_ids)
    if size < 1000:
        return
    severity = (
        Severity.ERROR if size >= 9000 else Severity.WARNING if size >= 5000 else Severity.INFO
    )
    message = f"spec.providerIDList has {size} entries (the API caps it at 10000)"
    yield rule.finding(pool, pool_subject(pool), message, severity=severity)


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
        "MP0201",
        "R2",
        "Phase Scaling: replicas driven from outside",
        Severity.WARNING,
        "phase Scaling (cluster.x-k8s.io/replicas-managed-by set and spec.replicas differs from "
        "the Ready Nodes); a warning when the cluster-autoscaler min/max annotations are also set",
        "With both, cluster-autoscaler writes spec.replicas while replicas-managed-by tells the "
        "provider to overwrite it with the cloud's count: two scaling authorities.",
        "Keep one authority: remove either the cluster-autoscaler min/max annotations or "
        "replicas-managed-by.",
        (CAPA + "2022", CAPA + "4134"),
        scaling_two_authorities,
    ),
    Rule(
        "MP0301",
        "R3",
        "spec.replicas has several writers",
        Severity.WARNING,
        "metadata.managedFields shows more than one field manager owning spec.replicas, on a pool "
        "with replicas-managed-by or cluster-autoscaler annotations (needs a live read: dumps "
        "usually omit managedFields)",
        "Replicas are fought over, typically GitOps against the provider or cluster-autoscaler.",
        "Configure GitOps to ignore /spec/replicas on this MachinePool.",
        (CAPA + "4134", CAPA + "5746", CAPA + "2022"),
        replicas_fight,
    ),
    Rule(
        "MP0302",
        "R3",
        "spec.replicas outside the autoscaler bounds",
        Severity.WARNING,
        "spec.replicas is below the cluster-autoscaler min-size or above its max-size annotation",
        "cluster-autoscaler does not act on such a node group unless it runs with "
        "--enforce-node-group-min-size; CAPA managed pools reject min/max changes that exclude it.",
        "Bring spec.replicas into the bounds, or fix the bounds (CAPA#5746: remove "
        "replicas-managed-by, set replicas, then min/max).",
        (CAPA + "5746",),
        replicas_out_of_bounds,
    ),
    Rule(
        "MP1901",
        "R19",
        "v1beta2 counters copy the provider",
        Severity.INFO,
        "a pool without MachinePool Machines whose status.readyReplicas (v1beta2) differs from the "
        "number of Ready Nodes",
        "Without MachinePool Machines, readyReplicas and availableReplicas are copies of "
        "status.replicas and upToDateReplicas of spec.replicas: kubectl get mp misleads.",
        "Trust the Node-based counts (this tool's READY/AVAILABLE) instead.",
        (CAPI + "12178", CAPI + "12528", CAPI + "13929"),
        synthetic_counters,
    ),
    Rule(
        "MP1902",
        "R19",
        "Machine kind names the infra pool itself",
        Severity.INFO,
        "the infra pool's status.infrastructureMachineKind equals its own kind (GCPManagedMachinePool)",
        "Cluster API then treats the pool as having MachinePool Machines and computes its ready "
        "counters from Machines that do not exist (likely 0).",
        "Read readiness from the Nodes; single instances cannot be addressed through Cluster API.",
        (CAPI + "12178",),
        self_named_machine_kind,
    ),
    Rule(
        "MP1903",
        "R19",
        "Machines wait on Node pressure conditions",
        Severity.INFO,
        "a pool with MachinePool Machines whose v1beta2 readyReplicas is below the Ready Nodes, "
        "where Ready Nodes lack MemoryPressure, DiskPressure or PIDPressure and their Machine's "
        "NodeHealthy is Unknown",
        "The Machine controller's v1beta2 NodeHealthy needs Ready=True and the three pressure "
        "conditions False; without them the Machines stay not Ready and the pool's v1beta2 "
        "counters at 0, while the v1beta1 ones count the Nodes (observed with v1.14.2).",
        "Trust the Node-based counts (this tool's READY); make the kubelet (or the node agent "
        "that stands in for it) report the pressure conditions.",
        (),
        pressure_conditions_missing,
    ),
    Rule(
        "MP2401",
        "R24",
        "providerIDList near its cap",
        Severity.INFO,
        "spec.providerIDList has 1000 or more entries (warning from 5000, error from 9000; the "
        "API caps it at 10000)",
        "Large lists make big objects and watches; every change resets the ready count, and every "
        "reconcile lists all Nodes.",
        "Split the pool into several smaller ones.",
        (CAPI + "6387", CAPI + "8856"),
        provider_id_list_size,
    ),
]
