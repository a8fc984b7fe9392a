"""rollout status -w across a pause: the follower counts a pause lifted as movement, so a pool
is not stuck the moment it resumes (an annotation removed leaves no time in any object)."""

from __future__ import annotations

from datetime import timedelta

from support.objects import NOW
from support.rollouts import objects_of, pause
from support.snapshots import snapshot_of

from kubectl_machinepool.app.rolloutstatus import Resumed
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.rollout import PAUSED, PROGRESSING, STUCK, pool_rollout
from kubectl_machinepool.model.selector import Selection

WINDOW = timedelta(minutes=10)


def report(paused: bool, at_minute: int) -> Report:
    """The example pool mid-rollout (nothing moved since 19 minutes before NOW), read
    at_minute minutes after NOW."""
    objects = objects_of("azure-vmss", "v1beta2")
    if paused:
        pause(objects, "infra")
    snapshot = snapshot_of(objects)
    now = NOW + timedelta(minutes=at_minute)
    [pool] = [p for c in describe(snapshot, Selection(), now).clusters for p in c.pools]
    return Report((pool_rollout(pool, snapshot, now, WINDOW),), (), now)


def test_a_pool_seen_paused_then_resumed_is_progressing_for_one_window() -> None:
    resumed = Resumed(WINDOW)
    assert resumed.seen(report(paused=True, at_minute=0)).rollouts[0].state == PAUSED
    after = resumed.seen(report(paused=False, at_minute=1)).rollouts[0]
    assert after.state == PROGRESSING
    assert after.last_change == NOW + timedelta(minutes=1)
    assert resumed.seen(report(paused=False, at_minute=5)).rollouts[0].state == PROGRESSING
    assert resumed.seen(report(paused=False, at_minute=12)).rollouts[0].state == STUCK


def test_a_pool_never_seen_paused_is_judged_as_read() -> None:
    assert Resumed(WINDOW).seen(report(paused=False, at_minute=1)).rollouts[0].state == STUCK
