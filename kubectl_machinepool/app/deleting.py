"""delete-machine as a library: plan, carry out and follow, with no command line around it.

Inputs are plain values (DeleteMachine: what the user asked; Carry: how far to go) and output
goes through callbacks, so the command only parses flags, calls in here and prints. Every
failure is a MachinePoolError whose message says what was, or was not, written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from kubectl_machinepool.app.carrying import Callbacks, DryRun, listed, refuse, send
from kubectl_machinepool.app.planning import Ground, Live, nothing_written, owned
from kubectl_machinepool.app.reading import pools_in
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    MachinePoolError,
    NotFoundError,
    UsageError,
    pools_not_found,
)
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.deletefollow import follow
from kubectl_machinepool.kube.workload import workload_kube
from kubectl_machinepool.kube.writing import Outcome, apply_writes
from kubectl_machinepool.model.description import Description, describe
from kubectl_machinepool.model.selector import asked_selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import access_check
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Request, Target, Wanted, find_target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Disruption
from kubectl_machinepool.plans.writes import Access, Batch
from kubectl_machinepool.providers.deletion import Verdict

Report = Callable[[str], None]


@record
class DeleteMachine:
    """What the user asked for: one instance, where to look for it, and how it is to go."""

    wanted: Wanted
    mode: Mode = Mode.REPLACE
    pool: str | None = None
    drain_timeout: timedelta | None = None
    allow_unverified: bool = False
    workload_kubeconfig: str | None = None
    request_timeout: float | None = None
    # The namespace to look in; None: every namespace.
    namespace: str | None = None
    selector: str | None = None
    # --wait: the deletion is followed by a watch of the namespace's Machines.
    follow: bool = False
    # --ignore-owner: a GitOps owner that reverts the writes is a warning, not a refusal.
    ignore_owner: bool = False

    @property
    def request(self) -> Request:
        return Request(self.mode, self.drain_timeout, self.allow_unverified)


@record
class Carry:
    """How far to carry out a plan."""

    dry_run: DryRun = DryRun.NONE
    wait: bool = False
    # How long to follow the deletion; None: until it is done.
    follow_timeout: float | None = None


def note_on(snapshot: Snapshot, group: str, kind: str) -> str:
    """Why this very kind could not be read: kinds of different groups may share a name."""
    return snapshot.note_for(group, kind) or f"cannot read {kind} objects"


def _owning_pool(machines: list[RawObject], name: str) -> str | None:
    """The MachinePool a Machine of that name says it belongs to (its controller owner)."""
    for machine in machines:
        if text(dig(machine, "metadata", "name")) != name:
            continue
        for ref in dig(machine, "metadata", "ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("kind") == "MachinePool":
                return text(ref.get("name")) or None
    return None


def _one_target(
    targets: list[Target], asked: DeleteMachine, namespace: str | None, snapshot: Snapshot
) -> Target:
    wanted = asked.wanted
    where = f' in namespace "{namespace}"' if namespace else ""
    if not targets:
        hint = "kubectl machinepool describe lists each pool's instances"
        machines = list(snapshot.of_kind(CAPI_GROUP, "Machine"))
        names = {text(dig(m, "metadata", "name")) for m in machines}
        if wanted.machine and wanted.machine not in names:
            # No Machine of that name at all: kubectl's "not found", not a claim about its owner.
            raise NotFoundError(f"{wanted.display} not found{where}", hint=hint)
        owner = _owning_pool(machines, wanted.machine) if wanted.machine else None
        if owner and (asked.pool or asked.selector):
            flag, value = ("--pool", asked.pool) if asked.pool else ("-l", asked.selector)
            raise NotFoundError(
                f"{wanted.display} is an instance of MachinePool {owner}, which {flag} {value} "
                "leaves out",
                hint=f"name its pool with --pool {owner}, or drop {flag}",
            )
        if wanted.machine:
            hint = "a Machine of a MachineDeployment is deleted with kubectl delete machine"
        raise NotFoundError(f"{wanted.display} is no instance of a MachinePool{where}", hint=hint)
    if len(targets) > 1:
        pools = ", ".join(sorted(f"{t.pool.pool.namespace}/{t.pool.pool.name}" for t in targets))
        raise UsageError(
            f"{wanted.display} names instances of several pools: {pools}",
            hint="pick one with -n NAMESPACE, or --pool NAME within a namespace",
        )
    return targets[0]


def _disruption(ground: Ground, target: Target, asked: DeleteMachine) -> Disruption:
    machine = target.instance.machine
    if target.pool.deletion.verdict is Verdict.NOT_SUPPORTED or machine is None:
        return Disruption(None, "nothing will be drained")
    if not machine.node_name:
        return Disruption(None, "the Machine has no Node")
    cluster = target.cluster
    return ground.disruption(
        cluster.namespace, cluster.name, asked.workload_kubeconfig, machine.node_name
    )


def _unread_for(description: Description, snapshot: Snapshot, wanted: Wanted) -> list[str]:
    """What could not be read that might hold the instance the user named."""
    unread = []
    for cluster in description.clusters:
        for pool in cluster.pools:
            ref = pool.pool.infrastructure_ref
            if pool.infra_unread and ref is not None:
                unread.append(f"{ref.kind} {pool.pool.namespace}/{ref.name}")
        if wanted.node and not cluster.nodes_read:
            unread.append(f"the Nodes of Cluster {cluster.namespace}/{cluster.name}")
    unread += [f"{kind} objects" for group, kind in snapshot.unread if group != CAPI_GROUP]
    return sorted(set(unread))


def _readable(snapshot: Snapshot, target: Target) -> None:
    """Without the pool's infra pool, Machines and infra machines no verdict is honest."""
    pool = target.pool
    ref = pool.pool.infrastructure_ref
    if pool.infra_unread and ref is not None:
        why = note_on(snapshot, ref.api_group, ref.kind)
        raise ClusterAccessError(
            f"{why}; without {ref.kind} {ref.name}, whether {target.name} can be deleted "
            "is unknown",
            hint=f"delete-machine needs to get and list {ref.kind} objects in the namespace",
        )
    kinds = [(CAPI_GROUP, "Machine")]
    if pool.infra and pool.pool.machine_kind:
        kinds.append((pool.infra.group, pool.pool.machine_kind))
    for group, kind in kinds:
        if not snapshot.was_read(group, kind):
            raise ClusterAccessError(
                note_on(snapshot, group, kind),
                hint=f"delete-machine needs to list {kind} objects in the namespace",
            )


def _plan(ground: Ground, asked: DeleteMachine, warn: Report) -> Plan:
    namespace, pool, now = asked.namespace, asked.pool, ground.now
    selection = asked_selection(namespace, (pool,) if pool else (), selector=asked.selector)
    snapshot = ground.read(selection, asked.workload_kubeconfig, diagnosis=False)
    description = describe(snapshot, selection, now)
    if pool and not any(c.pools for c in description.clusters):
        raise pools_not_found([pool], namespace, pools_in(snapshot, namespace))
    for note in description.notes:
        warn(note)
    if not snapshot.was_read(CAPI_GROUP, "Machine"):
        raise ClusterAccessError(
            note_on(snapshot, CAPI_GROUP, "Machine"),
            hint="delete-machine needs to list Machine objects in the namespace",
        )
    targets = find_target(description, snapshot, asked.wanted)
    unread = _unread_for(description, snapshot, asked.wanted)
    if not targets and unread:
        raise ClusterAccessError(
            f"cannot tell whether {asked.wanted.display} is an instance of a MachinePool: "
            f"{', '.join(unread)} could not be read",
            hint="see the warnings above; delete-machine needs to read them",
        )
    target = _one_target(targets, asked, namespace, snapshot)
    _readable(snapshot, target)
    request = asked.request
    permissions = ground.permissions(writes_for(target, request, now))
    disruption = _disruption(ground, target, asked)
    plan = plan_deletion(target, request, now, permissions, disruption)
    plan = owned(plan, snapshot, ignore_owner=asked.ignore_owner)
    if asked.follow:
        # Refused, the watch would end the command with the Machine deleted: asked now.
        watch = Access("watch", CAPI_GROUP, "machines", "", target.pool.pool.namespace, "")
        why = "--wait follows the deletion by a watch of them (--no-wait deletes without it)"
        plan = replace(plan, checks=(*plan.checks, access_check(watch, ground.may(watch), why)))
    return ground.said(plan)


def plan_for(
    kube: Kube, asked: DeleteMachine, *, warn: Report, now: datetime | None = None
) -> Plan:
    """Read what is there and plan; a failure says that nothing was written."""
    return plan_on(Live(kube, now or datetime.now(UTC).replace(microsecond=0)), asked, warn=warn)


def plan_on(ground: Ground, asked: DeleteMachine, *, warn: Report) -> Plan:
    """plan_for on a ground: the cluster, or a dump of it."""
    with nothing_written():
        return _plan(ground, asked, warn)


def preview(plan: Plan, ui: Callbacks) -> None:
    """A client dry run with no cluster to send to (a plan made from a dump): refuse as
    carry_out refuses, else list the writes as it lists them."""
    refuse([r.message for r in plan.refusals])
    listed(plan.writes, ui)


def execute(
    kube: Kube, plan: Plan, *, dry_run: bool, warn: Report, earlier: tuple[str, ...] = ()
) -> Outcome:
    """Send the plan's writes, exactly as shown, with preconditions and undo; earlier: what
    the command changed before, named as left whatever befalls these."""
    return apply_writes(kube, _batch(plan, earlier), dry_run=dry_run, warn=warn)


def _batch(plan: Plan, earlier: tuple[str, ...] = ()) -> Batch:
    planned = tuple(r for r in (plan.target.machine_raw, plan.target.pool_raw) if r is not None)
    mp = plan.target.pool.pool
    hint = f"check the state with: kubectl machinepool describe {mp.name} -n {mp.namespace}"
    return Batch(plan.writes, planned, hint, earlier)


def follow_deletion(
    kube: Kube, plan: Plan, asked: DeleteMachine, timeout: float | None, ui: Callbacks
) -> None:
    """Follow the deletion; stopping (Ctrl-C, a timeout) never stops the deletion itself."""
    cluster = plan.target.cluster
    machine = next(w.target for w in plan.writes if w.target.plural == "machines")
    workload: Kube | None = None
    try:
        ui.inform(
            f"Following {machine.display} until it is gone (Ctrl-C stops following, not the "
            "deletion)..."
        )
        try:
            workload = workload_kube(
                kube,
                cluster.namespace,
                cluster.name,
                asked.workload_kubeconfig,
                asked.request_timeout,
            )
        except MachinePoolError as err:
            ui.warn(f"the Node is not followed: {err.message}")
        follow(kube, workload, plan, timeout=timeout, report=ui.report, warn=ui.warn)
    except KeyboardInterrupt:
        ui.inform(f"Stopped following: the deletion of {machine.display} goes on in the cluster.")
        raise
    finally:
        if workload is not None:
            workload.__exit__(None, None, None)


def carry_out(kube: Kube, plan: Plan, asked: DeleteMachine, carry: Carry, ui: Callbacks) -> None:
    """Refuse, or confirm and write, then report each write kubectl's way (and follow)."""
    refuse([r.message for r in plan.refusals])
    outcome = send(kube, plan.writes, _batch(plan), carry.dry_run, ui)
    if outcome is None:
        return
    server_dry_run = carry.dry_run is DryRun.SERVER
    final = plan.writes[-1]
    for line in outcome.lines if final.verb != "delete" else outcome.lines[:-1]:
        ui.report(line)
    if carry.wait and not server_dry_run:
        follow_deletion(kube, plan, asked, carry.follow_timeout, ui)
        machine = next(w.target for w in plan.writes if w.target.plural == "machines")
        ui.report(f"{machine.kubectl_name} deleted")
    elif final.verb == "delete":
        ui.report(outcome.lines[-1])
    elif not server_dry_run:
        ui.report("The provider deletes the marked Machine next (--wait follows it).")
