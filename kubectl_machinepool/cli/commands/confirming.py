"""The flags and the question every write command shares: --dry-run, --yes, --ignore-owner, "Go
ahead?", the callbacks that carry a plan's output and that question to the app layer, and what -f
allows."""

from __future__ import annotations

import select
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TextIO

import click

from kubectl_machinepool.base.errors import Interrupted, RefusedError, UsageError
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.interrupts import exit_code, stopped_by

if TYPE_CHECKING:
    from kubectl_machinepool.app.carrying import Callbacks
    from kubectl_machinepool.app.options import Source


def write_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--dry-run=none|client|server and -y/--yes, as kubectl spells them, and --ignore-owner."""
    command = click.option(
        "--ignore-owner",
        is_flag=True,
        help="Write fields a GitOps owner (Argo CD, Flux) applies and may revert; the plan keeps "
        "the warning",
    )(command)
    command = click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation")(command)
    return click.option(
        "--dry-run",
        type=click.Choice(["none", "client", "server"]),
        default="none",
        show_default=True,
        help="client: only show the plan; server: send every write with dryRun=All",
    )(command)


def from_dump(command: str, source: Source, dry_run: str) -> bool:
    """Whether the plan is made from a dump (-f): planned from, never written to, so only a
    client dry run takes one; --now is the time a dump is read at, and nothing else's."""
    if not source.filenames:
        if source.now is not None:
            raise UsageError("--now reads a dump as at a time: it needs -f", hint="drop --now")
        return False
    if dry_run == "server":
        # A usage error, as in fix: no cluster can dry-run a write to a file.
        raise UsageError(
            "--dry-run=server sends each write to a cluster; -f reads a dump",
            hint="use --dry-run=client to see the plan made from the dump",
        )
    if dry_run != "client":
        raise RefusedError(
            f"{command} changes a live cluster and cannot act on a dump (-f)",
            hint="add --dry-run=client to see the plan it would make from the dump, or drop -f",
        )
    return True


def confirmed(assume_yes: bool, env: Environment) -> bool:
    """Asked once the plan is shown: --yes, or yes on the terminal; no terminal is a refusal."""
    if assume_yes:
        return True
    if not env.stdin_tty:
        raise RefusedError(
            "not confirmed, and there is no terminal to ask on: nothing was written",
            hint="review the plan, then run again with --yes",
        )
    try:
        return _ask("Go ahead?", env.stdin)
    except (KeyboardInterrupt, EOFError) as err:  # a stopping signal, or end of input
        signum = stopped_by(err)
        raise Interrupted(exit_code(signum), "Cancelled: nothing was written.") from None


def _ask(question: str, stdin: TextIO) -> bool:
    """click.confirm's question and answers (no unless said), the answer awaited in slices:
    a signal that lands between the question and the read (SIGTERM from a supervisor at any
    moment) is handled within SLICE, where a read already waiting would go on waiting."""
    from kubectl_machinepool.kube.interruptible import SLICE

    while True:
        click.echo(f"{question} [y/N]: ", nl=False, err=True)
        # A stream select cannot wait on (no file; Windows): read at once.
        with suppress(OSError, ValueError):
            while not select.select([stdin.fileno()], [], [], SLICE)[0]:
                pass
        line = stdin.readline()
        if not line:
            raise EOFError
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("", "n", "no"):
            return False
        click.echo("Error: invalid input", err=True)


def callbacks(env: Environment, assume_yes: bool) -> Callbacks:
    """Results to standard output, progress and warnings to standard error, the question asked
    once (or answered by --yes)."""
    # Here, not at the top: completion imports the command modules, and a TAB must stay fast.
    from kubectl_machinepool.app.carrying import Callbacks

    return Callbacks(
        report=env.out,
        inform=env.err,
        warn=env.warn,
        confirm=lambda: confirmed(assume_yes, env),
    )
