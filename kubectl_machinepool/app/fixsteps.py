"""The commands fix carries its steps out with, each as the command itself does after its
flags: its own plan and preflight, read afresh and shown; confirmed; written by the write engine;
followed where the command follows what it starts (upgrade's rollout, delete-machine's
deletion, the restart's replacements). No write of its own: one runner per command, in RUNNERS.
No click, no printing: plans and rollouts are shown through callbacks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from kubectl_machinepool.app import (
    deleting,
    pausing,
    planning,
    restarting,
    scaling,
    undoing,
    upgrading,
)
from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.app.rolloutstatus import End
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.interrupts import before_writes
from kubectl_machinepool.plans.deletetarget import Mode, Wanted
from kubectl_machinepool.plans.fix import Step
from kubectl_machinepool.plans.restart import RestartRequest
from kubectl_machinepool.plans.scale import ScaleRequest
from kubectl_machinepool.plans.undo import UndoRequest
from kubectl_machinepool.plans.upgrade import UpgradeRequest


@record
class Carry:
    """How every step is carried out."""

    clock: Callable[[], datetime]
    dry_run: DryRun = DryRun.NONE
    # How long a step follows what it started; None: until it is done (or stuck).
    timeout: float | None = None
    stuck_after: timedelta = timedelta(minutes=10)
    # --ignore-owner, for every step's own owner checks.
    ignore_owner: bool = False


@record
class Shows:
    """What only the command line can draw: a step's own plan, as its command draws it; the
    rollout an upgrade follows, as rollout status shows it, and how that ends."""

    plan: Callable[[Any], None]
    rollout: Callable[[Report], None]
    ended: Callable[[Report, End], None]


class _Planned(Protocol):
    @property
    def nothing_to_do(self) -> bool: ...


P = TypeVar("P", bound=_Planned)


@record
class Run:
    """What every step of a run is carried out with."""

    kube: Kube
    access: AccessOptions
    carry: Carry
    ui: Callbacks
    shows: Shows

    @property
    def ground(self) -> planning.Live:
        return planning.Live(self.kube, self.carry.clock())


# Carries the step out; False: its plan has nothing to do.
Runner = Callable[[Step, Run], bool]


def _planned(run: Run, plan: Callable[[], Sequence[P]]) -> Sequence[P] | None:
    """A whole-pool write's plans, read and shown as its command shows them (a signal meanwhile:
    nothing was written); None when they have nothing to do."""
    with before_writes():
        plans = plan()
        for one in plans:
            run.shows.plan(one)
    return None if all(one.nothing_to_do for one in plans) else plans


def resume(step: Step, run: Run) -> bool:
    owner = run.carry.ignore_owner
    asked = pausing.Pause((step.pool,), step.namespace, pausing=False, ignore_owner=owner)
    plans = _planned(run, lambda: pausing.plans_for(run.ground, asked, warn=run.ui.warn))
    if plans is None:
        return False
    planning.carry_out(run.kube, plans, run.carry.dry_run, run.ui)
    return True


def scale(step: Step, run: Run) -> bool:
    request = ScaleRequest(int(step.option("--replicas")), int(step.option("--current-replicas")))
    owner = run.carry.ignore_owner
    asked = scaling.Scale((step.pool,), step.namespace, request, ignore_owner=owner)
    plans = _planned(run, lambda: scaling.plans_for(run.ground, asked, warn=run.ui.warn))
    if plans is None:
        return False
    planning.carry_out(run.kube, plans, run.carry.dry_run, run.ui)
    return True


def upgrade(step: Step, run: Run) -> bool:
    carry = run.carry
    request = UpgradeRequest(step.option("--version"))
    owner = carry.ignore_owner
    asked = upgrading.Upgrade((step.pool,), step.namespace, request, ignore_owner=owner)
    plans = _planned(run, lambda: upgrading.plans_for(run.ground, asked, ui=run.ui))
    if plans is None:
        return False
    _followed(step, run, plans)
    return True


def undo(step: Step, run: Run) -> bool:
    to = int(step.option("--to-revision")) if step.options else None
    owner = run.carry.ignore_owner
    asked = undoing.Undo((step.pool,), step.namespace, UndoRequest(to), ignore_owner=owner)
    plans = _planned(run, lambda: undoing.plans_for(run.ground, asked, ui=run.ui))
    if plans is None:
        return False
    _followed(step, run, plans)
    return True


def _followed(step: Step, run: Run, plans: Sequence[planning.PoolPlan]) -> None:
    """The writes, then the rollout they start followed as upgrade follows it."""
    carry = run.carry
    outcome = planning.carry_out(run.kube, plans, carry.dry_run, run.ui)
    if outcome is None or carry.dry_run is not DryRun.NONE:
        return
    follow = upgrading.Carry(carry.dry_run, True, carry.timeout, carry.stuck_after)
    scoped = replace(run.access, namespace=step.namespace, all_namespaces=False, selector=None)
    end, report = upgrading.follow_rollout(scoped, (step.pool,), follow, run.ui, run.shows.rollout)
    run.shows.ended(report, end)


def restart(step: Step, run: Run) -> bool:
    carry = run.carry
    owner = carry.ignore_owner
    asked = restarting.Restart((step.pool,), step.namespace, RestartRequest(), ignore_owner=owner)
    plans = _planned(run, lambda: restarting.plans_for(run.ground, asked, ui=run.ui))
    if plans is None:
        return False
    going = restarting.Carry(carry.clock, carry.dry_run, wait=True, timeout=carry.timeout)
    restarting.carry_out(run.kube, tuple(plans), asked, going, run.ui)
    return True


def delete_machine(step: Step, run: Run) -> bool:
    carry = run.carry
    asked = deleting.DeleteMachine(
        Wanted(machine=step.target),
        Mode.REPLACE,
        pool=step.option("--pool"),
        request_timeout=run.access.request_timeout,
        namespace=step.namespace,
        follow=True,
        ignore_owner=carry.ignore_owner,
    )
    with before_writes():
        plan = deleting.plan_for(run.kube, asked, warn=run.ui.warn, now=carry.clock())
        run.shows.plan(plan)
    following = deleting.Carry(carry.dry_run, True, carry.timeout)
    deleting.carry_out(run.kube, plan, asked, following, run.ui)
    return True


RUNNERS: dict[str, Runner] = {
    "rollout resume": resume,
    "scale": scale,
    "upgrade": upgrade,
    "rollout undo": undo,
    "rollout restart": restart,
    "delete-machine": delete_machine,
}
