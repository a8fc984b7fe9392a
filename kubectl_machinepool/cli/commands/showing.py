"""The read commands' common run: the pools read and described with what could not be read
warned, and a followed view (-w) shown again on each change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kubectl_machinepool.app.options import PoolScope, Source
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions

if TYPE_CHECKING:
    from kubectl_machinepool.app.reading import Loaded
    from kubectl_machinepool.model.changes import Change


def described(
    env: Environment,
    access: AccessOptions,
    source: Source,
    pools: PoolScope,
    *,
    report_extras: bool,
    judged: bool = False,
    prepare: Callable[[], None] | None = None,
) -> Loaded:
    """The read commands' common start: the pools described, what could not be read warned.
    judged: the exit code is a verdict on the pools (reading.load_description). prepare:
    imports what the command goes on with, called while the reads run."""
    from kubectl_machinepool.app import reading

    now = source.now or env.now()
    loaded = reading.load_description(
        access,
        source,
        pools,
        now,
        env.stdin,
        report_extras=report_extras,
        judged=judged,
        prepare=prepare,
    )
    env.keep(loaded)
    for note in loaded.notes:
        env.warn(note)
    return loaded


def shown_again(
    env: Environment,
    text: str,
    changes: Sequence[Change],
    *,
    first: bool,
    color: bool,
) -> None:
    """A followed view once more: on a terminal in place of the last one, under a line saying
    what changed; piped, after a line saying so (the first view as it is)."""
    from kubectl_machinepool.base.timeutil import format_time
    from kubectl_machinepool.render.changes import summary

    what = "watching for changes, Ctrl-C ends" if first else summary(changes)
    if env.stdout_tty:
        env.clear()
        env.out(f"{format_time(env.now())}  {what}")
    elif not first:
        env.out(f"--- {format_time(env.now())}: {what}")
    env.out(text, nl=False, color=color)


def follow_described(
    env: Environment,
    access: AccessOptions,
    pools: PoolScope,
    drawn: Callable[[Loaded], str],
    *,
    color: bool,
    report_extras: bool,
    appended: bool = False,
) -> None:
    """describe -w and diagnose -w: each view drawn and shown again on each change; a note
    (what could not be read) is warned when it first appears. appended (events -w): what is
    drawn is only what is new, printed as it is, and the namespace's Events are watched too."""
    from kubectl_machinepool.app import reading

    warned: set[str] = set()
    first = [True]

    def show(loaded: Loaded, changes: Sequence[Change]) -> None:
        for note in loaded.notes:
            if note not in warned:
                warned.add(note)
                env.warn(note)
        text = drawn(loaded)
        if appended:
            env.out(text, nl=False)
        else:
            shown_again(env, text, changes, first=first[0], color=color)
        first[0] = False

    reading.follow_description(
        access,
        pools,
        report_extras=report_extras,
        show=show,
        warn=env.warn,
        clock=env.now,
        events=appended,
    )
