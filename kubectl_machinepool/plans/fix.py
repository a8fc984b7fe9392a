"""fix's plan: every finding whose rule's remedy is one of this tool's own writes
(diagnostics/remedies.py) made a step, the command line with its exact arguments, why, what it
writes and its risk, one step for the findings the same command line remedies.

A pool gets at most one disruptive step in a run (unless all steps are asked for): the next is
judged again once the first is done. A pool whose rollout is in progress (or cannot be judged)
gets no step that rolls it; a paused pool none but the resume of this tool's own pause. A
finding whose remedy is outside this tool is listed, never planned. Pure: the diagnosis in, a
plan out; each step is carried out later through its own command's plan and preflight.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from dataclasses import replace

from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import CapiVersion, Context, Finding, Proposal
from kubectl_machinepool.diagnostics.remedies import rollout_of
from kubectl_machinepool.diagnostics.rules import BY_CODE
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import Description, PoolDescription
from kubectl_machinepool.model.rollout import PROGRESSING, STUCK
from kubectl_machinepool.model.snapshot import Snapshot

PROGRAM = "kubectl machinepool"
RESUME = "rollout resume"


@record
class Step:
    """One command line of this tool, for the findings it remedies on one pool."""

    command: str
    namespace: str
    pool: str
    target: str
    options: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]
    why: str
    writes: str
    disruptive: bool
    rolls: bool

    @property
    def argv(self) -> tuple[str, ...]:
        """The words after `kubectl machinepool`, as the step runs them."""
        options = (word for option in self.options for word in option)
        return (*self.command.split(), self.target, "-n", self.namespace, *options)

    @property
    def line(self) -> str:
        return f"{PROGRAM} {shlex.join(self.argv)}"

    def option(self, name: str) -> str:
        return dict(self.options)[name]

    @property
    def risk(self) -> str:
        if self.rolls:
            return "disruptive: the provider replaces instances"
        return "disruptive: takes instances away" if self.disruptive else "not disruptive"


@record
class Held:
    """A finding this tool's writes remedy, not planned in this run, and why; the step it
    would be, where the finding gives one."""

    finding: Finding
    reason: str
    step: Step | None = None


@record
class FixPlan:
    steps: tuple[Step, ...]
    held: tuple[Held, ...]
    # The findings whose remedy is outside this tool.
    outside: tuple[Finding, ...]

    def find(self, argv: tuple[str, ...]) -> Step | Held | None:
        """The step with this command line, or why it is held; None: no finding asks for it."""
        for step in self.steps:
            if step.argv == argv:
                return step
        return next((h for h in self.held if h.step and h.step.argv == argv), None)


def _step(finding: Finding, proposal: Proposal, command: str) -> Step:
    return Step(
        command,
        finding.namespace,
        finding.pool,
        proposal.target,
        proposal.options,
        (finding,),
        proposal.why,
        proposal.writes,
        proposal.disruptive,
        proposal.rolls,
    )


def _withheld(step: Step, pool: PoolDescription, ctx: Context) -> str | None:
    """Why the pool's state holds the step back in any run, or None."""
    if pool.paused_by and step.command != RESUME:
        return f"the pool is paused ({pool.paused_by}): nothing reconciles it until it resumes"
    rollout = rollout_of(pool, ctx)
    if step.rolls and rollout.state in (PROGRESSING, STUCK):
        waiting = "; ".join(rollout.waiting_for)
        then = (
            "run fix again once it is done, or run the step yourself with --force where its "
            "command takes it"
            if rollout.state == STUCK
            else "run fix again once it is done"
        )
        return f"its rollout is {rollout.state} ({waiting}), and this step rolls the pool: {then}"
    return None


def _merged(steps: list[Step], step: Step) -> None:
    """The step added, or its findings joined to the step with the same command line."""
    for at, found in enumerate(steps):
        if found.argv == step.argv:
            steps[at] = replace(found, findings=(*found.findings, *step.findings))
            return
    steps.append(step)


def plan_fix(
    description: Description,
    snapshot: Snapshot,
    findings: Sequence[Finding],
    *,
    capi: CapiVersion,
    thresholds: Thresholds,
    rules: Collection[str] = (),
    all_steps: bool = False,
) -> FixPlan:
    """The findings of the rules asked for (all when none is) as steps, in diagnose's order of
    pools, each pool's steps that disrupt nothing first."""
    wanted = [f for f in findings if not rules or f.code in rules]
    pools = {
        (p.pool.namespace, p.pool.cluster, p.pool.name): (
            p,
            Context(c, snapshot, description.now, capi, thresholds),
        )
        for c in description.clusters
        for p in c.pools
    }
    steps: list[Step] = []
    held: list[Held] = []
    outside: list[Finding] = []
    for key in dict.fromkeys((f.namespace, f.cluster, f.pool) for f in wanted):
        mine = [f for f in wanted if (f.namespace, f.cluster, f.pool) == key]
        found = pools.get(key)
        pool_steps: list[Step] = []
        for finding in mine:
            remedy = BY_CODE[finding.code].remedy
            if remedy is None or found is None:
                outside.append(finding)
                continue
            proposal = remedy.propose(finding, *found)
            if isinstance(proposal, str):
                held.append(Held(finding, proposal))
                continue
            step = _step(finding, proposal, remedy.command)
            if reason := _withheld(step, *found):
                held.append(Held(finding, reason, step))
                continue
            _merged(pool_steps, step)
        pool_steps.sort(key=lambda s: (s.command != RESUME, s.disruptive))
        disruptive = [s for s in pool_steps if s.disruptive]
        for extra in disruptive[1:] if not all_steps else ():
            pool_steps.remove(extra)
            reason = "one disruptive step per pool in a run: run fix again after it, or --all-steps"
            held += [Held(f, reason, extra) for f in extra.findings]
        steps += pool_steps
    return FixPlan(tuple(steps), tuple(held), tuple(outside))
