"""What the user asked for, as frozen values built once from the flags and passed down."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from kubectl_machinepool.errors import UsageError
from kubectl_machinepool.timeutil import parse_time

ColorMode = Literal["auto", "always", "never"]

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
                hint="use a number with a unit, e.g. 5s, 2m or 1m30s (0 = no limit)",
            )
        seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds > MAX_DURATION_SECONDS:
        raise UsageError(
            f"invalid value {text!r} for {flag}: longer than a duration can be (about 292 years)",
            hint="use a number with a unit, e.g. 5s, 2m or 1m30s (0 = no limit)",
        )
    return seconds or None


# LIST page size. kubectl's 500 makes every page after the first a read from etcd, which at a
# few thousand Machines took 0.1-0.4 s a page against about 1 s for the whole list served from
# the watch cache in one answer (tests/benchmarks/scale.py). Answers are walked as they arrive
# (liststream.py), so a big page costs no more memory than small ones; 5000 keeps one page of
# real Nodes, images and all, well under the 256 MiB an answer may have.
CHUNK_SIZE = 5000


@dataclass(frozen=True, slots=True)
class AccessOptions:
    """Where to read from: the kubectl connection flags plus the object scope."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str | None = None
    request_timeout: float | None = None
    # Objects per LIST page (kubectl's --chunk-size); 0 reads each list in one answer.
    chunk_size: int = CHUNK_SIZE

    def scope(self, default: str | None) -> str | None:
        """The namespace to read, kubectl's way: -A means all, else -n, else the context's."""
        return None if self.all_namespaces else self.namespace or default


@dataclass(frozen=True, slots=True)
class FleetOptions:
    """--contexts and --all-contexts: which management clusters a fleet view reads."""

    contexts: tuple[str, ...] = ()
    every: bool = False

    @property
    def asked(self) -> bool:
        return self.every or bool(self.contexts)


@dataclass(frozen=True, slots=True)
class OutputOptions:
    format: str = "table"
    no_headers: bool = False
    color: ColorMode = "auto"
    # What follows the = of -o jsonpath=…, custom-columns=… and their -file forms.
    template: str = ""


@dataclass(frozen=True, slots=True)
class ListOptions:
    """list's kubectl printing flags: --sort-by, -L/--label-columns, --show-labels."""

    sort_by: str = ""
    label_columns: tuple[str, ...] = ()
    show_labels: bool = False


def parse_now(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = parse_time(value)
    if parsed is None:
        raise UsageError(
            f"invalid value {value!r} for --now", hint="use RFC 3339, e.g. 2026-11-29T15:00:00Z"
        )
    return parsed


@dataclass(frozen=True, slots=True)
class Source:
    """A dump to read instead of the cluster (-f), and the time to read it at (--now)."""

    filenames: tuple[str, ...] = ()
    now: datetime | None = None


@dataclass(frozen=True, slots=True)
class PoolScope:
    """Which pools a read command looks at, and where their Nodes come from."""

    names: tuple[str, ...] = ()
    cluster: str | None = None
    workload_kubeconfig: str | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """How long a state may last before a time-based rule calls it a problem."""

    scaling: timedelta = timedelta(minutes=2)
    taint: timedelta = timedelta(minutes=5)
    deleting: timedelta = timedelta(minutes=15)
    drain: timedelta = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class RuleOptions:
    thresholds: Thresholds = Thresholds()
    # --capi-version: overrides the version read from the core manager's image.
    capi_version: str | None = None
