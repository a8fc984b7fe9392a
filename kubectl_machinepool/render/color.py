"""When to colour, and the colours we use. Renderers get the decision; they never probe a tty."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TextIO

from kubectl_machinepool.base.records import record

ColorMode = Literal["auto", "always", "never"]

# The SGR codes colorama names Fore.GREEN, Fore.YELLOW, Fore.RED and Style.RESET_ALL, spelled out
# so that start-up does not load colorama (and ctypes) to print help; safetext lets exactly these
# through.
GREEN, YELLOW, RED, RESET = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[0m"


def use_color(mode: ColorMode, stream: TextIO, env: Mapping[str, str]) -> bool:
    """--color=always wins; else colour only a terminal, and never with NO_COLOR or TERM=dumb."""
    if mode == "always":
        return True
    if mode == "never" or env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@record
class Palette:
    enabled: bool

    def _paint(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.enabled and text else text

    def good(self, text: str) -> str:
        return self._paint(text, GREEN)

    def warn(self, text: str) -> str:
        return self._paint(text, YELLOW)

    def bad(self, text: str) -> str:
        return self._paint(text, RED)
