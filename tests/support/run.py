"""Run the real console entry point in-process, with its error boundary and exit code."""

from __future__ import annotations

import gc
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubectl_machinepool.cli import main


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    # The command ran with the collector rarely run (cli.main): a socket it left unclosed in
    # a reference cycle is found now and fails this test, not a later one.
    gc.collect(1)
    captured = capsys.readouterr()
    code = exited.value.code
    return Result(code if isinstance(code, int) else 0, captured.out, captured.err)


def start_plugin(args: list[str], home: Path) -> subprocess.Popen[str]:
    """The installed plugin as a child of its own session, so a signal reaches it alone (and if
    the test run dies, the servers go with it and the plugin ends on its next request)."""
    from .controlplane import installed_plugin

    return subprocess.Popen(
        [str(installed_plugin()), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONUNBUFFERED": "1"},
        cwd=home,
        start_new_session=True,
    )
