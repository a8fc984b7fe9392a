"""app/forked.py: calls in child processes, their results in order and as soon as they can be,
no more children at once than asked, and none left behind however the caller stops.

Orders between children are forced with files, never with sleeps: each case holds on the machine
however slow it is."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kubectl_machinepool.app.forked import run_forked

# A bound on a wait that only a broken run_forked would reach; never a measure of speed.
GUARD = 60.0


def _wait_for(path: Path) -> bool:
    deadline = time.monotonic() + GUARD
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _died(index: int, why: str) -> str:
    return f"died {index}: {why}"


def test_results_come_in_the_order_of_the_calls_whatever_order_the_children_end(
    tmp_path: Path,
) -> None:
    first_may_end = tmp_path / "second-ended"

    def first() -> str:
        return "first" if _wait_for(first_may_end) else "first never saw the second end"

    def second() -> str:
        first_may_end.touch()
        return "second"

    assert list(run_forked([first, second], 2, _died)) == ["first", "second"]


def test_a_result_is_handed_over_before_the_later_calls_end(tmp_path: Path) -> None:
    taken = tmp_path / "first-taken"

    def first() -> str:
        return "first"

    def second() -> str:
        return "second, after the first was taken" if _wait_for(taken) else "second, alone"

    results = run_forked([first, second], 2, _died)
    assert next(results) == "first"
    taken.touch()
    assert list(results) == ["second, after the first was taken"]


def test_no_more_children_at_once_than_asked(tmp_path: Path) -> None:
    def call(i: int) -> Callable[[], int]:
        def run() -> int:
            mine = tmp_path / f"running-{i}"
            mine.touch()
            alive = len(list(tmp_path.glob("running-*")))
            mine.unlink()
            return alive

        return run

    assert max(run_forked([call(i) for i in range(6)], 2, _died)) <= 2
    assert list(run_forked([call(i) for i in range(3)], 1, _died)) == [1, 1, 1]


def test_the_call_is_not_pickled_and_only_its_result_comes_back() -> None:
    lock = threading.Lock()  # cannot be pickled: the closure is inherited, not sent

    def call() -> tuple[int, bool]:
        with lock:
            return os.getpid(), True

    [(pid, ok)] = run_forked([call], 1, _died)
    assert ok
    assert pid != os.getpid()


def test_a_child_killed_gives_what_died_says_and_the_others_go_on() -> None:
    def killed() -> str:
        os.kill(os.getpid(), signal.SIGKILL)
        return "unreachable"

    results = list(run_forked([lambda: "a", killed, lambda: "c"], 2, _died))
    assert results == ["a", "died 1: its process ended with SIGKILL", "c"]


def test_a_call_that_raises_raises_here_with_the_child_s_traceback() -> None:
    def broken() -> str:
        raise ValueError("a bug in the call")

    results = run_forked([lambda: "a", broken], 1, _died)
    assert next(results) == "a"
    with pytest.raises(RuntimeError, match="ValueError: a bug in the call"):
        next(results)


def test_a_caller_that_stops_early_leaves_no_child_behind(tmp_path: Path) -> None:
    def hangs() -> str:
        # Written whole, then renamed: the parent waits for the name, and must not read it empty.
        (tmp_path / "pid.part").write_text(str(os.getpid()))
        (tmp_path / "pid.part").replace(tmp_path / "pid")
        threading.Event().wait()
        return "never"

    results = run_forked([lambda: "a", hangs], 2, _died)
    assert next(results) == "a"
    assert _wait_for(tmp_path / "pid")
    pid = int((tmp_path / "pid").read_text())
    results.close()
    with pytest.raises(ProcessLookupError):  # killed and reaped, not a zombie
        os.kill(pid, 0)
