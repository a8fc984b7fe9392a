from __future__ import annotations

import io

import pytest

from kubectl_machinepool.render.color import Palette, use_color


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("mode", "tty", "env", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {}, False),
    ],
)
def test_colour_decision(mode: str, tty: bool, env: dict[str, str], expected: bool) -> None:
    stream = Tty() if tty else io.StringIO()
    assert use_color(mode, stream, env) is expected  # type: ignore[arg-type]


def test_palette_paints_only_when_enabled() -> None:
    assert Palette(False).bad("x") == "x"
    assert Palette(True).bad("x") != "x"
    assert Palette(True).good("") == ""


def test_spelled_out_codes_are_colorama_s() -> None:
    from colorama import Fore, Style

    from kubectl_machinepool.render.color import GREEN, RED, RESET, YELLOW

    assert (GREEN, YELLOW, RED, RESET) == (Fore.GREEN, Fore.YELLOW, Fore.RED, Style.RESET_ALL)
