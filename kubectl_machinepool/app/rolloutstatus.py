"""`rollout status`: the selected pools' rollouts, reported once or followed to an end.

Followed (following.py), the pools are read again whenever a watch of what the view reads says
something changed (MachinePools, Machines, the infra pool and infra machine kinds, each workload
cluster's Nodes), or when a pool's stuck deadline comes, never on a timer. It ends when every
pool is done, when one is stuck, or at the timeout. Library code: no click, no printing;
reports go to the caller's show().
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TextIO

from kubectl_machinepool.app import following
from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.app.reading import Loaded, description_watches, judge, load_description
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.changes import Watched
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.model.rollout import PoolRollout, pool_rollout


class End(enum.Enum):
    DONE = "done"
    STUCK = "stuck"
    TIMED_OUT = "timed out"
    REPORTED = "reported"  # -w=false: once, neither done nor stuck


def report_of(loaded: Loaded, rules: RuleOptions, stuck_after: timedelta) -> Report:
    now = loaded.description.now
    rollouts = tuple(
        pool_rollout(pool, loaded.snapshot, now, stuck_after, cluster.nodes_read)
        for cluster in loaded.description.clusters
        for pool in cluster.pools
    )
    _, findings = judge(loaded, rules)
    keys = {(r.namespace, r.cluster, r.name) for r in rollouts}
    ours = tuple(f for f in findings if (f.namespace, f.cluster, f.pool) in keys)
    return Report(rollouts, ours, now, loaded.notes)


def follow(
    access: AccessOptions,
    pools: PoolScope,
    rules: RuleOptions,
    *,
    stuck_after: timedelta,
    timeout: float | None,
    show: Callable[[Report], None],
    warn: Callable[[str], None],
    wall: Callable[[], datetime],
) -> tuple[End, Report]:
    """Read and show until every pool is done, one is stuck, or timeout passes; read again on
    each change (following.py) and when a pool's stuck deadline comes."""

    def read() -> tuple[Loaded, Report]:
        loaded = load_description(access, Source(), pools, wall(), None, report_extras=False)
        return loaded, report_of(loaded, rules, stuck_after)

    def watches(kube: Kube, view: tuple[Loaded, Report]) -> list[Watched]:
        return description_watches(kube, view[0], access, pools)

    def shown(view: tuple[Loaded, Report], _: object) -> bool:
        show(view[1])
        return over(view)

    def wake_in(view: tuple[Loaded, Report]) -> float | None:
        report = view[1]
        waits = [_until_stuck(r, report.now, stuck_after) for r in report.rollouts]
        known = [w for w in waits if w is not None]
        return min(known) if known else None

    def over(view: tuple[Loaded, Report]) -> bool:
        return view[1].done or bool(view[1].stuck)

    ended, (_, report) = following.follow(
        access,
        read=read,
        watches=watches,
        show=shown,
        warn=warn,
        over=over,
        timeout=timeout,
        wake_in=wake_in,
    )
    if not ended:
        return End.TIMED_OUT, report
    return (End.DONE if report.done else End.STUCK), report


def _until_stuck(rollout: PoolRollout, now: datetime, stuck_after: timedelta) -> float | None:
    """Seconds until this pool would be stuck if nothing moves (None: done, or no clock)."""
    if rollout.done or rollout.last_change is None:
        return None
    return (rollout.last_change + stuck_after - now).total_seconds() + 0.5


def once(
    access: AccessOptions,
    source: Source,
    pools: PoolScope,
    rules: RuleOptions,
    *,
    stuck_after: timedelta,
    now: datetime,
    stdin: TextIO | None,
) -> tuple[End, Report]:
    """-w=false, or a dump: one report."""
    loaded = load_description(access, source, pools, now, stdin, report_extras=False)
    report = report_of(loaded, rules, stuck_after)
    if report.done:
        return End.DONE, report
    return (End.STUCK if report.stuck else End.REPORTED), report
