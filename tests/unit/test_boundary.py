"""The shape of the house: what may import what, and the command boundary's own behaviour."""

from __future__ import annotations

import inspect
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from kubectl_machinepool.cli.commands import listing, metadata
from kubectl_machinepool.cli.environment import terminal_width
from kubectl_machinepool.cli.main import COMMANDS, cli
from kubectl_machinepool.model import propagation
from kubectl_machinepool.render.listing import LIST_FORMATS

PACKAGE = Path(__file__).resolve().parents[2] / "kubectl_machinepool"
EXAMPLE = str(PACKAGE.parent / "examples" / "azure-vmss.yaml")
NOW = "2026-11-29T15:00:00Z"


def test_formats_spelled_for_help_are_the_renderers() -> None:
    assert list(LIST_FORMATS) == listing.FORMATS
    assert (metadata.LABELS_FLAG, metadata.ANNOTATIONS_FLAG) == (
        propagation.LABELS_FLAG,
        propagation.ANNOTATIONS_FLAG,
    )


def _run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte, as after `| head -0`
    try:
        return subprocess.run(
            [sys.executable, "-m", "kubectl_machinepool", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)},
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ["describe", "-f", EXAMPLE, "--now", NOW],
        ["describe", "-f", EXAMPLE, "--now", NOW, "-o", "json"],
        ["diagnose", "-f", EXAMPLE, "--now", NOW],
        ["list", "-f", EXAMPLE, "--now", NOW],
        ["explain", "--list"],
    ],
)
def test_a_closed_pipe_ends_quietly_as_after_sigpipe(args: list[str]) -> None:
    done = _run_into_closed_pipe(*args)
    assert (done.returncode, done.stderr) == (141, "")


def test_help_into_a_closed_pipe_has_no_traceback() -> None:
    done = _run_into_closed_pipe("describe", "--help")
    assert (done.returncode, done.stderr) == (1, "")  # click's own answer to EPIPE


def _innermost(function: Callable[..., Any]) -> Callable[..., Any]:
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_takes_typed_values_not_a_bag_of_params(name: str) -> None:
    found = cli.get_command(click.Context(cli), name)
    assert found is not None
    # A group (rollout) only holds its subcommands: each of them is a command like the others.
    commands = list(found.commands.values()) if isinstance(found, click.Group) else [found]
    for command in commands:
        assert command.callback is not None
        parameters = inspect.signature(_innermost(command.callback)).parameters.values()
        assert next(p.name for p in parameters) == "env"
        assert all(p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)
        assert all(p.annotation is not p.empty for p in parameters)


@pytest.mark.parametrize(
    ("columns", "tty", "expected"),
    [
        ("", False, None),
        ("80", False, None),
        ("120", True, 120),
        ("0", True, None),
        ("x", True, None),
    ],
)
def test_width_is_a_terminal_s_columns_and_a_pipe_has_none(
    columns: str, tty: bool, expected: int | None
) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert terminal_width(Stream(), {"COLUMNS": columns} if columns else {}) == expected


def test_code_cites_only_what_the_repository_or_upstream_holds() -> None:
    """The reference notes the code was written from are not shipped: cite README or upstream."""
    root = PACKAGE.parent
    cited = [
        f"{path.relative_to(root)}:{number}"
        for path in [
            *root.joinpath("kubectl_machinepool").rglob("*.py"),
            *root.joinpath("tests").rglob("*.py"),
        ]
        if "__pycache__" not in path.parts and path.name != "test_boundary.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "§" in line or "machinepool-facts" in line or "known-issues" in line
    ]
    assert cited == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_top_level_help_line_is_the_command_s_own(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    assert command.help is not None
    assert COMMANDS[name][1] == command.help.split("\n")[0]
