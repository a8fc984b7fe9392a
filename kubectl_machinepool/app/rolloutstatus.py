"""`rollout status`: the selected pools' rollouts, reported once or followed to an end.

Followed (following.py), the pools are read again whenever a watch of what the view reads says
something changed (MachinePools, Machines, the infra pool and infra machine kinds, each workload
cluster's Nodes), or when a pool's stuck deadline comes, never on a timer. It ends when every
pool is done, when one is stuck, or at the timeout; a paused pool is waited for, never stuck.
Library code: no click, no printing; reports go to the caller's show().
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TextIO

from kubectl_machinepool.app import following
from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.app.reading import (
    Loaded,
    check_named,
    description_watches,
    judge,
    load_description,
)
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.changes import Watched
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.model.restartrecord import STARTED, read_record
from kubectl_machinepool.model.rollout import (
    DONE,
    PAUSED,
    PROGRESSING,
    PoolRollout,
    pool_rollout,
)


class End(enum.Enum):
    DONE = "done"
    STUCK = "stuck"
    TIMED_OUT = "timed out"
    REPORTED = "reported"  # -w=false: once, neither done nor stuck


def report_of(loaded: Loaded, rules: RuleOptions, stuck_after: timedelta) -> Report:
    # The rules judge a rollout by the same window as the report (MP1101, MP1102).
    rules = replace(rules, thresholds=replace(rules.thresholds, rollout=stuck_after))
    now = loaded.description.now
    rollouts = tuple(
        pool_rollout(
            pool,
            loaded.snapshot,
            now,
            stuck_after,
            cluster.nodes_read,
            server_time=loaded.server_time,
        )
        for cluster in loaded.description.clusters
        for pool in cluster.pools
    )
    _, findings = judge(loaded, rules)
    strays = {
        (cluster.namespace, pool.pool.name): cluster.outside.likely_of(pool.pool.name)
        for cluster in loaded.description.clusters
        for pool in cluster.pools
        if cluster.outside is not None
    }
    notes = (*loaded.notes, *_future_restarts(loaded))
    report = Report(rollouts, tuple(findings), now, notes, strays)
    ours = dict.fromkeys(f for r in rollouts for f in report.about(r))
    return replace(report, findings=tuple(ours))


def _future_restarts(loaded: Loaded) -> list[str]:
    """A restart record later than the server's clock (else the view's time) counts no
    instance as old, or none would ever be new: said, not waited on."""
    clock = loaded.server_time or loaded.description.now
    found = []
    for cluster in loaded.description.clusters:
        for pool in cluster.pools:
            record = read_record(pool.pool.raw)
            if record.started is not None and record.started > clock:
                found.append(
                    f"MachinePool {escape(pool.pool.namespace)}/{escape(pool.pool.name)}: the "
                    f"{STARTED} annotation is {record.shown}, later than {format_time(clock)}: "
                    "no restart is counted; remove the annotation"
                )
    return found


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

    resumed = Resumed(stuck_after)

    named = [False]

    def read() -> tuple[Loaded, Report]:
        loaded = load_description(access, Source(), pools, wall(), None, report_extras=False)
        if not named[0]:  # the first read: a pool deleted later leaves the report
            check_named(loaded)
            named[0] = True
        return loaded, resumed.seen(report_of(loaded, rules, stuck_after))

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


class Resumed:
    """A pause lifted is movement: the follower saw it, even if no object records when (an
    annotation removed leaves no time behind), so a pool is not stuck the moment it resumes."""

    def __init__(self, stuck_after: timedelta) -> None:
        self._stuck_after = stuck_after
        self._paused: set[tuple[str, str]] = set()
        self._at: dict[tuple[str, str], datetime] = {}

    def seen(self, report: Report) -> Report:
        rollouts = []
        for rollout in report.rollouts:
            key = (rollout.namespace, rollout.name)
            if rollout.state == PAUSED:
                self._paused.add(key)
            elif key in self._paused:
                self._paused.discard(key)
                self._at[key] = report.now
            rollouts.append(self._moved(rollout, self._at.get(key), report.now))
        return replace(report, rollouts=tuple(rollouts))

    def _moved(self, rollout: PoolRollout, at: datetime | None, now: datetime) -> PoolRollout:
        if at is None or (rollout.last_change is not None and rollout.last_change >= at):
            return rollout
        state = PROGRESSING if rollout.stuck and now - at <= self._stuck_after else rollout.state
        return replace(rollout, last_change=at, state=state)


def _until_stuck(rollout: PoolRollout, now: datetime, stuck_after: timedelta) -> float | None:
    """Seconds until this pool would be stuck if nothing moves (None: done, paused, or no
    clock)."""
    if rollout.state in (DONE, PAUSED) or rollout.last_change is None:
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
    # Its exit code is a verdict on the pools: -f input with none to judge is an error.
    loaded = load_description(access, source, pools, now, stdin, report_extras=False, judged=True)
    check_named(loaded)
    report = report_of(loaded, rules, stuck_after)
    if report.done:
        return End.DONE, report
    return (End.STUCK if report.stuck else End.REPORTED), report
