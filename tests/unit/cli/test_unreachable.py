"""Every read command against a server that refuses connections: one error line naming the
server, a hint, exit 1, as kubectl. `providers` once warned three times and exited 0, so a
script took "the installed providers are not known" for an answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.kubeconfigs import DEAD_SERVER, dead_kubeconfig
from support.run import run_cli

READS = [
    ["list"],
    ["list", "-A"],
    ["describe", "workers"],
    ["diagnose"],
    ["events", "workers"],
    ["diff-metadata", "workers"],
    ["export", "workers", "-o", "out"],
    ["providers"],
    ["providers", "-A", "-o", "json"],
    ["rollout", "status", "workers", "-w=false"],
    ["rollout", "history", "workers"],
]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_refused_connection_is_an_error_in_every_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    config = dead_kubeconfig(tmp_path)
    out = [a if a != "out" else str(tmp_path / "export") for a in args]
    result = run_cli(capsys, *out, "--kubeconfig", str(config), "-n", "default")
    assert result.code == 1, (result.out, result.err)
    assert result.err.startswith("error: "), result.err
    assert DEAD_SERVER.removeprefix("https://") in result.err.splitlines()[0]
    assert "Traceback" not in result.err
