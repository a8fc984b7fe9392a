"""rollout status -w across a pause: the follower counts a pause lifted as movement, so a pool
is not stuck the moment it resumes (an annotation removed leaves no time in any object)."""

from __future__ import annotations

from datetime import datetime, timedelta

from support.objects import NOW
from support.rollouts import find, objects_of, pause
from support.snapshots import snapshot_of

from kubectl_machinepool.app.options import RuleOptions
from kubectl_machinepool.app.reading import Loaded
from kubectl_machinepool.app.rolloutstatus import Resumed, report_of
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.rollout import DONE, PAUSED, PROGRESSING, STUCK, pool_rollout
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


def restarted(started: str, server_time: datetime | None) -> Report:
    """The rolled-out example pool with a restart record, judged against that server clock."""
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "MachinePool")["metadata"].setdefault("annotations", {})[STARTED] = started
    snapshot = snapshot_of(objects)
    selection = Selection()
    loaded = Loaded(snapshot, describe(snapshot, selection, NOW), selection, None, server_time)
    return report_of(loaded, RuleOptions(), WINDOW)


def test_a_restart_record_later_than_the_servers_clock_counts_nothing_and_is_said() -> None:
    # Every replacement would be older than 2099: the rollout would never be done.
    found = restarted("2099-01-01T00:00:00Z", None)
    assert found.rollouts[0].state == DONE
    assert any("2099-01-01T00:00:00Z" in note and STARTED in note for note in found.notes)


def test_a_restart_record_is_judged_on_the_servers_clock_not_the_views() -> None:
    # The tool's clock is behind the server's: a restart the server began a minute ago is
    # after NOW, and its old instances are still old.
    started = NOW + timedelta(minutes=1)
    found = restarted(format_time(started), NOW + timedelta(minutes=2))
    assert found.rollouts[0].state != DONE
    assert not any(STARTED in note for note in found.notes)
