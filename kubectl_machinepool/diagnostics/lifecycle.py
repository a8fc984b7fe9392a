"""Rules about deleting pools and Machines (R9, R16, R20, R21)."""

from __future__ import annotations

from collections.abc import Iterator

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.humanize import human_duration
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
)
from kubectl_machinepool.diagnostics.healthchecks import owner_remediated
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.nodedrain import drain_bound
from kubectl_machinepool.model.states import MachineState, NodeState, ObjectState
from kubectl_machinepool.providers.registry import instance_deletion

V1_8 = (1, 8, 0)


def _deleting_too_long(pool: PoolDescription, ctx: Context) -> str | None:
    since = pool.pool.deleting_since
    if since is None or ctx.now - since < ctx.thresholds.deleting:
        return None
    return f"deleting for {human_duration(ctx.now - since)}"


def deletion_waits_on_provider(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    lead = _deleting_too_long(pool, ctx)
    if lead is None:
        return
    left = [f"{s.kind} {s.name}" for s in (pool.bootstrap, pool.infra) if s is not None]
    stuck_machines = [
        i.infra_machine.name
        for i in pool.instances
        if i.infra_machine and i.infra_machine.deleting_since and i.machine is None
    ]
    if not left and not stuck_machines:
        return
    parts = []
    if left:
        parts.append(f"{names(left)} still exist")
    if stuck_machines:
        parts.append(
            f"infra machines {names(stuck_machines)} are deleting without an owning Machine"
        )
    message = f"{lead}: " + "; ".join(parts) + ": the pool waits on the provider"
    yield rule.finding(pool, pool_subject(pool), message, instances=tuple(stuck_machines))


def deletion_without_cluster(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    lead = _deleting_too_long(pool, ctx)
    if lead is None or ctx.cluster.cluster is not None or ctx.cluster.cluster_unread:
        return
    message = (
        f"{lead}, and Cluster {pool.pool.namespace}/{pool.pool.cluster} does not exist: the "
        "controller fails before any deletion step, so the finalizer is never removed"
    )
    yield rule.finding(pool, pool_subject(pool), message)


def _workload_unreachable(ctx: Context) -> str | None:
    """Evidence that the workload API server does not answer, not merely that we lack access."""
    cluster = ctx.cluster.cluster
    probe = cluster.conditions.get("RemoteConnectionProbe") if cluster else None
    if probe is not None and probe.status == "False":
        return f"the Cluster's RemoteConnectionProbe is False ({probe.reason or 'no reason'})"
    if ctx.cluster.workload_unreachable:
        return ctx.cluster.nodes_note or "the workload API server did not answer"
    return None


def deletion_workload_unreachable(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    lead = _deleting_too_long(pool, ctx)
    if lead is None:
        return
    old = ctx.capi.between((0, 0, 0), V1_8)
    why = _workload_unreachable(ctx)
    if old is False or why is None:
        return
    if old:
        message = f"{lead}; {why}; Cluster API {ctx.capi} waits for the workload cluster forever"
        yield rule.finding(pool, pool_subject(pool), message)
        return
    message = (
        f"{lead}; {why}; before Cluster API v1.8.0 deletion waits for the workload cluster "
        f"forever (version unknown: {ctx.capi.source})"
    )
    yield rule.finding(pool, pool_subject(pool), message, severity=Severity.WARNING)


def deletion_after_manual_cleanup(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    lead = _deleting_too_long(pool, ctx)
    failure = pool.pool.failure or (pool.infra.failure if pool.infra else None) or ""
    if lead and "has been deleted after being ready" in failure:
        message = f"{lead} with failure {failure!r}: its cloud resources are already gone"
        yield rule.finding(pool, pool_subject(pool), message)


def deletion_slow(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """Deleting too long with none of the known causes visible."""
    lead = _deleting_too_long(pool, ctx)
    if lead is None:
        return
    for specific in (
        deletion_waits_on_provider,
        deletion_without_cluster,
        deletion_workload_unreachable,
        deletion_after_manual_cleanup,
    ):
        if any(True for _ in specific(rule, pool, ctx)):
            return
    yield rule.finding(
        pool, pool_subject(pool), f"{lead}; check the capi-controller-manager logs for this pool"
    )


def machines_out_of_step(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """Instances that have lacked their Machine (or infra machine) for longer than the grace.

    Core creates a Machine for each labelled infra machine; an infra machine without the
    labels is invisible to it, and to us too, so a listed providerID with neither is evidence
    as well, dated by its Node.
    """
    if not pool.uses_machines or pool.infra is None:
        return
    group = pool.infra.api_version.rpartition("/")[0]
    kind = pool.pool.machine_kind or ""
    if not (ctx.snapshot.was_read(CAPI_GROUP, "Machine") and ctx.snapshot.was_read(group, kind)):
        return

    def old(obj: ObjectState | NodeState | None) -> bool:
        return (
            obj is not None
            and obj.created is not None
            and (ctx.now - obj.created > ctx.thresholds.scaling)
        )

    without_machine = [
        i.infra_machine.name if i.infra_machine else (i.provider_id or "")
        for i in pool.instances
        if i.machine is None
        and (old(i.infra_machine) or (i.infra_machine is None and i.listed and old(i.node)))
    ]
    orphaned = [
        i.machine
        for i in pool.instances
        if i.machine and i.infra_machine is None and i.machine.object.deleting_since is None
    ]
    lost = [m.object.name for m in orphaned if _infrastructure_lost(m)]
    without_infra = [m.object.name for m in orphaned if m.object.name not in lost and old(m.object)]
    grace = human_duration(ctx.thresholds.scaling)
    messages = []
    if without_machine:
        messages.append(
            f"{names(without_machine)} {'has' if len(without_machine) == 1 else 'have'} no "
            f"Machine (an unlabelled or unreconciled {kind}), for longer than {grace}: infra "
            "machines lack the cluster-name/pool-name labels, or Machine creation is failing"
        )
    if without_infra:
        # Seen with the real v1.14 controllers: during a scale-in the MachinePool controller
        # can make a Machine again from a cached infra machine that is already gone, and
        # nothing in core deletes a MachinePool Machine whose infra machine never appears.
        messages.append(
            f"Machines {names(without_infra)} have no {kind}, for longer than {grace}: core "
            f"made them for a {kind} that was going away (a scale-in) or was deleted by hand, "
            "and never deletes them; delete the Machines"
        )
    if lost:
        messages.append(
            f"Machines {names(lost)} lost their {kind} after provisioning (InfrastructureReady "
            "False): Cluster API keeps such a Machine failed for good, and its instance is gone; "
            "delete the Machine"
        )
    if messages:
        yield rule.finding(
            pool,
            pool_subject(pool),
            "; ".join(messages),
            instances=tuple(without_machine + without_infra + lost),
        )


def _infrastructure_lost(machine: MachineState) -> bool:
    """The Machine controller's verdict once a provisioned infra machine disappeared: v1beta2
    InfrastructureReady False/ObjectDeleted, and the failure message, "... has been deleted after
    provisioning was completed" (v1.14) or "... after being ready" (v1.10)."""
    cond = machine.object.conditions.get("InfrastructureReady")
    if cond is not None and cond.status == "False" and cond.reason == "ObjectDeleted":
        return True
    return "has been deleted after" in (machine.object.failure or "")


def unremediated_machines(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    told = owner_remediated(pool)  # MP2601 names them with the health check that marked them
    marked = [
        i.machine.object.name
        for i in pool.instances
        if i.machine
        and (c := i.machine.object.conditions.get("OwnerRemediated"))
        and c.status == "False"
        and i.machine.object.name not in told
    ]
    if marked:
        message = (
            f"MachineHealthCheck marked Machines {names(marked)} for remediation, but nothing "
            "remediates MachinePool Machines"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(marked))


def oci_delete_is_a_no_op(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    infra = pool.infra
    deletion = instance_deletion(infra.group, infra.kind, pool.pool.machine_kind) if infra else None
    if not pool.uses_machines or deletion is None or deletion.deletes_instance:
        return
    deleting = [
        i.machine.object.name
        for i in pool.instances
        if i.machine and i.machine.object.deleting_since is not None
    ]
    if deleting:
        message = (
            f"Machines {names(deleting)} are being deleted, but CAPOCI only removes the "
            f"{pool.pool.machine_kind} finalizer: the Node goes, the instance keeps running and "
            "is adopted again"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, severity=Severity.WARNING, instances=tuple(deleting)
        )
        return
    message = (
        f"deleting one of this pool's Machines does not delete its instance: CAPOCI only removes "
        f"the {pool.pool.machine_kind} finalizer, the Node is deleted and the instance comes back"
    )
    yield rule.finding(pool, pool_subject(pool), message)


def endless_drain(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    for instance in pool.instances:
        machine = instance.machine
        deleting = machine.object.deleting_since if machine else None
        if machine is None or deleting is None:
            continue
        state = machine.object
        draining = state.conditions.get("Deleting")
        legacy = state.conditions.get("DrainingSucceeded")
        is_draining = (draining is not None and draining.reason == "DrainingNode") or (
            legacy is not None and legacy.status == "False" and legacy.reason == "Draining"
        )
        lasted = ctx.now - deleting
        raw = ctx.raw(CAPI_GROUP, "Machine", state.namespace, state.name)
        if is_draining and lasted > ctx.thresholds.drain and drain_bound(raw) is None:
            message = (
                f"Machine {state.name} has been draining Node {machine.node_name or '?'} for "
                f"{human_duration(lasted)} with no drain timeout: MachinePool Machines inherit "
                "none, so a PodDisruptionBudget can block it forever"
            )
            subject = f"Machine {state.namespace}/{state.name}"
            yield rule.finding(pool, subject, message, instances=(state.name,))


RULES = [
    Rule(
        "MP0900",
        "R9",
        "Deletion slow, cause not visible",
        Severity.WARNING,
        "the pool has had a deletionTimestamp longer than --deleting-grace and none of MP0901-MP0904 applies",
        "MachinePool deletion waits on the provider, the Cluster and the workload cluster; one of them is stuck.",
        "Read the capi-controller-manager logs for this pool and the provider's controller logs.",
        (CAPI + "11162", CAPI + "11444"),
        deletion_slow,
        needs_reconcile=True,
    ),
    Rule(
        "MP0901",
        "R9a",
        "Deletion waits on the provider",
        Severity.WARNING,
        "deleting longer than --deleting-grace while the bootstrap config or infra pool still exists, "
        "or infra machines are deleting without an owning Machine",
        "Cluster API deletes the bootstrap and infra objects first and waits for them; a provider "
        "that cannot finish keeps the pool (and the Cluster) alive.",
        "Investigate the provider's controller and the objects named; for CAPD see PR #12675.",
        (CAPI + "11162", CAPZ + "4955", CAPI + "12675"),
        deletion_waits_on_provider,
        needs_reconcile=True,
    ),
    Rule(
        "MP0902",
        "R9b",
        "Deleting pool whose Cluster is gone",
        Severity.ERROR,
        "deleting longer than --deleting-grace and the Cluster named by spec.clusterName does not exist",
        "The controller fails with 'failed to get cluster' before any deletion step: it never finishes.",
        "After confirming the cloud resources are gone, remove the machinepool.cluster.x-k8s.io "
        "finalizer by hand; have GitOps delete the Cluster last.",
        (CAPI + "7559", CAPI + "4296", CAPI + "6049"),
        deletion_without_cluster,
        needs_reconcile=True,
    ),
    Rule(
        "MP0903",
        "R9c",
        "Deleting while the workload cluster is unreachable",
        Severity.ERROR,
        "deleting longer than --deleting-grace, the workload API server does not answer (the "
        "Cluster's RemoteConnectionProbe is False, or this tool's connection failed; not a refusal "
        "or a dump without Nodes), and Cluster API is older than v1.8.0 (a warning when the "
        "version is unknown)",
        "Before v1.8.0 deleting a pool waits for the workload cluster to delete its Nodes.",
        "Restore connectivity to the workload cluster, or upgrade to v1.8.0 or later (PR #10553).",
        (CAPI + "10544", CAPI + "10553"),
        deletion_workload_unreachable,
        needs_reconcile=True,
    ),
    Rule(
        "MP0904",
        "R9d",
        "Deleting after the cloud resources were removed",
        Severity.WARNING,
        "deleting longer than --deleting-grace with the failure 'has been deleted after being ready'",
        "The infra resources disappeared first (often a manual cleanup); the provider cannot finish.",
        "Confirm the cloud resources are gone, then remove the remaining finalizers by hand.",
        (CAPA + "4345", CAPA + "3608"),
        deletion_after_manual_cleanup,
        needs_reconcile=True,
    ),
    Rule(
        "MP1601",
        "R16",
        "Machines and infra machines out of step",
        Severity.WARNING,
        "the pool has MachinePool Machines, and for longer than --scaling-grace an infra machine "
        "(or a listed providerID with a Node) has no Machine, or a Machine has no infra machine "
        "(both kinds readable); at once for a Machine whose infra machine was deleted after "
        "provisioning (InfrastructureReady False, ObjectDeleted)",
        "Infra machines lack the cluster-name/pool-name labels, or the controller fails to create "
        "Machines; a Machine without an infra machine was made for one going away and stays.",
        "Check the infra machines' labels and the capi-controller-manager logs; delete a Machine "
        "whose infra machine is gone.",
        (CAPI + "13066", CAPI + "11392"),
        machines_out_of_step,
        needs_reconcile=True,
    ),
    Rule(
        "MP1602",
        "R16",
        "Unhealthy Machines nobody remediates",
        Severity.WARNING,
        "a pool Machine has OwnerRemediated=False (set by a MachineHealthCheck) and no "
        "MachineHealthCheck without a remediation template selects it now (MP2601 tells of those)",
        "MachineHealthCheck marks MachinePool Machines, but no controller remediates them.",
        "Replace the Machine yourself where single-Machine deletion is supported (see describe's verdict).",
        (CAPI + "11392", CAPI + "13065"),
        unremediated_machines,
    ),
    Rule(
        "MP2001",
        "R20",
        "Deleting a Machine does not delete the instance (OCI)",
        Severity.INFO,
        "a pool whose provider keeps the instance when a Machine is deleted (CAPOCI's); a "
        "warning when one of its "
        "Machines is being deleted",
        "CAPOCI only removes its finalizer: the Machine flow drains and deletes the Node, but the "
        "instance keeps running and is adopted again.",
        "Do not delete single Machines of OCI pools; change spec.replicas or use OCI's own tools.",
        (CAPI + "13066",),
        oci_delete_is_a_no_op,
    ),
    Rule(
        "MP2101",
        "R21",
        "Drain that never ends",
        Severity.ERROR,
        "a pool Machine is deleting with Deleting reason DrainingNode (or DrainingSucceeded False, "
        "Draining) for longer than --drain-grace and has no drain timeout",
        "MachinePool Machines inherit no nodeDrainTimeout, so a PodDisruptionBudget with no "
        "disruptions allowed blocks the deletion forever.",
        "Fix the PodDisruptionBudget or its workload, or set spec.deletion.nodeDrainTimeoutSeconds on "
        "the Machine (delete-machine --drain-timeout does this).",
        (),
        endless_drain,
        needs_reconcile=True,
    ),
]
