"""A followed rollout on the command line (rollout status, upgrade): kubectl's lines, each pool's
printed again only when it changed, and kubectl's exit 1 when one is stuck or time ran out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.cli.environment import Environment

if TYPE_CHECKING:
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
