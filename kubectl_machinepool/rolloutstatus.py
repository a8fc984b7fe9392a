"""`rollout status`: the selected pools' rollouts, reported once or followed to an end.

Followed, the pools are read again whenever a watch of what the view reads says something
changed (changes.py: MachinePools, Machines, the infra pool and infra machine kinds, each
workload cluster's Nodes), or when a pool's stuck deadline comes, never on a timer. It ends
when every pool is done, when one is stuck, or at the timeout. A read that fails after the first
(an API server restarting) is reported and tried again; the first must succeed.
Library code: no click, no printing; reports go to the caller's show().
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TextIO

from kubectl_machinepool.changes import Changes, Watched
from kubectl_machinepool.diagnostics import Finding
from kubectl_machinepool.errors import MachinePoolError
from kubectl_machinepool.fetch import NODES, workload_kube
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.options import AccessOptions, PoolScope, RuleOptions, Source
from kubectl_machinepool.poolname import POOL_NAME_LABEL
from kubectl_machinepool.reading import Loaded, judge, load_description
from kubectl_machinepool.rollout import PoolRollout, pool_rollout

# Changes that come together (an instance replaced: Machine, infra machine, Node) are read once.
SETTLE = 1.0
# After a failed read, the next one waits at least this long.
RETRY = 5.0


@dataclass(frozen=True, slots=True)
class Report:
    rollouts: tuple[PoolRollout, ...]
    # The findings about these pools: why a stuck one is stuck.
    findings: tuple[Finding, ...]
    now: datetime

    @property
    def done(self) -> bool:
        return all(r.done for r in self.rollouts)

    @property
    def stuck(self) -> tuple[PoolRollout, ...]:
        return tuple(r for r in self.rollouts if r.stuck)


class End(enum.Enum):
    DONE = "done"
    STUCK = "stuck"
    TIMED_OUT = "timed out"
    REPORTED = "reported"  # -w=false: once, neither done nor stuck


def report_of(loaded: Loaded, rules: RuleOptions, stuck_after: timedelta) -> Report:
    now = loaded.description.now
    rollouts = tuple(
        pool_rollout(pool, loaded.snapshot, now, stuck_after)
        for cluster in loaded.description.clusters
        for pool in cluster.pools
    )
    _, findings = judge(loaded, rules)
    keys = {(r.namespace, r.cluster, r.name) for r in rollouts}
    ours = tuple(f for f in findings if (f.namespace, f.cluster, f.pool) in keys)
    return Report(rollouts, ours, now)


def _watched(kube: Kube, loaded: Loaded, pools: PoolScope, timeout: float | None) -> list[Watched]:
    namespace = loaded.namespace
    found = [
        Watched(kube, kube.capi_resource("MachinePool"), namespace),
        Watched(kube, kube.capi_resource("Machine"), namespace, POOL_NAME_LABEL),
    ]
    kinds: set[tuple[str, str]] = set()
    for cluster in loaded.description.clusters:
        for pool in cluster.pools:
            ref = pool.pool.infrastructure_ref
            if ref is not None:
                kinds.add((ref.api_group, ref.kind))
                if pool.pool.machine_kind:
                    kinds.add((ref.api_group, pool.pool.machine_kind))
    for group, kind in sorted(kinds):
        try:
            found.append(Watched(kube, kube.resource(group, kind), namespace))
        except MachinePoolError:
            continue  # not readable: the reads say so
    for cluster in loaded.description.clusters:
        if not cluster.nodes_read:
            continue
        try:
            workload = workload_kube(
                kube, cluster.namespace, cluster.name, pools.workload_kubeconfig, timeout
            )
        except MachinePoolError:
            continue
        found.append(Watched(workload, NODES, None))
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
    clock: Callable[[], float] = time.monotonic,
) -> tuple[End, Report]:
    """Read, show, and wait for a change until every pool is done, one is stuck, or timeout."""
    deadline = None if timeout is None else clock() + timeout
    loaded = load_description(access, Source(), pools, wall(), None, report_extras=False)
    report = report_of(loaded, rules, stuck_after)
    show(report)
    if report.done or report.stuck:
        return (End.DONE if report.done else End.STUCK), report
    changes = Changes()
    with Kube.connect(access) as kube:
        for watched in _watched(kube, loaded, pools, access.request_timeout):
            changes.follow(watched)
        try:
            while True:
                now = clock()
                if deadline is not None and now >= deadline:
                    return End.TIMED_OUT, report
                waits = [_until_stuck(r, report.now, stuck_after) for r in report.rollouts]
                waits += [] if deadline is None else [deadline - now]
                known = [w for w in waits if w is not None]
                if changes.wait(max(min(known), 0.0) if known else None):
                    time.sleep(SETTLE)
                    changes.wait(0)
                try:
                    loaded = load_description(
                        access, Source(), pools, wall(), None, report_extras=False
                    )
                except MachinePoolError as err:
                    warn(f"cannot read the pools now, trying again: {err.message}")
                    time.sleep(RETRY)
                    report = replace(report, now=wall())
                    continue
                report = report_of(loaded, rules, stuck_after)
                show(report)
                if report.done or report.stuck:
                    return (End.DONE if report.done else End.STUCK), report
        finally:
            changes.stop()


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
