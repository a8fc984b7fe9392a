"""`kubectl machinepool fix`."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, confirming, flags, poolnames
from kubectl_machinepool.cli.environment import Environment, terminal_width
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.render.color import ColorMode

if TYPE_CHECKING:
    from kubectl_machinepool.app.carrying import Callbacks
    from kubectl_machinepool.app.fixing import Fix, Ran
    from kubectl_machinepool.app.fixsteps import Carry
    from kubectl_machinepool.app.options import RuleOptions
    from kubectl_machinepool.app.reading import Loaded
    from kubectl_machinepool.plans.fix import FixPlan, Step


def _codes(values: tuple[str, ...]) -> frozenset[str]:
    """--rule's codes (MP1301) and rules (R13, each of its codes), every one with a remedy this
    tool's writes make."""
    from kubectl_machinepool.diagnostics.rules import RULES

    codes: set[str] = set()
    for value in values:
        wanted = value.strip().upper()
        matched = [r for r in RULES if wanted and wanted in (r.code, r.rule.upper())]
        if not matched:
            raise UsageError(
                f"no rule {value!r} for --rule", hint="kubectl machinepool explain --list"
            )
        fixable = [r.code for r in matched if r.remedy]
        if not fixable:
            raise UsageError(
                f"--rule {value}: its remedy is outside this tool, fix never plans it",
                hint=f"kubectl machinepool explain {matched[0].code} says what to do",
            )
        codes.update(fixable)
    return frozenset(codes)


@click.command("fix", context_settings=CONTEXT_SETTINGS)
@poolnames.argument(required=False)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    metavar="RULE",
    shell_complete=suggest.fixable_rule_codes,
    help="Plan only the findings of this rule (MP1301, or R13 for its codes); repeatable",
)
@click.option(
    "--all-steps", is_flag=True, help="Plan every disruptive step of a pool, not only the first"
)
@confirming.write_options
@click.option(
    "--timeout",
    default="30m",
    show_default=True,
    metavar="DURATION",
    help="How long a step follows what it started (a rollout, a deletion, a restart); 0: no limit",
)
@click.option(
    "--stuck-after",
    default="10m",
    show_default=True,
    metavar="DURATION",
    help="A rollout that has not moved for this long is stuck (MP1102, and a followed upgrade)",
)
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Choice(["table", "json", "yaml"]),
    default="table",
    show_default=True,
    help="The plan (and what became of each step) as text, or as one JSON or YAML document",
)
@flags.source
@flags.color
@flags.access
@flags.pass_env
def fix_command(
    env: Environment,
    *,
    names: tuple[str, ...],
    rules: tuple[str, ...],
    all_steps: bool,
    dry_run: str,
    yes: bool,
    timeout: str,
    stuck_after: str,
    output: str,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
    ignore_owner: bool = False,
) -> None:
    """Remedy diagnose's findings with this tool's own writes, step by step, or say why not.

    \b
    The pools (NAME..., else every pool of -n or -A) are diagnosed, and each finding whose rule
    names one of this tool's writes as its remedy (explain shows it) becomes a step: the exact
    command line, the findings it remedies, why, what it writes, and its risk. A forgotten
    `rollout pause` is resumed, a version/image split upgraded to a pair, a surge instance that
    holds a stuck rollout (its cause read) deleted, a size outside the autoscaler's bounds
    scaled into them, old instances nothing rolls restarted, an upgrade past the control plane
    undone where its revision is recorded. A pool gets at most one disruptive
    step a run (--all-steps: every one); a pool whose rollout is in progress none that rolls
    it. Findings whose remedy is outside this tool (the cloud, quotas, IAM) are listed, never
    planned.
    \b
    Each step runs as its command runs: its own plan and preflight, read afresh and shown, then
    "Go ahead?" (--yes answers it), the write engine, and what the command follows (--timeout).
    Before each step after the first, its pool is diagnosed again: a step whose finding is gone
    is skipped. The first step that fails ends the run, saying what was and was not done.
    With -f DUMP the plan is printed and nothing else is done.
    \b
    Exit codes: 0 done (or nothing to do, or a step declined), 1 an error (as the failing step's
    command says), 2 usage, 3 refused (by the failing step's plan; nothing written by it),
    5 left changed or unknown (named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool fix -n capi-prod
      kubectl machinepool fix vmss-workers -n capi-prod --rule MP1102 --yes
      kubectl machinepool fix -A --dry-run=server
      kubectl machinepool fix -A -f export/ -o json
    """
    from kubectl_machinepool.app import fixing
    from kubectl_machinepool.app.userconfig import rule_options

    asked = fixing.Fix(
        names,
        _codes(rules),
        all_steps,
        stuck_after=_window(stuck_after),
    )
    follow_for = parse_duration(timeout, "--timeout")
    judged = rule_options(env.env, ignore=(), graces={}, capi_version=None)
    if source.filenames:
        if dry_run == "server":
            raise UsageError(
                "--dry-run=server sends each write to a cluster; -f reads a dump",
                hint="drop --dry-run=server: from a dump fix prints its plan",
            )
        loaded, plan = fixing.planned(
            access, source, asked, judged, now=source.now or env.now(), stdin=env.stdin
        )
        _show_plan(env, loaded, plan, output, color, dump=source.filenames)
        return
    if source.now is not None:
        raise UsageError("--now reads a dump as at a time: it needs -f", hint="drop --now")
    from kubectl_machinepool.kube.interrupts import before_writes

    with before_writes():
        loaded, plan = fixing.planned(access, source, asked, judged, now=env.now(), stdin=None)
    _show_plan(env, loaded, plan, output, color, dump=())
    if not plan.steps:
        return
    from kubectl_machinepool.app.carrying import DryRun
    from kubectl_machinepool.app.fixsteps import Carry

    carry = Carry(env.now, DryRun(dry_run), follow_for, asked.stuck_after, ignore_owner)
    steps_env = _steps_env(env, output)
    ui = confirming.callbacks(steps_env, yes)
    ran = _carry(steps_env, asked, plan, access, judged, carry=carry, ui=ui, color=color)
    _show_outcomes(env, loaded, plan, ran, output)
    if ran.failure is not None:
        raise ran.failure


def _window(stuck_after: str) -> timedelta:
    return timedelta(seconds=parse_duration(stuck_after, "--stuck-after") or 0)


def _source_of(loaded: Loaded, dump: tuple[str, ...]) -> str:
    return " ".join(dump) if dump else f"the cluster of {loaded.namespace or 'every namespace'}"


def _show_plan(
    env: Environment,
    loaded: Loaded,
    plan: FixPlan,
    output: str,
    color: ColorMode,
    *,
    dump: tuple[str, ...],
) -> None:
    """Text: the plan, with where it was made from when that is a dump. A document: from a
    dump, or with no step, now (nothing follows it); else once the steps ran."""
    from kubectl_machinepool.app.reading import check_found
    from kubectl_machinepool.base.timeutil import format_time
    from kubectl_machinepool.render.color import Palette
    from kubectl_machinepool.render.fixplan import plan_document, render_plan

    at = format_time(loaded.description.now) or ""
    if output != "table":
        if dump or not plan.steps:
            from kubectl_machinepool.render.structured import write_document

            document = plan_document(plan, now=at, source=_source_of(loaded, dump))
            write_document(document, output, env.write)
    else:
        if dump:
            env.out(f"Planned from {' '.join(dump)} as at {at}: a plan only, nothing is written.")
        painted = env.color(color)
        env.out(render_plan(plan, Palette(painted), width=env.width), nl=False, color=painted)
    if message := check_found(loaded):
        env.err(message)
    if not plan.steps:
        env.err("Nothing to do: no finding that this tool's writes remedy is planned.")


def _steps_env(env: Environment, output: str) -> Environment:
    """Where the steps print: standard output, or with -o json|yaml standard error (standard
    output keeps the one document)."""
    if output == "table":
        return env
    width = terminal_width(env.stderr, env.env)
    return env._replace(stdout=env.stderr, stdout_tty=env.stderr_tty, width=width)


def _carry(
    env: Environment,
    asked: Fix,
    plan: FixPlan,
    access: AccessOptions,
    judged: RuleOptions,
    *,
    carry: Carry,
    ui: Callbacks,
    color: ColorMode,
) -> Ran:
    """The steps carried out, each with its own plan drawn as its command draws it."""
    from kubectl_machinepool.app import fixing
    from kubectl_machinepool.app.fixsteps import Shows
    from kubectl_machinepool.cli.commands.rollingout import Shown, fail
    from kubectl_machinepool.render.color import Palette
    from kubectl_machinepool.render.fixplan import own_plan, step_heading

    painted = env.color(color)
    palette = Palette(painted)

    def announce(number: int, step: Step) -> None:
        env.out("")
        env.out(step_heading(number, len(plan.steps), step, width=env.width), nl=False)

    shows = Shows(
        plan=lambda own: env.out(own_plan(own, palette, width=env.width), nl=False, color=painted),
        rollout=Shown(env, text=True),
        ended=fail,
    )
    return fixing.carry_out(
        access, plan, asked, judged, carry=carry, ui=ui, shows=shows, announce=announce
    )


def _show_outcomes(env: Environment, loaded: Loaded, plan: FixPlan, ran: Ran, output: str) -> None:
    from kubectl_machinepool.base.timeutil import format_time
    from kubectl_machinepool.render.fixplan import Outcome, plan_document, render_outcomes

    outcomes = [Outcome(r.state.value, r.detail) for r in ran.results]
    outcomes += [Outcome("not run")] * (len(plan.steps) - len(outcomes))
    if output == "table":
        env.out("")
        env.out(render_outcomes(plan, outcomes, width=env.width), nl=False)
        return
    from kubectl_machinepool.render.structured import write_document

    at = format_time(loaded.description.now) or ""
    document = plan_document(plan, now=at, source=_source_of(loaded, ()), outcomes=outcomes)
    write_document(document, output, env.write)
