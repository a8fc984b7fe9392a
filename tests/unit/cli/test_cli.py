from __future__ import annotations

import pytest
from support.run import run_cli

from kubectl_machinepool import __version__

pytestmark = pytest.mark.usefixtures("no_cluster")


def test_help_reads_as_a_kubectl_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "--help")
    assert result.code == 0
    assert "Usage: kubectl machinepool" in result.out
    assert "list" in result.out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "--version")
    assert result.code == 0
    assert result.out.startswith(f"kubectl-machinepool {__version__} (commit ")  # test_version.py


def test_list_help_explains_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_cli(capsys, "list", "--help").out
    for column in (
        "DESIRED",
        "CURRENT",
        "READY",
        "AVAILABLE",
        "PHASE",
        "VERSION",
        "INFRA",
        "MACHINES",
        "AGE",
    ):
        assert f"  {column} " in out
    for flag in ("--kubeconfig", "--context", "--namespace", "--all-namespaces", "--selector",
                 "--request-timeout", "--output", "--no-headers", "--color"):  # fmt: skip
        assert flag in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["list", "-o", "xml"], "error: invalid value for '-o'"),
        (["list", "--color", "sometimes"], "error: invalid value for '--color'"),
        (["list", "--request-timeout", "5x"], "invalid value '5x' for --request-timeout"),
        (["lst"], 'error: unknown command "lst"'),
    ],
)
def test_usage_errors_exit_2_without_traceback(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    result = run_cli(capsys, *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err


def test_no_cluster_configured_is_one_line_error_with_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(capsys, "list")
    assert result.code == 1
    assert result.err.splitlines() == [
        "error: no kubeconfig found and not running in a cluster",
        "hint: set KUBECONFIG or pass --kubeconfig FILE",
    ]
    assert result.out == ""


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--replace", "--scale-down"), "--replace and --scale-down exclude each other"),
        (("--drain-timeout", "500ms"), "--drain-timeout 500ms would not bound the drain"),
        (("--drain-timeout", "0"), "would not bound the drain"),
        (("--timeout", "abc"), "invalid value 'abc' for --timeout"),
    ],
)
def test_delete_machine_flags_are_checked_before_anything_is_read(
    capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], says: str
) -> None:
    result = run_cli(capsys, "delete-machine", "vmss-workers-1", *flags)
    assert result.code == 2
    assert says in result.err
