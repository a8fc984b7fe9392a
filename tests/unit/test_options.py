from __future__ import annotations

import pytest

from kubectl_machinepool.errors import UsageError
from kubectl_machinepool.options import parse_duration


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
