"""Rules about the pool's place in its Cluster and autoscaling (R14, R17, R18)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from kubectl_machinepool.base.fields import (
    RawObject,
    dig,
    field_keys,
    integer,
    items,
    mapping,
    text,
)
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.diagnostics import remedies
from kubectl_machinepool.diagnostics.core import (
    AUTOSCALER,
    CAPA,
    CAPI,
    CAPZ,
    Context,
    Finding,
    Rule,
    Severity,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.providers.registry import infra_pool_of

TOPOLOGY_MANAGER = "capi-topology"
# The topology controller's first applies come with the object's creation.
_SETTLE = timedelta(minutes=1)


def _topology_reapplied(raw: RawObject | None) -> datetime | None:
    """When the topology controller last changed the object, if later than its creation.

    Generation alone says nothing: CABPK writes the KubeadmConfig's own spec (discovery, every
    token rotation), so only the topology manager's managedFields entry dates a template change.
    """
    created = parse_time(dig(raw, "metadata", "creationTimestamp"))
    for entry in items(dig(raw, "metadata", "managedFields")):
        when = parse_time(entry.get("time"))
        if (
            entry.get("manager") == TOPOLOGY_MANAGER
            and when
            and created
            and when - created > _SETTLE
            and "f:spec" in mapping(entry.get("fieldsV1"))
        ):
            return when
    return None


def bootstrap_drift(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp, boot = pool.pool, pool.pool.bootstrap_ref
    if not mp.topology_owned or boot is None:
        return
    raw = ctx.raw(boot.api_group, boot.kind, mp.namespace, boot.name)
    generation = integer(dig(raw, "metadata", "generation"))
    changed = _topology_reapplied(raw)
    if changed is not None and generation is not None and generation > 1:
        message = (
            f"the topology controller changed {boot.kind} {boot.name} in place at "
            f"{format_time(changed)} (generation {generation}), after creating it: if the change "
            "touched its spec, existing instances probably never got it"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def paused_reconciliation(
    rule: Rule, pool: PoolDescription, ctx: Context, withheld: list[str]
) -> Iterator[Finding]:
    """Stands in for the findings that presume controllers at work, naming them."""
    if not pool.paused_by:
        return
    cond = pool.pool.conditions.get("Paused")
    lasted = (
        f" for {human_duration(ctx.now - cond.since)}"
        if cond is not None and cond.status == "True" and cond.since
        else ""
    )
    message = f"reconciliation is paused{lasted} ({pool.paused_by}): Cluster API leaves this pool as it is"
    if withheld:
        message += (
            f"; {', '.join(withheld)} would apply if it were reconciled, and are not judged "
            "while it is paused"
        )
    yield rule.finding(pool, pool_subject(pool), message)


def cluster_looks_healthy(
    rule: Rule, pool: PoolDescription, ctx: Context, problems: int
) -> Iterator[Finding]:
    """Emitted after the other rules: the Cluster says all is well while this pool is not."""
    state = ctx.cluster.cluster
    if state is None or problems == 0:
        return
    cond = state.conditions.first("Available", "Ready")
    if cond is not None and cond.status == "True":
        message = (
            f"Cluster {state.namespace}/{state.name} reports {cond.type} True while this pool has "
            f"{problems} warning or error finding{'s' if problems != 1 else ''}: MachinePool health "
            "is not aggregated into the Cluster"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def autoscaler_without_machines(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    # Bounds the autoscaler cannot use (MP0303) or a max of 0 make no node group of the pool.
    if not pool.pool.autoscaler.node_group or pool.uses_machines or pool.infra is None:
        return
    message = (
        "cluster-autoscaler manages this pool (min/max annotations) but it has no MachinePool "
        "Machines: scale-down can only lower replicas and let the cloud pick the instance, and "
        "needs a cluster-autoscaler with kubernetes/autoscaler PR #9693"
    )
    yield rule.finding(pool, pool_subject(pool), message)


def autoscaler_on_asg_machines(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    infra = pool.infra
    provider = infra_pool_of(infra)
    if (
        not pool.pool.autoscaler.node_group
        or not pool.uses_machines
        or infra is None
        or provider is None
        or provider.autoscaler_scale_in is None
    ):
        return
    message = f"cluster-autoscaler manages this {infra.kind}, but {provider.autoscaler_scale_in}"
    yield rule.finding(pool, pool_subject(pool), message)


def azure_ready_but_failed(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    infra = pool.infra
    provider = infra_pool_of(infra)
    state = provider.provisioning_state_field if provider else None
    if infra is None or provider is None or state is None or infra.ready is not True:
        return
    ref = pool.pool.infrastructure_ref
    raw = ctx.raw(ref.api_group, ref.kind, pool.pool.namespace, ref.name) if ref else None
    if text(dig(raw, *field_keys(state))) == "Failed":
        message = (
            f"{infra.kind} {infra.name} reports ready while its {provider.cloud_object} "
            "provisioningState is Failed: cluster-autoscaler keeps scaling up into the failure"
        )
        yield rule.finding(pool, pool_subject(pool), message)


RULES = [
    Rule(
        "MP0001",
        "",
        "Reconciliation paused",
        Severity.INFO,
        "the pool has the cluster.x-k8s.io/paused annotation or its Cluster has spec.paused",
        "Nothing reconciles the pool: its status stays as it was, so the findings that expect a "
        "controller to act (stuck scaling, panics, stale nodeRefs, slow deletion) are withheld and "
        "only named.",
        "Unpause when the maintenance is over (remove the annotation, or set spec.paused false); "
        "a pause left behind by an interrupted clusterctl move is a common cause.",
        (),
        remedy=remedies.RESUME,
    ),
    Rule(
        "MP1401",
        "R14",
        "Bootstrap change patched in place under ClusterClass",
        Severity.WARNING,
        "a topology-owned pool whose bootstrap config has metadata.generation above 1 and a "
        "capi-topology managedFields entry owning spec fields, written more than a minute after "
        "creation (needs a live read: dumps usually omit managedFields; generation alone is no "
        "evidence, as CABPK writes the config's spec itself)",
        "ClusterClass patches the bootstrap config in place; providers roll instances only when bootstrap.configRef.name changes, so existing instances keep the old configuration.",
        "Roll the existing instances through the provider; outside ClusterClass rotate the config (new name, then update the ref).",
        (CAPI + "10496", CAPA + "4071", CAPA + "4619"),
        bootstrap_drift,
        remedy=remedies.RESTART_POOL,
    ),
    Rule(
        "MP1701",
        "R17",
        "The Cluster looks healthy, the pool is not",
        Severity.INFO,
        "the Cluster's Available (or v1beta1 Ready) is True while this pool has warning or error findings",
        "MachinePool conditions are not aggregated into the Cluster's conditions, and pool Machines are excluded from the worker conditions.",
        "Evaluate each MachinePool directly; never conclude 'all good' from the Cluster alone.",
        (CAPI + "11416", CAPI + "11105"),
    ),
    Rule(
        "MP1801",
        "R18",
        "Autoscaler on a pool without Machines",
        Severity.INFO,
        "a pool with cluster-autoscaler min/max annotations whose infra pool has no per-instance machine kind",
        "Scale-down can only lower replicas and let the cloud choose the instance; before kubernetes/autoscaler PR #9693 it is blocked ('unknown machine').",
        "Upgrade cluster-autoscaler; prefer providers with MachinePool Machines that honour delete-machine when the choice of instance matters.",
        (AUTOSCALER + "9681", AUTOSCALER + "9693", AUTOSCALER + "7976"),
        autoscaler_without_machines,
    ),
    Rule(
        "MP1802",
        "R18",
        "Autoscaler on AWSMachinePool Machines",
        Severity.WARNING,
        "an AWSMachinePool with MachinePool Machines and cluster-autoscaler min/max annotations",
        "CAPA does not honour cluster.x-k8s.io/delete-machine: the ASG termination policy picks the instance, without a Cluster API drain.",
        "Use ASG lifecycle hooks with aws-node-termination-handler, or a provider that honours delete-machine.",
        (CAPA + "2023", CAPA + "2574"),
        autoscaler_on_asg_machines,
    ),
    Rule(
        "MP1803",
        "R18",
        "AzureMachinePool ready while its VMSS failed",
        Severity.ERROR,
        "AzureMachinePool status.ready is true while status.provisioningState is Failed",
        "cluster-autoscaler does not back off and keeps scaling up into the failure (for example zone capacity).",
        "Fix the VMSS failure; upgrade CAPZ to a release with PR #6488.",
        (CAPZ + "5860", CAPZ + "6488"),
        azure_ready_but_failed,
    ),
]
