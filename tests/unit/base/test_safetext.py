"""Text from a cluster reaches the terminal with its control characters shown, not obeyed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_machinepool.base.safetext import escape, scrub, uncoloured

HOSTILE = [
    "\x1b]0;owned\x07",  # OSC: window title
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: clipboard
    "\x1b[2J\x1b[3J",  # clear screen and scrollback
    "\x9b2J",  # 8-bit CSI
    "a\rb",  # carriage return overwrites the line
    "\x08\x7f\x00",
    "\u202eevil",  # right-to-left override
    "\ud800",  # a lone surrogate cannot even be encoded
    "\U000e0041",  # invisible tag character
]
RAW = set("\x1b\x9b\r\x08\x7f\x00\u202e\ud800\U000e0041\x07")


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_shows_every_control(text: str) -> None:
    shown = escape(text)
    assert not RAW & set(shown)
    assert shown.isprintable()


def test_escape_keeps_ordinary_text_and_folds_whitespace() -> None:
    assert escape("vmss-workers-0 ✓ Ünïcode") == "vmss-workers-0 ✓ Ünïcode"
    assert escape("line one\nline\ttwo") == "line one line two"


def test_scrub_keeps_newlines_and_only_this_tools_colours() -> None:
    out = scrub("\x1b[32mRunning\x1b[0m \x1b]0;t\x07\nnext \x1b[1;31mX\n")
    assert out == "\x1b[32mRunning\x1b[0m \\x1b]0;t\\x07\nnext \\x1b[1;31mX\n"


def test_uncoloured_shows_even_this_tools_colour_codes() -> None:
    assert uncoloured('error: "asg-\x1b[31mworkers" not found\n') == (
        'error: "asg-\\x1b[31mworkers" not found\n'
    )
    assert uncoloured("plain") == "plain"


def test_a_typed_name_with_a_colour_code_is_shown_in_the_error_not_dropped() -> None:
    """It was dropped: the error named "asg-workers" not found and hinted asg-workers."""
    examples = Path(__file__).parents[3] / "examples"
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", "describe", "asg-\x1b[31mworkers", "-f",
         str(examples), "--now", "2026-11-29T15:00:00Z"],
        capture_output=True, check=False, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert 'error: machinepools.cluster.x-k8s.io "asg-\\x1b[31mworkers" not found' in done.stderr
    assert "\x1b" not in done.stderr


def _hostile_dump(tmp_path: Path) -> Path:
    """The example Azure dump with terminal escapes planted in names, labels and messages."""
    examples = Path(__file__).parents[3] / "examples"
    docs = list(yaml.safe_load_all((examples / "azure-vmss.yaml").read_text()))
    evil = "\x1b]0;owned\x07\x1b[2J\x9b3J"
    for doc in docs:
        for item in doc.get("items", [doc]):
            item["metadata"].setdefault("labels", {})["team"] = evil
            for cond in (item.get("status") or {}).get("conditions") or []:
                cond["message"] = f"{cond.get('message', '')} {evil}"
            if item["kind"] == "MachinePool":
                item["status"]["phase"] = f"Running{evil}"
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["describe", "--show-conditions", "all", "--show-all"],
        ["diagnose"],
        ["diff-metadata"],
        ["list", "-o", "wide"],
        ["list", "-o", "jsonpath={..}"],
        ["list", "-o", "custom-columns=LABELS:.metadata.labels,PHASE:.status.phase"],
        ["list", "--show-labels", "-L", "team"],
    ],
)
def test_no_command_writes_a_raw_control_character(tmp_path: Path, args: list[str]) -> None:
    dump = _hostile_dump(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", *args, "-f", str(dump), "--color", "always",
         "--now", "2026-11-29T15:00:00Z"],
        capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        text = stream.decode()
        plain = text.replace("\x1b[0m", "").replace("\x1b[31m", "")
        plain = plain.replace("\x1b[32m", "").replace("\x1b[33m", "")
        assert not (set(plain) - {"\n"}) & {chr(c) for c in [*range(32), 127, *range(128, 160)]}
    if args[0] in ("describe", "list"):
        assert b"\\x1b]0;owned" in done.stdout
