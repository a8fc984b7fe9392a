"""Run the real console entry point in-process, with its error boundary and exit code."""

from __future__ import annotations

from dataclasses import dataclass

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
    captured = capsys.readouterr()
    code = exited.value.code
    return Result(code if isinstance(code, int) else 0, captured.out, captured.err)
