"""kubectl's durations ("0", "30", "1m30s", "500ms"), as every flag and field that takes one
reads them."""

from __future__ import annotations

import re

from kubectl_machinepool.base.errors import UsageError

_GO_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", re.ASCII)
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


# What 0 means is the flag's own (no limit for a timeout, no grace for a grace): --help says it.
_HINT = "use a number with a unit, e.g. 5s, 2m or 1m30s"

# Go's time.Duration holds at most 2^63-1 nanoseconds; kubectl refuses anything longer.
MAX_DURATION_SECONDS = (2**63 - 1) / 1e9


def parse_duration(text: str, flag: str) -> float | None:
    """Parse a kubectl duration ("0", "30", "1m30s", "500ms") to seconds; 0 means no limit (None).

    kubectl takes a bare integer as seconds and otherwise Go's time.ParseDuration syntax.
    """
    value = text.strip()
    if value.isascii() and value.isdigit():
        seconds = float(value)
    else:
        parts = _GO_DURATION_PART.findall(value)
        if not parts or "".join(n + u for n, u in parts) != value:
            raise UsageError(
                f"invalid value {text!r} for {flag}",
                hint=_HINT,
            )
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds > MAX_DURATION_SECONDS:
        raise UsageError(
            f"invalid value {text!r} for {flag}: longer than a duration can be (about 292 years)",
            hint=_HINT,
        )
    return seconds or None
