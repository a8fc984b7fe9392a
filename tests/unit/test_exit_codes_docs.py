"""The exit codes as documented: docs/flags.md's table holds every code the tool has
(base/errors.ExitCode) and which commands return each; the codes only some commands return are
raised only on their paths; each write command's page links the table and names no code a write
cannot return, and each write command's --help names every one it can (but 141, a pipe's)."""

from __future__ import annotations

import re

import click
import pytest
from support.docs import ROOT, outside_fences, page, section

from kubectl_machinepool.base.errors import ExitCode
from kubectl_machinepool.cli.commands.delete import delete_machine_command
from kubectl_machinepool.cli.commands.fix import fix_command
from kubectl_machinepool.cli.commands.pausing import pause_command, resume_command
from kubectl_machinepool.cli.commands.restart import restart_command
from kubectl_machinepool.cli.commands.scale import scale_command
from kubectl_machinepool.cli.commands.undo import undo_command
from kubectl_machinepool.cli.commands.upgrade import upgrade_command

PACKAGE = ROOT / "kubectl_machinepool"
WRITES = "the write commands"
# The codes only some commands return: who, as the table says it, and the names that return
# them, each allowed only in these modules (besides base/errors.py, which defines them).
ONLY = {
    ExitCode.REFUSED: (WRITES, r"\bRefusedError\b|ExitCode\.REFUSED\b"),
    ExitCode.INCOMPLETE: (WRITES, r"\bIncompleteError\b|ExitCode\.INCOMPLETE\b"),
    ExitCode.FINDINGS: ("`diagnose`", r"ExitCode\.FINDINGS\b"),
}
# Where the write commands go and the read commands do not: what follows confirming a plan.
WRITE_PATH = {
    "cli/commands/confirming.py",
    "app/carrying.py",
    "app/restarting.py",
    "kube/writing.py",
}
RETURNED_BY = {WRITES: WRITE_PATH, "`diagnose`": {"cli/commands/diagnose.py"}}
WRITE_CODES = {code for code in ExitCode if code is not ExitCode.FINDINGS}
PAGES = [
    "upgrade",
    "scale",
    "rollout-restart",
    "rollout-pause",
    "rollout-undo",
    "delete-machine",
    "fix",
]
COMMANDS = [
    upgrade_command,
    scale_command,
    restart_command,
    undo_command,
    pause_command,
    resume_command,
    delete_machine_command,
    fix_command,
]


def documented() -> dict[int, str]:
    """Each code of docs/flags.md's table, with who returns it."""
    table = section(page("flags"), "## Exit codes")
    rows = re.findall(r"^\| (\d+) \| .+ \| ([^|]+) \|$", table, re.MULTILINE)
    return {int(code): who.strip() for code, who in rows}


def test_the_table_holds_every_exit_code_and_who_returns_it() -> None:
    expected = {code.value: ONLY.get(code, ("every command", ""))[0] for code in ExitCode}
    assert documented() == expected


@pytest.mark.parametrize("code", sorted(ONLY), ids=lambda code: code.name)
def test_a_code_some_commands_return_is_named_on_their_path_only(code: ExitCode) -> None:
    who, names = ONLY[code]
    named = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if re.search(names, path.read_text())
    }
    assert named - {"base/errors.py"} <= RETURNED_BY[who]


def _codes(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\b[0-9]{1,3}\b", text)}


@pytest.mark.parametrize("name", PAGES)
def test_each_write_page_links_the_table_and_names_only_codes_a_write_returns(name: str) -> None:
    text = outside_fences(page(name))
    assert "(flags.md#exit-codes)" in text
    spans = re.findall(r"\bexits? (?:code )?([0-9]+(?:(?:, | or |/)[0-9]+)*)", text)
    assert set().union(*map(_codes, spans)) <= WRITE_CODES


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.name)
def test_each_write_command_s_help_names_every_code_it_can_return(command: click.Command) -> None:
    """141 aside: a reader of the output that went away sees no help anyway."""
    help_text = command.help or ""
    said = help_text.partition("Exit codes:")[2].partition("\b")[0]
    assert _codes(said) == {code.value for code in WRITE_CODES} - {ExitCode.BROKEN_PIPE}


def test_the_write_path_modules_exist() -> None:
    assert all((PACKAGE / module).is_file() for module in WRITE_PATH)
