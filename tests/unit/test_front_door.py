"""README's first screen: two commands that work on a fresh clone, and CI runs the second."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from support.docs import readme

ROOT = Path(__file__).resolve().parents[2]
README = readme()
FIRST_SCREEN = README[: README.index("\n## ")]


def _commands() -> list[str]:
    return [line.strip() for line in FIRST_SCREEN.splitlines() if line.startswith("    ")]


def test_the_first_screen_gives_exactly_two_commands() -> None:
    install_and_describe, run_tests = _commands()
    assert install_and_describe.startswith("python3 -m venv .venv && ")
    assert run_tests == "tests/run"
    assert os.access(ROOT / "tests" / "run", os.X_OK)


def test_ci_runs_the_second_command() -> None:
    marker = re.search(r"<!-- The line below is what \.ci/run executes.*-->\n +(\S.*)\n", README)
    assert marker is not None
    assert marker.group(1) == _commands()[1]
    assert "README.md" in (ROOT / ".ci" / "run").read_text()


def test_the_main_job_runs_on_the_shipped_examples() -> None:
    *_, main_job = _commands()[0].split(" && ")
    argv = shlex.split(main_job)
    assert argv[0] == ".venv/bin/kubectl-machinepool"
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (done.returncode, done.stderr) == (0, "")
    for pool in ("asg-workers", "eks-default", "vmss-workers"):
        assert f"MachinePool capi-prod/{pool}" in done.stdout
