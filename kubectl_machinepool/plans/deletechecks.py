"""delete-machine's plan: whether the instance may go, checked in the order the user reads.

Pure: built from describe's model and the raw objects it came from, plus what the command
found out around it (the user's permissions, PodDisruptionBudgets on the workload cluster).
The plan is what the user sees and confirms, and exactly what is then written.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import ref_group
from kubectl_machinepool.base.fields import RawObject, dig, items, mapping
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.model.nodedrain import drain_bound
from kubectl_machinepool.model.pool import PAUSED_ANNOTATION
from kubectl_machinepool.model.zones import delete_balance
from kubectl_machinepool.plans.checks import Check, Level, permission_checks
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Request, Target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Disruption
from kubectl_machinepool.plans.scalechecks import topology_replicas
from kubectl_machinepool.plans.writes import Access
from kubectl_machinepool.providers.deletion import Verdict
from kubectl_machinepool.providers.registry import annotation_deletes, infra_pool_of


def _owned_by_machine(infra_machine: RawObject | None, machine: RawObject) -> bool:
    uid = dig(machine, "metadata", "uid")
    name = dig(machine, "metadata", "name")
    return any(
        o.get("kind") == "Machine" and (o.get("uid") == uid if uid else o.get("name") == name)
        for o in items(dig(infra_machine, "metadata", "ownerReferences"))
    )


def _machine_checks(target: Target) -> list[Check]:
    """Decision rule steps 1c/1d: a Machine of this pool whose infra machine it controls."""
    pool, instance = target.pool, target.instance
    machine, raw = instance.machine, target.machine_raw
    if machine is None or raw is None:
        return [
            Check(
                Level.REFUSED,
                f"{target.name} has no Machine: the pool lists or owns it, but Cluster API has "
                "no object that deleting would remove",
            )
        ]
    checks = []
    controllers = [
        o for o in items(dig(raw, "metadata", "ownerReferences")) if o.get("controller") is True
    ]
    if not any(
        o.get("kind") == "MachinePool" and o.get("uid") == pool.pool.uid for o in controllers
    ):
        found = ", ".join(f"{o.get('kind')} {o.get('name')}" for o in controllers) or "none"
        checks.append(
            Check(
                Level.REFUSED,
                f"Machine {machine.object.name} is not controlled by MachinePool {pool.pool.name} "
                f"(uid {pool.pool.uid or 'unknown'}); its controller: {found}",
            )
        )
    kind = pool.pool.machine_kind
    group = pool.infra.group if pool.infra else None
    points_at = ref_group(dig(raw, "spec", "infrastructureRef"))
    if machine.infra_kind != kind or points_at != group:
        checks.append(
            Check(
                Level.REFUSED,
                f"Machine {machine.object.name} points at {machine.infra_kind} in {points_at}, not "
                f"the {kind} in {group} its infra pool declares",
            )
        )
    elif target.infra_machine_raw is None:
        checks.append(
            Check(
                Level.REFUSED,
                f"{kind} {machine.infra_name} does not exist: deleting the Machine would not reach "
                "an instance",
            )
        )
    elif not _owned_by_machine(target.infra_machine_raw, raw):
        checks.append(
            Check(
                Level.REFUSED,
                f"{kind} {machine.infra_name} does not name Machine {machine.object.name} as its "
                "owner: Cluster API would not delete it",
            )
        )
    else:
        checks.append(
            Check(
                Level.OK,
                f"Machine {machine.object.name} is controlled by MachinePool {pool.pool.name} "
                f"(uid) and controls {kind} {machine.infra_name}",
            )
        )
    if machine.object.deleting_since is not None:
        checks.append(
            Check(Level.REFUSED, f"Machine {machine.object.name} is already being deleted")
        )
    if machine.node_name is None:
        checks.append(
            Check(
                Level.WARNING,
                f"Machine {machine.object.name} has no nodeRef: no Node will be drained first",
            )
        )
    return checks + _hold_checks(target)


_HOOKS = (
    "pre-drain.delete.hook.machine.cluster.x-k8s.io",
    "pre-terminate.delete.hook.machine.cluster.x-k8s.io",
)


def _hold_checks(target: Target) -> list[Check]:
    """Annotations that make Cluster API stop at a step of the deletion."""
    checks = []
    for obj in (target.machine_raw, target.infra_machine_raw):
        notes = mapping(dig(obj, "metadata", "annotations"))
        what = f"{obj.get('kind')} {dig(obj, 'metadata', 'name')}" if obj else ""
        if PAUSED_ANNOTATION in notes:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"{what} is paused ({PAUSED_ANNOTATION}): its deletion would stall",
                )
            )
        hooks = sorted(k for k in notes if k.startswith(_HOOKS))
        if hooks:
            checks.append(
                Check(
                    Level.WARNING,
                    f"{what} carries deletion hooks {', '.join(hooks)}: the deletion waits until "
                    "their owners remove them",
                )
            )
    return checks


def _verdict_checks(target: Target, request: Request) -> list[Check]:
    verdict = target.pool.deletion
    if verdict.verdict is Verdict.NOT_SUPPORTED:
        instead = f"; instead: {verdict.instead}" if verdict.instead else ""
        return [Check(Level.REFUSED, f"not supported: {verdict.reason}{instead}")]
    if verdict.verdict is Verdict.UNVERIFIED:
        if request.mode is Mode.SCALE_DOWN:
            return [
                Check(
                    Level.REFUSED,
                    f"unverified: {verdict.reason}, and whether it deletes the annotated instance "
                    "first is not known: --scale-down could remove any instance",
                )
            ]
        if request.allow_unverified:
            return [
                Check(Level.WARNING, f"unverified: {verdict.reason} (--allow-unverified-provider)")
            ]
        return [
            Check(
                Level.REFUSED,
                f"unverified: {verdict.reason}; --allow-unverified-provider goes ahead anyway",
            )
        ]
    effect = verdict.scale_down if request.mode is Mode.SCALE_DOWN else verdict.reason
    checks = [Check(Level.OK, f"supported: {effect}")]
    if request.mode is Mode.SCALE_DOWN and not verdict.honours_delete_annotation:
        checks.append(
            Check(
                Level.REFUSED,
                f"--scale-down cannot choose this instance: {verdict.scale_down}; use --replace, "
                "or lower spec.replicas and let the cloud pick",
            )
        )
    elif (
        request.mode is Mode.SCALE_DOWN
        and target.pool.infra is not None
        and annotation_deletes(target.pool.infra.kind)
    ):
        checks.append(
            Check(
                Level.WARNING,
                f"{target.pool.infra.kind}: the annotation alone makes the provider delete the "
                "instance, so it cannot be taken back if the scale step fails",
            )
        )
    return checks


def _paused_or_deleting(target: Target) -> list[Check]:
    cluster, pool = target.cluster, target.pool
    problems = []
    if cluster.cluster is None and not cluster.cluster_unread:
        problems.append(f"Cluster {cluster.namespace}/{cluster.name} does not exist")
    if pool.paused_by:
        problems.append(f"reconciliation is paused ({pool.paused_by})")
    if cluster.cluster and cluster.cluster.deleting_since:
        problems.append(f"Cluster {cluster.namespace}/{cluster.name} is being deleted")
    if pool.pool.deleting_since:
        problems.append(f"MachinePool {pool.pool.name} is being deleted")
    infra = target.infra_pool_raw
    if infra is not None and PAUSED_ANNOTATION in mapping(dig(infra, "metadata", "annotations")):
        problems.append(f"{pool.infra.kind if pool.infra else 'the infra pool'} is paused")
    if pool.infra and pool.infra.deleting_since:
        problems.append(f"{pool.infra.kind} {pool.infra.name} is being deleted")
    if problems:
        return [
            Check(
                Level.REFUSED,
                "; ".join(problems) + ": nothing would act on the deletion as planned",
            )
        ]
    if cluster.cluster is None:
        return [
            Check(
                Level.WARNING,
                f"Cluster {cluster.namespace}/{cluster.name} could not be read: whether it is "
                "paused or deleting is unknown (the pool and its infra pool are neither)",
            )
        ]
    return [
        Check(Level.OK, "the Cluster, the pool and its infra pool are neither paused nor deleting")
    ]


def _replica_checks(target: Target, request: Request) -> list[Check]:
    mp = target.pool.pool
    low, high = mp.autoscaler_bounds
    if request.mode is Mode.REPLACE:
        checks = [
            Check(Level.OK, f"spec.replicas stays {mp.desired}: a replacement instance follows")
        ]
        if mp.replicas_managed_by:
            checks.append(Check(Level.WARNING, f"replicas are managed by {mp.replicas_managed_by}"))
        return checks
    if mp.desired is None or mp.desired < 1:
        return [Check(Level.REFUSED, "spec.replicas is not set above 0: nothing to scale down")]
    if mp.replicas_managed_by:
        return [
            Check(
                Level.REFUSED,
                f"replicas are managed by {mp.replicas_managed_by} (replicas-managed-by): lowering "
                "spec.replicas would fight it",
            )
        ]
    topology = topology_replicas(target.pool, target.cluster_raw)
    if topology is not None:
        return [topology]
    if low is not None and mp.desired - 1 < low:
        return [
            Check(
                Level.REFUSED,
                f"scaling to {mp.desired - 1} goes below the cluster-autoscaler minimum {low}",
            )
        ]
    bounds = (
        f" (cluster-autoscaler bounds {low}..{high})" if low is not None or high is not None else ""
    )
    return [Check(Level.OK, f"spec.replicas goes from {mp.desired} to {mp.desired - 1}{bounds}")]


def _rollout_check(target: Target) -> list[Check]:
    phase = target.pool.pool.phase
    if phase and phase != "Running":
        return [
            Check(
                Level.WARNING,
                f"the pool is {phase}, not Running: it is mid-rollout or scaling, so the "
                "replacement may take longer and counts will move",
            )
        ]
    return []


def _zone_check(target: Target, request: Request) -> list[Check]:
    """How the delete changes the pool's zone balance (cluster-api#4063), and what the
    provider does about it."""
    pool = target.pool
    if pool.zones is None:
        return []
    balance = delete_balance(
        pool.zones,
        target.instance,
        infra_pool_of(pool.infra),
        target.infra_pool_raw,
        replacing=request.mode is Mode.REPLACE,
    )
    if balance is None:
        return []
    return [Check(Level.WARNING if balance.worse else Level.OK, balance.message)]


def _drain_checks(target: Target, request: Request, disruption: Disruption) -> list[Check]:
    configured = drain_bound(target.machine_raw)
    limit_seconds = request.drain_timeout.total_seconds() if request.drain_timeout else configured
    bounded = bool(limit_seconds)
    node = target.instance.machine.node_name if target.instance.machine else None
    checks = []
    if disruption.budgets is None:
        checks.append(
            Check(
                Level.WARNING,
                f"PodDisruptionBudgets were not checked: {disruption.note or 'unknown reason'}",
            )
        )
    elif disruption.blocking:
        names = ", ".join(
            f"{b.namespace}/{b.name} (pods {', '.join(b.pods)})" for b in disruption.blocking
        )
        if limit_seconds:
            limit = human_duration(timedelta(seconds=max(1, int(limit_seconds))))
            checks.append(
                Check(
                    Level.WARNING,
                    f"PodDisruptionBudgets allow no disruption now: {names}; the drain gives up "
                    f"after {limit} and the Node goes anyway",
                )
            )
        else:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"PodDisruptionBudgets allow no disruption now: {names}; the drain of Node "
                    f"{node} would wait forever (pool Machines get no drain timeout); fix the "
                    "budget, or pass --drain-timeout to bound the drain",
                )
            )
    elif disruption.budgets:
        count, covered = len(disruption.budgets), sum(len(b.pods) for b in disruption.budgets)
        budgets = (
            "1 PodDisruptionBudget covers" if count == 1 else f"{count} PodDisruptionBudgets cover"
        )
        checks.append(
            Check(
                Level.OK,
                f"{budgets} {covered} pods on Node {node}, and each allows a disruption now",
            )
        )
    else:
        checks.append(Check(Level.OK, f"no PodDisruptionBudget covers a pod on Node {node}"))
    if not bounded and not disruption.blocking:
        checks.append(
            Check(
                Level.WARNING,
                "the Machine has no drain timeout: a budget that starts blocking during the drain "
                "stalls it forever (--drain-timeout bounds it)",
            )
        )
    return checks


def _then(target: Target, request: Request) -> str:
    pool, machine = target.pool, target.instance.machine
    node = machine.node_name if machine and machine.node_name else "(no Node)"
    infra = f"{pool.pool.machine_kind} {machine.infra_name}" if machine else "the infra machine"
    drain = f"Cluster API drains Node {node} (evicting pods, respecting PodDisruptionBudgets)"
    if request.mode is Mode.SCALE_DOWN:
        effect = (
            pool.deletion.scale_down or "the provider should remove the annotated Machine first"
        )
        return (
            f"{effect}: {drain}, deletes {infra}, and the provider removes that very instance; "
            "the pool stays one smaller"
        )
    return f"{drain}, deletes {infra} and then the Node; {pool.deletion.reason}"


def plan_deletion(
    target: Target,
    request: Request,
    now: datetime,
    permissions: dict[Access, bool | None],
    disruption: Disruption,
) -> Plan:
    """Every check, in the order the user reads them, and the writes they guard."""
    writes = writes_for(target, request, now)
    checks = _verdict_checks(target, request)
    if target.pool.deletion.verdict is not Verdict.NOT_SUPPORTED:
        checks += _machine_checks(target)
    checks += _paused_or_deleting(target)
    checks += _replica_checks(target, request)
    checks += _rollout_check(target)
    if target.pool.deletion.verdict is not Verdict.NOT_SUPPORTED:
        checks += _zone_check(target, request)
    if target.instance.machine is not None:
        checks += _drain_checks(target, request, disruption)
    checks += permission_checks(writes, permissions)
    return Plan(target, request, tuple(checks), writes, _then(target, request))
