"""Pending reads: results and errors come back to the caller; never more than MAX_PARALLEL run."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import weakref

import pytest

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube import parallel
from kubectl_machinepool.kube.parallel import Pending


def test_the_result_and_the_error_reach_the_caller() -> None:
    assert Pending(lambda: 42).result() == 42

    def fails() -> None:
        raise MachinePoolError("forbidden")

    with pytest.raises(MachinePoolError, match="forbidden"):
        Pending(fails).result()


def test_no_more_than_max_parallel_at_once() -> None:
    lock, running, most = threading.Lock(), [0], [0]
    go = threading.Event()

    def read() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        go.wait(5)
        with lock:
            running[0] -= 1

    pending = [Pending(read) for _ in range(parallel.MAX_PARALLEL + 4)]
    # Wait until the slots are full, then let everything finish.
    for _ in range(500):
        with lock:
            if running[0] == parallel.MAX_PARALLEL:
                break
        threading.Event().wait(0.01)
    go.set()
    for one in pending:
        one.result()
    assert most[0] == parallel.MAX_PARALLEL


def test_a_read_thread_does_not_keep_the_process_alive() -> None:
    # A read blocked on a silent server (no --request-timeout) must not hold the exit.
    program = "import threading; from kubectl_machinepool.kube.parallel import Pending; "
    program += "Pending(threading.Event().wait); print('done')"
    done = subprocess.run(
        [sys.executable, "-c", program], check=False, capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stdout) == (0, "done\n")


def test_our_threads_leave_sigint_and_sigterm_to_the_main_thread() -> None:
    """Ctrl-C must reach the main thread, which may be blocked in a request without timeout: a
    signal handed to a reading thread would only set a flag there."""
    import signal

    def mask() -> set[signal.Signals]:
        return set(signal.pthread_sigmask(signal.SIG_BLOCK, []))

    assert {signal.SIGINT, signal.SIGTERM} <= Pending(mask).result()
    seen: list[set[signal.Signals]] = []
    parallel.start_daemon(lambda: seen.append(mask())).join()
    assert {signal.SIGINT, signal.SIGTERM} <= seen[0]
    assert signal.SIGINT not in mask()


class _Objects:
    """Stands in for a LIST's objects."""


class _Reads:
    """As kube/reads.Reads: keeps the reads it started, each running one of its methods."""

    def __init__(self) -> None:
        self.started = [Pending(self.listed)]

    def listed(self) -> _Objects:
        return _Objects()


def test_a_read_done_is_freed_without_the_garbage_collector() -> None:
    """A followed view reads again and again, and the collector runs rarely in a run
    (cli/collector.py): no cycle may keep a read's objects once nothing uses them."""
    gc.disable()
    try:
        reads = _Reads()
        objects = weakref.ref(reads.started[0].result())
        del reads
        assert objects() is None
    finally:
        gc.enable()
