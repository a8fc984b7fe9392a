"""Reads that run side by side: the API servers' time, not ours, is what a fleet-size LIST costs.

Daemon threads rather than a ThreadPoolExecutor: a read waiting on a silent server (90 s by
default, as long as --request-timeout says otherwise) must not keep the process alive after
Ctrl-C or an error elsewhere, and an executor's workers are joined at exit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any, Generic, TypeVar

from kubectl_machinepool.kube.interruptible import SLICE
from kubectl_machinepool.kube.interrupts import STOPPING

T = TypeVar("T")

# Enough to overlap every kind of a describe and a few workload clusters; more would only
# queue on the API server and contend for the interpreter while decoding.
MAX_PARALLEL = 8
_slots = threading.BoundedSemaphore(MAX_PARALLEL)


def start_daemon(target: Callable[..., object], *args: Any) -> threading.Thread:
    """A daemon thread running target(*args), with the stopping signals blocked in it.

    Python runs signal handlers in the main thread only; a signal the kernel hands to another
    thread just sets a flag there, and a main thread blocked in a request without a timeout
    would never see it: Ctrl-C would do nothing. Blocked here, the kernel delivers it to the
    main thread, interrupting what it waits for.
    """

    def run() -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
        target(*args)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class Pending(Generic[T]):
    """A call running in its own thread (at most MAX_PARALLEL at once, the rest wait their turn);
    result() waits for it and re-raises what it raised. Nothing waits for another Pending from
    inside one, as that could hold every slot, but for one made with slot=False: a small read
    beside the one its caller's thread makes, under the slot that thread holds."""

    def __init__(self, call: Callable[[], T], *, slot: bool = True) -> None:
        self._slot = slot
        self._value: tuple[T] | None = None
        self._error: BaseException | None = None
        # The call goes to the thread, which lets go of it once run: kept here, a call bound
        # to what keeps this Pending (Reads, Instances) would make a cycle holding the whole
        # read's objects until a garbage collection, rare in a run (cli/collector.py): a
        # followed view grew by every read's objects.
        self._thread = start_daemon(self._run, call)

    def _run(self, call: Callable[[], T]) -> None:
        with _slots if self._slot else nullcontext():
            try:
                self._value = (call(),)
            except BaseException as err:  # handed to the caller, who decides
                self._error = err

    def result(self) -> T:
        while self._thread.is_alive():
            # In slices: a signal that lands just before a join blocks is handled within
            # SLICE, not once the call ends (with no request timeout, 90 s of silence later).
            self._thread.join(SLICE)
        if self._error is not None:
            raise self._error
        assert self._value is not None  # the call returned: it did not raise
        return self._value[0]
