"""fix as a library: diagnose the pools, plan the steps (plans/fix.py), and carry them out one
by one through their own commands (app/fixsteps.py), the step's pool diagnosed again before
each step after the first: a step whose finding is gone, or that the pool's state now holds
back, is skipped. The first step that fails ends the run, with what was and was not done. No
click, no printing: output goes through callbacks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from enum import Enum
from functools import partial
from typing import TextIO

from kubectl_machinepool.app import reading
from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.app.fixsteps import RUNNERS, Carry, Run, Shows
from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.errors import Interrupted, MachinePoolError
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.interrupts import exit_code, signal_name, stopped_by
from kubectl_machinepool.plans.fix import FixPlan, Held, Step, plan_fix


@record
class Fix:
    """What the user asked for: which pools (all in scope when none), which rules' findings
    (all when none), every step or one disruptive step per pool, judged by which window."""

    names: tuple[str, ...] = ()
    rules: frozenset[str] = frozenset()
    all_steps: bool = False
    stuck_after: timedelta = timedelta(minutes=10)


class State(Enum):
    DONE = "done"
    DRY_RUN = "dry run"  # listed (client), or sent with dryRun=All (server): none kept
    NOTHING = "nothing to do"
    DECLINED = "declined"
    SKIPPED = "skipped"
    FAILED = "failed"
    STOPPED = "stopped"  # by a signal
    NOT_RUN = "not run"


@record
class Result:
    step: Step
    state: State
    detail: str = ""


@record(slots=False)
class Ran:
    results: tuple[Result, ...]
    # The failure that ended the run, told with what was and was not done.
    failure: MachinePoolError | None = None


def _rules(rules: RuleOptions, asked: Fix) -> RuleOptions:
    """The rules judge a rollout by the window fix was given."""
    return replace(rules, thresholds=replace(rules.thresholds, rollout=asked.stuck_after))


def judged(loaded: reading.Loaded, rules: RuleOptions, asked: Fix) -> FixPlan:
    """The loaded pools diagnosed, and their findings planned."""
    rules = _rules(rules, asked)
    capi, findings, _ = reading.judged(loaded, rules)
    return plan_fix(
        loaded.description,
        loaded.snapshot,
        findings,
        capi=capi,
        thresholds=rules.thresholds,
        rules=asked.rules,
        all_steps=asked.all_steps,
    )


def planned(
    access: AccessOptions,
    source: Source,
    asked: Fix,
    rules: RuleOptions,
    *,
    now: datetime,
    stdin: TextIO | None,
) -> tuple[reading.Loaded, FixPlan]:
    """The pools asked for, read live or from a dump, and the plan made of their findings."""
    loaded = reading.load_description(
        access, source, PoolScope(asked.names), now, stdin, report_extras=False
    )
    return loaded, judged(loaded, rules, asked)


def _still(
    access: AccessOptions, step: Step, asked: Fix, rules: RuleOptions, now: datetime
) -> str | None:
    """Why the step is skipped now, from its pool diagnosed again; None: it is still needed."""
    scoped = replace(access, namespace=step.namespace, all_namespaces=False, selector=None)
    loaded = reading.load_description(
        scoped, Source(), PoolScope((step.pool,)), now, None, report_extras=False
    )
    found = judged(loaded, rules, replace(asked, all_steps=True)).find(step.argv)
    if isinstance(found, Held):
        return f"held back now: {found.reason}"
    return None if found else "its finding is gone (or now asks for another step)"


def _summary(results: list[Result], plan: FixPlan) -> str:
    """Each step's number by what became of it, the steps not reached included."""
    by: dict[State, list[str]] = {}
    for result in results:
        by.setdefault(result.state, []).append(str(plan.steps.index(result.step) + 1))
    return "; ".join(f"{state.value}: step {', '.join(n)}" for state, n in by.items())


def carry_out(
    access: AccessOptions,
    plan: FixPlan,
    asked: Fix,
    rules: RuleOptions,
    *,
    carry: Carry,
    ui: Callbacks,
    shows: Shows,
    announce: Callable[[int, Step], None],
) -> Ran:
    """Each step in order; the first that fails ends the run (Ran.failure), a signal ends it
    with what was done said."""
    results: list[Result] = []
    total = len(plan.steps)
    with Kube.connect(access) as kube:
        for number, step in enumerate(plan.steps, 1):
            answers: list[bool] = []
            asking = replace(ui, confirm=partial(_answered, ui.confirm, answers))
            started = False
            try:
                if number > 1 and carry.dry_run is DryRun.NONE:
                    skipped = _still(access, step, asked, rules, carry.clock())
                    if skipped:
                        results.append(Result(step, State.SKIPPED, skipped))
                        continue
                announce(number, step)
                started = True
                ran = RUNNERS[step.command](step, Run(kube, access, carry, asking, shows))
            except MachinePoolError as err:
                results.append(Result(step, State.FAILED, err.message))
                results += [Result(s, State.NOT_RUN) for s in plan.steps[number:]]
                told = f"{err.message} (fix step {number} of {total}: {step.line}; " + (
                    f"{_summary(results, plan)})"
                )
                return Ran(tuple(results), err.restated(told))
            except Interrupted as stopped:
                left = [Result(s, State.NOT_RUN) for s in plan.steps[number:]]
                done = _summary([*results, Result(step, State.STOPPED), *left], plan)
                raise Interrupted(stopped.exit_code, f"{stopped.report}; fix: {done}") from None
            except KeyboardInterrupt as err:
                # Its command has said what it left (a write made, a deletion going on).
                signum = stopped_by(err)
                now = Result(step, State.STOPPED if started else State.NOT_RUN)
                left = [Result(s, State.NOT_RUN) for s in plan.steps[number:]]
                done = _summary([*results, now, *left], plan)
                said = f"{signal_name(signum)} during fix step {number} of {total}; {done}"
                raise Interrupted(exit_code(signum), said) from None
            results.append(Result(step, _state(ran, answers, carry.dry_run)))
    return Ran(tuple(results))


def _answered(confirm: Callable[[], bool], answers: list[bool]) -> bool:
    """The step's question asked, its answer kept."""
    answers.append(confirm())
    return answers[-1]


def _state(ran: bool, answers: list[bool], dry_run: DryRun) -> State:
    if not ran:
        return State.NOTHING
    if answers and not answers[-1]:
        return State.DECLINED
    return State.DONE if dry_run is DryRun.NONE else State.DRY_RUN
