"""A followed rollout on the command line (rollout status, upgrade, rollout undo): kubectl's lines,
each pool's printed again only when it changed, and kubectl's exit 1 when one is stuck or time
ran out; a write that starts a rollout, carried out and then followed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.cli.commands import confirming, poolwrites
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.render.color import ColorMode

if TYPE_CHECKING:
    from kubectl_machinepool.app.carrying import Callbacks
    from kubectl_machinepool.app.planning import Ground
    from kubectl_machinepool.app.rolloutstatus import End
    from kubectl_machinepool.diagnostics.rollouts import Report


def follow_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--timeout and --stuck-after, as kubectl rollout status's --timeout."""
    command = click.option(
        "--stuck-after",
        default="10m",
        show_default=True,
        metavar="DURATION",
        help="A rollout that has not moved for this long is stuck (exit 1)",
    )(command)
    return click.option(
        "--timeout",
        default="0",
        metavar="DURATION",
        help="How long to wait before giving up (exit 1); 0 waits forever",
    )(command)


def write_follow_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--wait/--no-wait beside follow_options: a write that follows the rollout it starts
    (write_and_follow)."""
    return click.option(
        "--wait/--no-wait",
        default=True,
        show_default=True,
        help="Follow the rollout the writes start, as rollout status does",
    )(follow_options(command))


class RolloutFailed(MachinePoolError):
    """Stuck, or --timeout passed: kubectl rollout status's exit 1."""


class Shown:
    """Called with each report: its notes warned once, the whole picture once (text), then a
    line per pool whenever that pool's line changes."""

    def __init__(self, env: Environment, *, text: bool) -> None:
        self._env, self._text = env, text
        self._lines: dict[tuple[str, str], str] = {}
        self._warned: set[str] = set()

    def __call__(self, report: Report) -> None:
        from kubectl_machinepool.render import rollout as render

        for note in report.notes:
            if note not in self._warned:  # followed: each once, not on every read
                self._warned.add(note)
                self._env.warn(note)
        if not self._text:
            return  # one document, at the end
        if not self._lines:
            self._env.out(render.block(report, self._env.width))
        for rollout in report.rollouts:
            line = render.progress(rollout)
            if self._lines.get((rollout.namespace, rollout.name)) != line:
                self._lines[(rollout.namespace, rollout.name)] = line
                self._env.out(line)


def fail(report: Report, end: End) -> None:
    """kubectl rollout status's exit 1: nothing to follow, stuck, or the timeout passed."""
    from kubectl_machinepool.app.rolloutstatus import End
    from kubectl_machinepool.render import rollout as render

    if not report.rollouts:
        raise MachinePoolError("no MachinePool matched", hint="check the names, -n and --cluster")
    if end is End.STUCK:
        raise RolloutFailed("; ".join(render.stuck(r, report) for r in report.stuck))
    if end is End.TIMED_OUT:
        raise RolloutFailed(
            "timed out waiting for the condition",
            hint="raise --timeout, or see `kubectl machinepool diagnose` for what holds it",
        )


@dataclass(frozen=True)
class WriteFlags:
    """The flags of a write that starts a rollout: -f, --dry-run, --yes, --wait, --timeout,
    --stuck-after and --color."""

    source: Source
    dry_run: str
    yes: bool
    wait: bool
    timeout: str
    stuck_after: str
    color: ColorMode


def write_and_follow(
    env: Environment,
    access: AccessOptions,
    command: str,
    flags: WriteFlags,
    *,
    names: tuple[str, ...],
    plan: Callable[[Ground, str | None, Callbacks], Sequence[Any]],
    render: Callable[..., str],
    nothing: str,
) -> None:
    """A write that starts a rollout (upgrade, rollout undo): its plans shown, confirmed unless
    --yes and carried out by the write engine, then followed as rollout status follows it."""
    from kubectl_machinepool.app import planning, upgrading
    from kubectl_machinepool.app.carrying import DryRun

    follow_for = parse_duration(flags.timeout, "--timeout")
    if follow_for is not None and not flags.wait:
        raise UsageError(
            "--timeout bounds following the rollout, which --no-wait does not do",
            hint="drop --timeout, or --no-wait",
        )
    window = timedelta(seconds=parse_duration(flags.stuck_after, "--stuck-after") or 0)
    ui = confirming.callbacks(env, flags.yes)
    carry = upgrading.Carry(DryRun(flags.dry_run), flags.wait, follow_for, window)
    outcome = poolwrites.plan_and_carry(
        env,
        access,
        command,
        source=flags.source,
        dry_run=flags.dry_run,
        plan=lambda ground, ns: plan(ground, ns, ui),
        render=render,
        painted=env.color(flags.color),
        nothing=nothing,
        carry=lambda kube, plans: planning.carry_out(kube, plans, carry.dry_run, ui),
        preview=planning.preview,
    )
    if outcome is None or carry.dry_run is not DryRun.NONE or not flags.wait:
        return
    end, report = upgrading.follow_rollout(access, names, carry, ui, Shown(env, text=True))
    fail(report, end)
