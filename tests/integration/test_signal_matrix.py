"""The signal matrix: SIGINT, SIGTERM and SIGHUP at every point where a write command plans or
waits, on the real API server (issue 49).

Each cell runs the installed plugin (a process of its own, as users run it) through a fault
proxy, waits until the run is at its point, sends one signal and reads what the run said and
what it left. The points: a planning read and the access review (each held unanswered), "Go
ahead?" (stdin a terminal), the preconditions read and each write (held unanswered: the server
never sees it), and what each command waits for after writing: upgrade's and delete-machine's
follow, rollout restart's plan of a replacement, its preconditions, and the wait between
replacements (the pool read again, and the pause before the next read).

Every cell: exit 128 + the signal, no traceback, the point's report, every object left changed
named. Per point, the three signals give the same report and leave the same state: SIGTERM and
SIGHUP are Ctrl-C with another exit code. Cells run side by side in lanes, each lane a proxy
and its namespaces, kept for the next cell when a run left one as it was.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Iterator
from queue import Queue

import pytest
from support.faultproxy import Match, Seen
from support.faultstate import namespaced_collections as collections_of
from support.management import management_cluster
from support.signalrun import (
    CHANGING,
    LANES,
    POOL,
    ROLLING,
    WAIT,
    Command,
    Lane,
    Picker,
    Point,
    Run,
    open_lanes,
    run_cells,
)

pytestmark = pytest.mark.xdist_group("signal-matrix")

MACHINE = "dev-mp-0-x7q2p"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# -- points ---------------------------------------------------------------------------------------


def _first(test: Callable[[Seen, str], bool]) -> Picker:
    return lambda ns: lambda seen: test(seen, ns)


def _after(earlier: Callable[[Seen, str], bool], test: Callable[[Seen, str], bool]) -> Picker:
    """The first request `test` picks once one `earlier` picks has arrived."""

    def picker(ns: str) -> Match:
        seen_earlier = False

        def match(seen: Seen) -> bool:
            nonlocal seen_earlier
            if seen_earlier and test(seen, ns):
                return True
            seen_earlier = seen_earlier or earlier(seen, ns)
            return False

        return match

    return picker


def _nth_write(n: int) -> Picker:
    def picker(_ns: str) -> Match:
        count = 0

        def match(seen: Seen) -> bool:
            nonlocal count
            count += seen.method in CHANGING
            return seen.method in CHANGING and count == n

        return match

    return picker


def _lists(plural: str) -> Callable[[Seen, str], bool]:
    return lambda s, ns: s.method == "GET" and s.path.endswith(f"/namespaces/{ns}/{plural}")


def _named_read(s: Seen, ns: str) -> bool:
    """A GET of one of the pool's own objects: the engine's preconditions read."""
    kinds = "machinepools|dockermachinepools|machines"
    return s.method == "GET" and re.search(f"/namespaces/{ns}/({kinds})/[^/]+$", s.path) is not None


def _review(s: Seen, _ns: str) -> bool:
    return s.method == "POST" and s.path.endswith("/selfsubjectaccessreviews")


def _watch(s: Seen, _ns: str) -> bool:
    return "watch" in s.params


def _record(s: Seen, ns: str) -> bool:
    return s.method == "PATCH" and s.path.endswith(f"/namespaces/{ns}/machinepools/{POOL}")


def _delete(s: Seen, _ns: str) -> bool:
    return s.method == "DELETE"


NOTHING = "interrupted: {signal} before any write: nothing was written"
PLANNING = (
    Point("planning read", NOTHING, _first(_lists("machinepools"))),
    Point("access review", NOTHING, _first(_review)),
    Point("Go ahead?", "interrupted: Cancelled: nothing was written.", prompt=True),
    Point("preconditions", "interrupted: Nothing was written", _first(_named_read)),
)


def _writes(count: int) -> tuple[Point, ...]:
    return tuple(
        Point(f"write {n}", f"interrupted: {{signal}} during step {n} of {count}", _nth_write(n))
        for n in range(1, count + 1)
    )


RESTARTED = "Stopped: the restart is recorded on MachinePool {ns}/" + POOL
COMMANDS = (
    Command(
        "upgrade",
        ("upgrade", POOL, "--version", "v1.34.1", "--timeout", "5m"),
        # The follow is rollout status's: it ends quietly, after the writes' lines.
        (*PLANNING, *_writes(4), Point("follow", "", _first(_watch), hold=False)),
    ),
    # Its revision recorded first (a Scale carries no annotation), then /scale.
    Command("scale", ("scale", POOL, "--replicas", "3"), (*PLANNING, *_writes(2))),
    Command("rollout pause", ("rollout", "pause", POOL), (*PLANNING, *_writes(2))),
    Command("rollout resume", ("rollout", "resume", POOL), (*PLANNING, *_writes(2)), "capd-paused"),
    # Its one step is the resume above, through resume's own plan: its diagnosis is the first
    # planning read.
    Command("fix", ("fix", POOL), (*PLANNING, *_writes(2)), "capd-paused"),
    Command(
        "rollout restart",
        ("rollout", "restart", POOL, "--timeout", "5m"),
        (
            *PLANNING,
            Point("write 1 (record)", "interrupted: {signal} during step 1 of 1", _nth_write(1)),
            Point("replacement plan", RESTARTED, _after(_record, _lists("machines"))),
            Point(
                "replacement preconditions",
                "interrupted: Nothing more was written. Left changed: the restart is recorded",
                _after(_record, _named_read),
            ),
            Point("replacement delete", "interrupted: {signal} during step 1 of 1", _nth_write(2)),
            Point("wait: pool read", RESTARTED, _after(_delete, _lists("machinepools"))),
            Point("wait: pause", RESTARTED, _first(_delete), hold=False, sleeping=True),
        ),
    ),
    Command(
        "delete-machine",
        ("delete-machine", MACHINE, "--wait", "--timeout", "5m"),
        (
            *PLANNING,
            *_writes(1),
            Point(
                "follow",
                f"Stopped following: the deletion of Machine {{ns}}/{MACHINE} goes on",
                _first(_watch),
                hold=False,
            ),
        ),
    ),
)


# Followed views, which write nothing: each ends on every signal as on Ctrl-C, quietly.
WATCHING = (Point("watching", "", _first(_watch), hold=False, shown=True),)
VIEWS = tuple(
    Command(argv[0], argv, WATCHING, scenario, writes=False)
    for argv, scenario in (
        (("describe", POOL, "-w"), "capd"),
        (("list", "-w"), "capd"),
        (("diagnose", "-w"), "capd"),
        (("events", POOL, "-w"), "capd"),
        (("rollout", "status", POOL), ROLLING),
    )
)


@pytest.fixture(scope="module")
def lanes(control_plane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Queue[Lane]]:
    cluster = management_cluster(control_plane, "v1beta2")
    workdirs = [tmp_path_factory.mktemp(f"signal-lane-{i}") for i in range(LANES)]
    made = open_lanes(cluster, collections_of(cluster.api), workdirs)
    free: Queue[Lane] = Queue()
    for lane in made:
        free.put(lane)
    yield free
    for lane in made:
        lane.close()


# -- judging --------------------------------------------------------------------------------------


def problems(run: Run) -> list[str]:
    """What a run owes at its point, whatever the signal."""
    if not run.reached:
        return [f"never reached the point (exit {run.code}): {run.generic(run.err)[-300:]!r}"]
    if run.code is None:
        return [f"still running {WAIT:g} s after the signal: {run.generic(run.err)[-300:]!r}"]
    found = []
    if run.code != 128 + run.signum:
        found.append(f"exit {run.code}, not {128 + run.signum}")
    for bad in ("Traceback", "Aborted."):
        if bad in run.err or bad in run.out:
            found.append(f"{bad!r} in the output")
    says = run.point.says.replace("{signal}", signal.Signals(run.signum).name)
    says = says.replace("{ns}", run.namespace)
    if says not in run.err:
        found.append(f"stderr lacks {run.generic(says)!r}")
    unnamed = [name for name in run.left if name not in run.err and not _written(run, name)]
    if unnamed:
        found.append(f"left changed and not named: {', '.join(unnamed)}")
    return found


def _written(run: Run, display: str) -> bool:
    """Whether stdout names the object as written, kubectl's way ("machinepool.x/NAME ...")."""
    kind, _, name = display.partition(" ")
    return any(
        line.startswith(f"{kind.lower()}.") and f"/{name.split('/')[-1]} " in line
        for line in run.out.splitlines()
    )


def differences(runs: list[Run]) -> list[str]:
    """The three signals at one point: the same report and the same objects left changed."""
    first, found = runs[0], []
    for other in runs[1:]:
        if other.generic(other.err) != first.generic(first.err):
            found.append(
                f"{signal.Signals(other.signum).name} says {other.generic(other.err)!r} where "
                f"{signal.Signals(first.signum).name} says {first.generic(first.err)!r}"
            )
        if [other.generic(n) for n in other.left] != [first.generic(n) for n in first.left]:
            found.append(
                f"{signal.Signals(other.signum).name} leaves {other.left}, "
                f"{signal.Signals(first.signum).name} {first.left}"
            )
    return found


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_signal_at_every_point(lanes: Queue[Lane], command: Command) -> None:
    cells = [(command, point, signum) for point in command.points for signum in SIGNALS]
    runs = run_cells(lanes, cells)
    report = []
    for point in command.points:
        at = [r for r in runs if r.point is point]
        found = [f"{signal.Signals(r.signum).name}: {p}" for r in at for p in problems(r)]
        if not found:
            found = differences(at)
        report += [f"{command.name}, {point.name}: {p}" for p in found]
    assert not report, "\n".join(report)


@pytest.mark.parametrize("view", VIEWS, ids=lambda c: " ".join(c.argv[:2]))
def test_every_signal_ends_a_followed_view_as_ctrl_c_does(
    lanes: Queue[Lane], view: Command
) -> None:
    runs = run_cells(lanes, [(view, view.points[0], signum) for signum in SIGNALS])
    report = [f"{signal.Signals(r.signum).name}: {p}" for r in runs for p in problems(r)]
    report = report or differences(runs)
    assert not report, "\n".join(report)
