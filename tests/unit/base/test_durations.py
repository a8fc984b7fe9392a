from __future__ import annotations

import pytest

from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", None),
        ("0s", None),
        ("30", 30.0),
        ("5s", 5.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
    ],
)
def test_kubectl_request_timeout_syntax(text: str, seconds: float | None) -> None:
    assert parse_duration(text, "--request-timeout") == seconds


@pytest.mark.parametrize("text", ["", "5x", "s", "-1s", "1m 30s", "abc"])
def test_bad_durations_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--request-timeout"):
        parse_duration(text, "--request-timeout")


@pytest.mark.parametrize("text", ["99999999999999999999h", "2562048h", "1" * 400])
def test_durations_longer_than_go_allows_are_usage_errors(text: str) -> None:
    """Go's time.Duration caps at about 292 years; longer overflowed timedelta and sockets."""
    with pytest.raises(UsageError, match="longer than a duration can be"):
        parse_duration(text, "--drain-timeout")


def test_the_longest_go_duration_is_accepted() -> None:
    assert parse_duration("2562047h", "--timeout") == 2562047 * 3600.0


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--request-timeout", "99999999999999999999h"],
        ["diagnose", "--scaling-grace", "99999999999999999999h"],
        ["delete-machine", "m", "--drain-timeout", "99999999999999999999h"],
    ],
)
def test_huge_durations_are_one_line_errors_on_every_command(args, capsys) -> None:
    from support.run import run_cli

    result = run_cli(capsys, *args, "--kubeconfig", "/nonexistent")
    assert result.code in (1, 2)
    assert "Traceback" not in result.err
    assert result.err.startswith("error: ")
