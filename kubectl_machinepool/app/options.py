"""What a read command was asked for, as frozen values built once from the flags and passed
down: which pools, from where, judged how."""

from __future__ import annotations

from dataclasses import field
from datetime import datetime

from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.ignoring import Ignore
from kubectl_machinepool.diagnostics.thresholds import Thresholds


@record
class Source:
    """A dump to read instead of the cluster (-f), and the time to read it at (--now)."""

    filenames: tuple[str, ...] = ()
    now: datetime | None = None


@record
class PoolScope:
    """Which pools a read command looks at, and where their Nodes come from."""

    names: tuple[str, ...] = ()
    cluster: str | None = None
    workload_kubeconfig: str | None = None


@record
class RuleOptions:
    thresholds: Thresholds = field(default_factory=Thresholds)
    # --capi-version: overrides the version read from the core manager's image.
    capi_version: str | None = None
    # --ignore's and the config file's, the findings they cover set aside (diagnostics/ignoring.py).
    ignores: tuple[Ignore, ...] = ()
