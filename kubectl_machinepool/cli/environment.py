"""The process around a command: streams, environment, clock, terminal. Built once in cli.main.

Every question about the outside world (is stdout a terminal, how wide, may we colour, what time
is it) is answered here, so commands and renderers get decisions, not streams to probe.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple, TextIO

import click

from kubectl_machinepool.base.errors import ExitCode, Interrupted
from kubectl_machinepool.base.safetext import scrub

if TYPE_CHECKING:
    from kubectl_machinepool.render.color import ColorMode


def _discard(stream: TextIO) -> None:
    """The reader went away (`describe | head`): what is still buffered goes nowhere, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def _tty(stream: TextIO | None) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def terminal_width(stream: TextIO, env: Mapping[str, str]) -> int | None:
    """A terminal's width: COLUMNS when exported, else what the terminal says. Piped or
    redirected output has no width (None), whatever COLUMNS says: it is read by programs."""
    if not _tty(stream):
        return None
    given = env.get("COLUMNS", "")
    if given.isascii() and given.isdigit() and 0 < int(given) < 10_000:
        return int(given)
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return None


def help_width(stream: TextIO, env: Mapping[str, str]) -> int:
    """click's help width (its terminal's, at most 100, less 2, at least 50), worked out here so
    that --help does not import shutil: COLUMNS counts even when piped, as shutil's size does."""
    given = env.get("COLUMNS", "")
    columns = int(given) if given.isascii() and given.isdigit() and int(given) > 0 else None
    if columns is None:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = 80
    return max(min(columns, 100) - 2, 50)


class Environment(NamedTuple):
    # A NamedTuple, not a dataclass: as frozen, and --help need not import dataclasses for it.
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    env: Mapping[str, str]
    stdin_tty: bool
    stdout_tty: bool
    # Display columns of stdout; None when output goes to a pipe or file.
    width: int | None
    utf8: bool
    clock: Callable[[], datetime] = _now
    # What the run read, referenced until the process ends: the console script exits without
    # freeing it (cli._end_process). None: nothing kept (in-process callers).
    kept: list[object] | None = None
    stderr_tty: bool = False

    @classmethod
    def from_process(cls) -> Environment:
        stdout = sys.stdout
        env = dict(os.environ)
        return cls(
            stdin=sys.stdin,
            stdout=stdout,
            stderr=sys.stderr,
            env=env,
            stdin_tty=_tty(sys.stdin),
            stdout_tty=_tty(stdout),
            width=terminal_width(stdout, env),
            utf8="utf" in (getattr(stdout, "encoding", "") or "").lower(),
            kept=[],
            stderr_tty=_tty(sys.stderr),
        )

    def now(self) -> datetime:
        return self.clock()

    def keep(self, value: object) -> None:
        """Free value with the process, not before: freeing a large pool's parsed objects one
        by one took 0.28 s of a 4 s describe, for a process about to end."""
        if self.kept is not None:
            self.kept.append(value)

    def color(self, mode: ColorMode) -> bool:
        from kubectl_machinepool.render.color import use_color

        return use_color(mode, self.stdout, self.env)

    def out(self, text: str, *, nl: bool = True, color: bool | None = None) -> None:
        """Every line of text output: nothing from a cluster reaches the terminal as a control."""
        self._write(text, self.stdout, nl, color)

    def write(self, text: str) -> None:
        """A piece of output, as it comes (no newline added)."""
        self._write(text, self.stdout, False, None)

    def clear(self) -> None:
        """A terminal's screen emptied, cursor home: a followed view redrawn in place."""
        self._write("", self.stdout, False, None)
        try:
            self.stdout.write("\x1b[H\x1b[2J")  # our own constant, not text from a cluster
            self.stdout.flush()
        except BrokenPipeError:
            _discard(self.stdout)
            raise Interrupted(ExitCode.BROKEN_PIPE) from None

    def err(self, text: str) -> None:
        self._write(text, self.stderr, True, None)

    @staticmethod
    def _write(text: str, stream: TextIO, nl: bool, color: bool | None) -> None:
        try:
            click.echo(scrub(text), file=stream, nl=nl, color=color)
        except BrokenPipeError:
            _discard(stream)
            raise Interrupted(ExitCode.BROKEN_PIPE) from None

    def progress(self, text: str) -> None:
        """A terminal's progress line, each one in place of the last; "" clears it."""
        line = f"{text}..." if text else ""
        try:
            # Our own constants before the line, which scrub() escapes like any other text.
            self.stderr.write(f"\r\x1b[K{scrub(line)}")
            self.stderr.flush()
        except (BrokenPipeError, ValueError):
            pass  # progress is a courtesy: a closed terminal does not stop the work

    def warn(self, message: str) -> None:
        self.err(f"warning: {message}")
