"""Rules about replica counts and who sets them (R2, R3, R19, R24), and the autoscaler bounds
that limit them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from kubectl_machinepool.base.fields import RawObject, dig, integer, items, mapping, text
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.diagnostics import remedies
from kubectl_machinepool.diagnostics.core import (
    CAPA,
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription


def replica_writes(raw: RawObject) -> dict[str, datetime | None]:
    """Field managers owning spec.replicas and when each last wrote (managedFields, live only)."""
    writes: dict[str, datetime | None] = {}
    for entry in items(dig(raw, "metadata", "managedFields")):
        fields = mapping(entry.get("fieldsV1"))
        manager = text(entry.get("manager"))
        if "f:replicas" in mapping(fields.get("f:spec")) and manager:
            writes[manager] = parse_time(entry.get("time"))
    return writes


def v1beta2_ready(pool: PoolDescription, ctx: Context) -> tuple[str, int | None]:
    """The v1beta2 ready counter and its path: top level in v1beta2, status.v1beta2 in v1beta1."""
    path: tuple[str, ...] = ("status", "readyReplicas")
    if not pool.pool.api_version.endswith("/v1beta2"):
        path = ("status", "v1beta2", "readyReplicas")
    return ".".join(path), integer(dig(ctx.raw_pool(pool), *path))


def scaling_two_authorities(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if mp.phase != "Scaling" or not mp.replicas_managed_by:
        return
    if mp.autoscaler.annotated:
        low, high = (_shown(n) for n in mp.autoscaler_bounds)
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


def _shown(bound: int | None) -> str:
    return "?" if bound is None else str(bound)


def replicas_fight(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if not mp.replicas_managed_by and not mp.autoscaler.annotated:
        return
    managers = sorted(replica_writes(ctx.raw_pool(pool)))
    if len(managers) > 1:
        message = (
            f"spec.replicas is written by {len(managers)} field managers: {', '.join(managers)}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def replicas_out_of_bounds(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    bounds = mp.autoscaler
    # Bounds the autoscaler cannot use are MP0303's: no size is in or out of them.
    if mp.desired is None or not bounds.node_group:
        return
    if not bounds.minimum <= mp.desired <= bounds.maximum:
        message = (
            f"spec.replicas is {mp.desired}, outside the cluster-autoscaler bounds "
            f"{bounds.minimum}..{bounds.maximum}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def unusable_bounds(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """Bounds cluster-autoscaler's clusterapi provider refuses, as model/autoscaler.py reads
    them; the scale command refuses them too, unless --force."""
    problems = pool.pool.autoscaler.problems
    if problems:
        message = (
            f"cluster-autoscaler cannot use this pool's node-group bounds: {'; '.join(problems)}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def synthetic_counters(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    # With a machine kind (even GKE's self-named one, MP1902) the counters come from Machines;
    # without the infra pool (unreadable, or gone while deleting) nobody knows where they come from.
    if pool.pool.machine_kind or pool.infra is None:
        return
    path, top = v1beta2_ready(pool, ctx)
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
    path, top = v1beta2_ready(pool, ctx)
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
        "spec.replicas is below the cluster-autoscaler min-size or above its max-size annotation, "
        "on a pool the autoscaler takes as a node group (bounds it can use, max-size above 0)",
        "cluster-autoscaler does not act on such a node group unless it runs with "
        "--enforce-node-group-min-size; CAPA managed pools reject min/max changes that exclude it.",
        "Bring spec.replicas into the bounds, or fix the bounds (CAPA#5746: remove "
        "replicas-managed-by, set replicas, then min/max).",
        (CAPA + "5746",),
        replicas_out_of_bounds,
        remedy=remedies.INTO_BOUNDS,
    ),
    Rule(
        "MP0303",
        "R3",
        "Autoscaler bounds it cannot use",
        Severity.ERROR,
        "the cluster-autoscaler min-size or max-size annotation is not a whole number Go's "
        "strconv.Atoi reads (an optional sign and ASCII digits within int64: not empty, no "
        "spaces, no point or exponent), is negative, or max-size is below min-size (an absent "
        "one counts as 0, so min-size alone above 0 is one)",
        "cluster-autoscaler's clusterapi provider fails to build any node group while one pool's "
        'bounds are invalid (it logs "error getting node groups"): it then scales none of the '
        "pools it discovers, not only this one.",
        "Set both annotations to whole numbers with min-size at most max-size, or remove both.",
        (),
        unusable_bounds,
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
