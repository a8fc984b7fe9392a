"""rollout restart as a library: plan, record the start, then replace the old instances through
delete-machine's replace path while fewer than --max-unavailable are unavailable. No click, no
printing: output goes through callbacks.

Unavailable: an instance whose Machine is going, or whose Node is missing or not Ready, and every
instance the pool is short of its replicas (between a Machine's end and its replacement's
start). Each replacement is delete-machine's own plan, read afresh and sent through the write
engine; the user confirmed the restart's plan, which names every instance it replaces. Stopping
(Ctrl-C, --no-wait, a timeout) leaves the recorded restart to go on with the same command.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from kubectl_machinepool.app import deleting, planning
from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    IncompleteError,
    Interrupted,
    MachinePoolError,
    RefusedError,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.writing import apply_writes
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.restartrecord import made_before
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level, Rereads, nodes_unread
from kubectl_machinepool.plans.deletetarget import Mode, Wanted
from kubectl_machinepool.plans.restart import (
    RestartPlan,
    RestartRequest,
    finished,
    plan_restart,
)
from kubectl_machinepool.plans.writes import Batch

# How often the pool is read again while a replacement is awaited.
POLL = 5.0
# What each round reads again (_readable, and each replacement's own plan): unreadable when the
# restart is planned, a refusal, not a stop once the record is written.
REREADS = Rereads(
    nodes="before each replacement the restart judges from them which instances are unavailable",
    infra="each replacement is planned from them, as delete-machine plans it",
)


@record
class Restart:
    """What the user asked for: which pools, in which namespace, how."""

    names: tuple[str, ...]
    namespace: str | None  # None: a dump's, wherever the pools are
    request: RestartRequest
    workload_kubeconfig: str | None = None
    ignore_owner: bool = False


@record
class Carry:
    # The run's clock (the environment's), for what a read judges by age; never the start.
    clock: Callable[[], datetime]
    dry_run: DryRun = DryRun.NONE
    # False: start what may start now, and leave the rest to the next run.
    wait: bool = True
    # How long to go on; None: until every old instance is replaced.
    timeout: float | None = None


def plans_for(ground: planning.Ground, asked: Restart, *, ui: Callbacks) -> tuple[RestartPlan, ...]:
    """Read the pools and plan each, with what delete-machine would refuse of the first
    replacement (a PodDisruptionBudget that blocks the drain without --drain-timeout): refused
    then, before anything is written. A failure says that nothing was written."""
    plans = planning.plan_each(
        ground,
        asked,
        lambda pool, snapshot, allowed: plan_restart(
            pool, snapshot, asked.request, _server_now(ground), permissions=allowed
        ),
        warn=ui.warn,
        rereads=REREADS,
    )
    with planning.nothing_written():
        return tuple(_first_replacement(ground, plan, asked, ui) for plan in plans)


def _server_now(ground: planning.Ground) -> datetime:
    """The API server's time as its answers to the plan's reads said, which is when the
    restart begins: the instances the plan lists are those it read, all made before it, and
    every replacement is made after. Not the time the server stamps on the write that records
    it: a write cannot carry its own stamp, and a second write to set it could fail and leave
    a start that is not the server's. A dump's time is its capture's."""
    if not isinstance(ground, planning.Live):
        return ground.now
    stamped = ground.kube.server_clock.time
    if stamped is None:
        raise ClusterAccessError(
            f"the answers of {ground.kube.where} carry no Date header: the API server's "
            "time, which a restart begins at, is unknown",
            hint="a proxy between you and the API server may drop it; connect to the server",
        )
    return stamped


def _replacement(
    timeout: float | None, asked: Restart, pool: PoolDescription, machine: str
) -> deleting.DeleteMachine:
    return deleting.DeleteMachine(
        Wanted(machine=machine),
        Mode.REPLACE,
        pool=pool.pool.name,
        drain_timeout=asked.request.drain_timeout,
        workload_kubeconfig=asked.workload_kubeconfig,
        request_timeout=timeout,
        namespace=pool.pool.namespace,
        ignore_owner=asked.ignore_owner,
    )


def _first_replacement(
    ground: planning.Ground, plan: RestartPlan, asked: Restart, ui: Callbacks
) -> RestartPlan:
    if plan.refusals or not plan.old:
        return plan
    first = plan.old[0]
    replace = _replacement(ground.timeout, asked, plan.pool, first)
    refused = deleting.plan_on(ground, replace, warn=ui.warn).refusals
    found = [
        Check(Level.REFUSED, f"the first replacement, machine {first}: {r.message}")
        for r in refused
    ]
    return dataclasses.replace(plan, checks=(*plan.checks, *found))


def unavailable(pool: PoolDescription) -> int:
    going = [
        i
        for i in pool.instances
        if (i.machine is not None and i.machine.object.deleting_since is not None)
        or i.node is None
        or i.node.ready is not True
    ]
    short = max(0, (pool.pool.desired or 0) - len(pool.instances))
    return len(going) + short


def carry_out(
    kube: Kube, plans: tuple[RestartPlan, ...], asked: Restart, carry: Carry, ui: Callbacks
) -> None:
    """Refuse, or confirm and record the start, then replace each pool's old instances."""
    if carry.dry_run is DryRun.CLIENT:
        preview(plans, ui)
        return
    outcome = planning.carry_out(kube, plans, carry.dry_run, ui)
    if outcome is None or carry.dry_run is DryRun.SERVER:
        return
    deadline = None if carry.timeout is None else time.monotonic() + carry.timeout
    for plan in plans:
        _Pool(kube, plan, asked, carry, ui, deadline).restart()


def preview(plans: tuple[RestartPlan, ...], ui: Callbacks) -> None:
    """A client dry run: refuse, or list the writes and the instances that would be replaced."""
    planning.preview(plans, ui)
    for plan in plans:
        for name in plan.old:
            ui.report(f"machine.cluster.x-k8s.io/{name} replaced (dry run)")


def _readable(snapshot: Snapshot, pool: PoolDescription) -> None:
    """Which instances are old and which available needs the Machines, the infra pool and
    the Nodes: without one, the restart stops rather than judge from half the picture."""
    mp = pool.pool
    if not snapshot.was_read(CAPI_GROUP, "Machine"):
        raise ClusterAccessError(snapshot.note_for(CAPI_GROUP, "Machine") or "cannot read Machines")
    if pool.infra_unread:
        raise ClusterAccessError(f"cannot read the infra pool of MachinePool {mp.name}")
    if why := nodes_unread(snapshot, mp.namespace, mp.cluster):
        raise ClusterAccessError(f"the Nodes of Cluster {mp.namespace}/{mp.cluster}: {why}")


@dataclass
class _Pool:
    kube: Kube
    plan: RestartPlan
    asked: Restart
    carry: Carry
    ui: Callbacks
    deadline: float | None
    # The Machines this run has replaced so far.
    replaced: list[str] = dataclasses.field(default_factory=list)

    @property
    def _name(self) -> str:
        return self.plan.pool.pool.name

    @property
    def _namespace(self) -> str:
        return self.plan.pool.pool.namespace

    def _again(self) -> str:
        return f"{self._left()}: run the same command again to go on"

    def _left(self) -> str:
        """What this run has changed so far: the record, and the Machines it replaced."""
        ns = self._namespace
        replaced = ", ".join(f"Machine {ns}/{m}" for m in self.replaced)
        return f"the restart is recorded on MachinePool {ns}/{self._name}" + (
            f" (replaced by this run: {replaced})" if replaced else ""
        )

    def _read(self) -> tuple[Snapshot, PoolDescription]:
        snapshot, (pool,) = planning.read_pools(
            planning.Live(self.kube, self.carry.clock()),
            self._namespace,
            (self._name,),
            workload_kubeconfig=self.asked.workload_kubeconfig,
            warn=None,
        )
        _readable(snapshot, pool)
        return snapshot, pool

    def restart(self) -> None:
        try:
            self._replace_old()
        except KeyboardInterrupt:
            self.ui.inform(f"Stopped: {self._again()}.")
            raise
        except Interrupted as stopped:
            again = "run the same command again to go on"
            raise Interrupted(stopped.exit_code, f"{stopped.report}; {again}") from None
        except MachinePoolError as err:
            # The record is written: whatever failed after it leaves the pool changed.
            left = self._left()
            said = left in err.message  # the write engine names what it left, earlier included
            raise IncompleteError(
                err.message if said else f"{err.message.rstrip('.')}. Left changed: {left}",
                hint=f"run the same command again to go on; check the state with: kubectl "
                f"machinepool describe {self._name} -n {self._namespace}",
            ) from err

    def _replace_old(self) -> None:
        request = self.asked.request
        while True:
            snapshot, pool = self._read()
            old = made_before(pool.instances, self.plan.started)
            busy = unavailable(pool)
            if not old and not busy:
                self._finish(snapshot)
                return
            if old and busy < request.max_unavailable:
                self._replace(old[0].machine.object.name, len(old))  # type: ignore[union-attr]
                continue
            if not self.carry.wait:
                self.ui.inform(f"Not waiting for the replacements: {self._again()}.")
                return
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise MachinePoolError(f"timed out with {len(old)} old instance(s) left")
            time.sleep(POLL)

    def _replace(self, machine: str, left: int) -> None:
        self.ui.inform(f"Replacing machine {machine} ({left} old instance(s) of {self._name} left)")
        delete = _replacement(self.kube.timeout, self.asked, self.plan.pool, machine)
        plan = deleting.plan_for(self.kube, delete, warn=self.ui.warn, now=self.carry.clock())
        if plan.refusals:
            raise RefusedError(
                f"replacing machine {machine} was refused: {plan.refusals[0].message}"
            )
        outcome = deleting.execute(
            self.kube, plan, dry_run=False, warn=self.ui.warn, earlier=(self._left(),)
        )
        self.replaced.append(machine)
        for line in outcome.lines:
            self.ui.report(line)

    def _finish(self, snapshot: Snapshot) -> None:
        raw = snapshot.find(CAPI_GROUP, "MachinePool", self._namespace, self._name) or {}
        write = finished(raw)
        hint = f"check the state with: kubectl machinepool describe {self._name}"
        apply_writes(self.kube, Batch((write,), (raw,), hint), dry_run=False, warn=self.ui.warn)
        self.ui.report(f"machinepool.cluster.x-k8s.io/{self._name} restarted")
