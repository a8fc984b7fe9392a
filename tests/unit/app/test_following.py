"""-w: app/following.py and the follows of app/reading.py over watches of fake API servers
(support.fakeapi, our client's boundary): a change is read again and shown with what changed,
a silent watch is warned about and heard again, Ctrl-C and the timeout end the follow and its
watches, a failed read is warned about.

Nothing waits on a clock: each step is driven from the callbacks the follow calls (show, warn,
read), the clock of changes.py is the test's, and SETTLE and RETRY are 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from support.fakeapi import FakeAPI, FakeServer
from support.objects import NOW

from kubectl_machinepool.app import following
from kubectl_machinepool.app.options import PoolScope
from kubectl_machinepool.app.reading import Loaded, follow_description, follow_pools
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.changes import Changes, Watched
from kubectl_machinepool.model.changes import Change
from kubectl_machinepool.model.snapshot import Snapshot

NAMESPACE = "capi-prod"
POOL = "dev-mp-0"
WHERE = "context 'test' (https://management.example:6443)"


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(following, "SETTLE", 0.0)
    monkeypatch.setattr(following, "RETRY", 0.0)


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Follow:
    """The servers, and what the follow showed and warned; `steps` run at each show in turn
    (the last one ends the follow with Ctrl-C, as a user does)."""

    management: FakeServer
    workload: FakeServer
    access: Any
    steps: list[Callable[[], None]] = field(default_factory=list)
    shown: list[tuple[Any, tuple[Change, ...]]] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)

    def show(self, view: Any, changes: tuple[Change, ...]) -> None:
        self.shown.append((view, changes))
        if not self.steps:
            raise KeyboardInterrupt
        self.steps.pop(0)()

    def pool_lists(self) -> int:
        return sum(1 for a in self.management.asked if a.path.endswith("/machinepools"))

    def scale(self, replicas: int) -> None:
        """Someone scales the pool: the server changes it and its watch says so."""
        [pool] = self.management.of_kind("MachinePool")
        pool["spec"]["replicas"] = replicas
        self.management.send("machinepools", "MODIFIED", self.management.add(pool))


@pytest.fixture
def live(fake_api: FakeAPI, tmp_path) -> Follow:
    management, workload = fake_api.scenario("capd", NAMESPACE)
    return Follow(management, workload, fake_api.access(tmp_path, namespace=NAMESPACE))


def replicas(snapshot: Snapshot) -> int:
    [pool] = [o for o in snapshot.objects if o["kind"] == "MachinePool"]
    return int(pool["spec"]["replicas"])


def test_a_change_is_read_again_and_shown_with_what_changed(live: Follow) -> None:
    live.steps = [partial(live.scale, 3)]
    with pytest.raises(KeyboardInterrupt):
        follow_pools(live.access, show=lambda s, _ns, c: live.show(s, c), warn=live.warned.append)
    (first, nothing), (second, changed) = live.shown
    assert (replicas(first), nothing) == (2, ())
    assert (replicas(second), changed) == (3, (Change("MODIFIED", "MachinePool", POOL),))
    # Read once to know what to watch, once the watches answered, once for the change: no timer.
    assert live.pool_lists() == 3
    assert sorted(set(live.management.watch_calls)) == ["dockermachinepools", "machinepools"]
    assert live.warned == []


def test_ctrl_c_ends_the_follow_and_every_watch_with_it(live: Follow) -> None:
    with pytest.raises(KeyboardInterrupt):
        follow_pools(live.access, show=lambda s, _ns, c: live.show(s, c), warn=live.warned.append)
    opened = list(live.management.watch_calls)
    # Each watch thread ends at the next word from its server, and opens no other watch.
    assert live.management.end_watches()
    assert live.management.watch_calls == opened
    assert len(live.shown) == 1


def test_describe_w_watches_what_it_showed_and_a_node_change_reads_again(live: Follow) -> None:
    node = live.workload.of_kind("Node")[0]

    def node_changes() -> None:
        node["metadata"].setdefault("labels", {})["example.com/drained"] = "yes"
        live.workload.send("nodes", "MODIFIED", live.workload.add(node))

    live.steps = [node_changes]
    with pytest.raises(KeyboardInterrupt):
        follow_description(
            live.access,
            PoolScope(),
            report_extras=False,
            show=live.show,
            warn=live.warned.append,
            clock=lambda: NOW,
        )
    assert sorted(set(live.management.watch_calls)) == [
        "dockermachinepools",
        "dockermachines",
        "machinepools",
        "machines",
    ]
    assert live.workload.watch_calls == ["nodes"]  # through the kubeconfig Secret
    (first, _), (second, changed) = live.shown
    assert isinstance(first, Loaded)
    assert isinstance(second, Loaded)
    assert changed == (Change("MODIFIED", "Node", node["metadata"]["name"]),)


def test_a_silent_watch_is_warned_about_and_heard_again(
    live: Follow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing from the server for WINDOW plus SLACK: the view may be stale, and the user is
    told; once the server speaks again the user is told that too, and the view is read again."""
    clock = Clock()
    monkeypatch.setattr(following, "Changes", partial(Changes, clock=clock))
    stale_after = Changes().stale_after

    def silence() -> None:
        clock.now += stale_after

    def warn(message: str) -> None:
        live.warned.append(message)
        if len(live.warned) == 1:  # the server speaks again, 5 s later
            clock.now += 5
            live.scale(3)

    live.steps = [silence]
    with pytest.raises(KeyboardInterrupt):
        follow_pools(live.access, show=lambda s, _ns, c: live.show(s, c), warn=warn)
    # list -w watches the workload cluster's Nodes too, silent as well.
    assert [w for w in live.warned if "about nodes" not in w] == [
        f"no word from the API server of {WHERE} about machinepools, dockermachinepools for "
        f"{stale_after:.0f}s; the view may be stale (reconnecting)",
        f"the API server of {WHERE} answers again about machinepools after "
        f"{stale_after + 5:.0f}s without a word; the view is read again",
    ]
    assert replicas(live.shown[-1][0]) == 3


def follow_views(
    read: Callable[[], int],
    api: FakeAPI,
    tmp_path,
    show: Callable[[int, tuple[Change, ...]], bool],
    **options: Any,
) -> tuple[bool, int]:
    """following.follow of a view of the test's own, watching the pools of a fake server."""
    access = api.access(tmp_path, namespace=NAMESPACE)

    def watches(kube: Any, _view: int) -> list[Watched]:
        return [Watched(kube, kube.capi_resource("MachinePool"), NAMESPACE)]

    return following.follow(access, read=read, watches=watches, show=show, **options)


def counter(*failures: int) -> Callable[[], int]:
    """read(): 1, 2, 3, ...; the calls numbered in failures fail as a restarting server's do."""
    calls = [0]

    def read() -> int:
        calls[0] += 1
        if calls[0] in failures:
            raise MachinePoolError(
                "the server is currently unable to handle the request (HTTP 503)"
            )
        return calls[0]

    return read


def test_a_view_that_needs_no_following_is_shown_once_without_a_watch(
    live: Follow, fake_api: FakeAPI, tmp_path
) -> None:
    shown: list[int] = []
    done, view = follow_views(
        counter(),
        fake_api,
        tmp_path,
        lambda v, _c: bool(shown.append(v)),
        warn=pytest.fail,
        over=lambda _v: True,
    )
    assert (done, view, shown) == (True, 1, [1])
    assert live.management.asked == []
    assert live.management.watch_calls == []


def test_the_timeout_passing_ends_the_follow_with_the_last_view(
    live: Follow, fake_api: FakeAPI, tmp_path
) -> None:
    clock = Clock()

    def show(view: int, _changes: tuple[Change, ...]) -> bool:
        clock.now += 30  # the deadline passes while the view is shown
        return False

    done, view = follow_views(
        counter(), fake_api, tmp_path, show, warn=pytest.fail, timeout=30, clock=clock
    )
    assert (done, view) == (False, 2)
    assert live.management.end_watches()


def test_show_saying_it_is_over_ends_the_follow(live: Follow, fake_api: FakeAPI, tmp_path) -> None:
    def show(view: int, _changes: tuple[Change, ...]) -> bool:
        if view == 2:
            live.scale(3)
        return view == 3

    done, view = follow_views(counter(), fake_api, tmp_path, show, warn=pytest.fail)
    assert (done, view) == (True, 3)


def test_a_failed_read_is_warned_about_and_the_follow_goes_on(
    live: Follow, fake_api: FakeAPI, tmp_path
) -> None:
    warned: list[str] = []
    seen: list[tuple[int, tuple[Change, ...]]] = []

    def show(view: int, changes: tuple[Change, ...]) -> bool:
        seen.append((view, changes))
        if view == 2:
            live.scale(3)  # read 3 fails
        return view == 4

    def warn(message: str) -> None:
        warned.append(message)
        live.scale(4)  # the next change is read

    done, view = follow_views(counter(3), fake_api, tmp_path, show, warn=warn)
    assert (done, view) == (True, 4)
    assert warned == [
        "cannot read now, trying again: the server is currently unable to handle the request "
        "(HTTP 503)"
    ]
    assert seen[-1] == (4, (Change("MODIFIED", "MachinePool", POOL),))


class NoWaitAfterFailure(Changes):
    """Changes whose wait() fails the test when, after a failed read and with nothing new,
    the follower waits longer than RETRY: it then waits for another change instead of trying
    the read again."""

    failed = False

    def wait(self, timeout: float | None) -> bool:
        longer = timeout is None or timeout > following.RETRY
        if NoWaitAfterFailure.failed and longer and not self._changed.is_set():
            raise AssertionError("waited for another change instead of reading again")
        return super().wait(timeout)


def test_a_failed_read_is_tried_again_without_waiting_for_another_change(
    live: Follow, fake_api: FakeAPI, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(following, "Changes", NoWaitAfterFailure)
    NoWaitAfterFailure.failed = False
    read = counter(3)

    def reading() -> int:
        try:
            return read()
        except MachinePoolError:
            NoWaitAfterFailure.failed = True
            raise

    def show(view: int, _changes: tuple[Change, ...]) -> bool:
        if view == 2:
            live.scale(3)
        return view == 4

    done, view = follow_views(reading, fake_api, tmp_path, show, warn=lambda _m: None)
    assert (done, view) == (True, 4)
