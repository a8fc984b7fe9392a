"""The parts every write plan shows the same way: its checks, labelled ok, warning or refused,
and its writes in order, wrapped at the terminal's width (delete-machine, upgrade)."""

from __future__ import annotations

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.writes import Write
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.wrap import line_width, wrap

# Without a width (piped output) a plan wraps here.
WIDTH = 100
WRITES = "Writes, in order (each with uid/resourceVersion preconditions):"


def wrapped(text: str, first: str, rest: str, width: int | None) -> list[str]:
    # The indent may hold colour codes: wrap counts only the columns they show.
    lines = wrap(escape(text), line_width(width, WIDTH), first, rest, break_long_words=True)
    return lines or [first.rstrip()]


def _label(level: Level, palette: Palette) -> str:
    word = {Level.OK: "ok", Level.WARNING: "warning", Level.REFUSED: "refused"}[level]
    paint = {Level.OK: palette.good, Level.WARNING: palette.warn, Level.REFUSED: palette.bad}
    return paint[level](word) + " " * (8 - len(word))


def check_lines(checks: tuple[Check, ...], palette: Palette, width: int | None) -> list[str]:
    lines = ["Checks:"]
    for check in checks:
        lines += wrapped(check.message, f"  {_label(check.level, palette)} ", " " * 11, width)
    return lines


def write_lines(writes: tuple[Write, ...], width: int | None) -> list[str]:
    lines = [WRITES] if width is None else wrapped(WRITES, "", "  ", width)
    if not writes:
        lines.append("  none")
    for number, write in enumerate(writes, 1):
        lines += wrapped(write.summary, f"  {number}. ", "     ", width)
    return lines
