"""Calls run in forked child processes, at most N at once, each result handed back in order as
soon as it and every call before it are done.

Why processes: decoding and judging a context's objects is CPU-bound Python, and threads take
turns under the interpreter lock: a fleet read by threads used one core. Why fork: a child
starts with the parent's imports and the call's closure as they are (nothing to pickle, no
second start-up), and sends back only its compact result, so each context's objects go away
with its child and the parent holds only results.

Fork is safe here because the parent forks before it has started a thread or opened a
connection: the fleet forks straight after reading the kubeconfig.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

_CHUNK = 1 << 16
# How long an interrupted child may take to stop what it started before it is killed.
STOP_WAIT = 10.0
PR_SET_PDEATHSIG = 1


@dataclass
class _Child:
    pid: int
    fd: int
    data: bytearray = field(default_factory=bytearray)


def default_parallel() -> int:
    """The cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)))


def run_forked(
    calls: Sequence[Callable[[], T]], parallel: int, died: Callable[[int, str], T]
) -> Iterator[T]:
    """Each call's result, in the order of calls, with up to `parallel` children at once; a
    result is yielded as soon as it and every one before it are in.

    died(index, why) stands for the result of a call whose process ended without one (killed,
    out of memory). A call that raised in its child raises RuntimeError here, at its place,
    with the child's traceback: calls return their expected failures as values. However the
    caller stops (an error, Ctrl-C, not asking for more), every child still running is killed
    and reaped.
    """
    results: dict[int, tuple[bool, T | str]] = {}
    running: dict[int, _Child] = {}
    selector = selectors.DefaultSelector()
    started = 0
    try:
        for index in range(len(calls)):
            while index not in results:
                while started < len(calls) and len(running) < max(1, parallel):
                    running[started] = child = _fork(calls[started])
                    selector.register(child.fd, selectors.EVENT_READ, started)
                    started += 1
                for key, _ in selector.select():
                    child = running[key.data]
                    chunk = os.read(child.fd, _CHUNK)
                    if chunk:
                        child.data += chunk
                        continue
                    selector.unregister(child.fd)
                    del running[key.data]
                    results[key.data] = _ended(child, key.data, died)
            ok, value = results.pop(index)
            if not ok:
                raise RuntimeError(f"a forked call failed:\n{value}")
            yield value  # type: ignore[misc]  # ok: the call's own value
    finally:
        _stop(list(running.values()))
        selector.close()


def _fork(call: Callable[[], T]) -> _Child:
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _serve(call, write_end, parent)  # never returns
    os.close(write_end)
    return _Child(pid, read_end)


def _serve(call: Callable[[], T], fd: int, parent: int) -> None:
    code = 0
    try:
        _die_with_parent(parent)
        # Ctrl-C reaches a child from the terminal and from the parent (_stop): the first ends
        # the call, as it would in the parent, and the second must not cut its clean-up short.
        signal.signal(signal.SIGINT, _interrupt_once)
        try:
            payload = pickle.dumps((True, call()), pickle.HIGHEST_PROTOCOL)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # a bug: raised in the parent at this call's place
            payload = pickle.dumps((False, traceback.format_exc()), pickle.HIGHEST_PROTOCOL)
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:  # interrupted, or the parent stopped reading: no result
        code = 130
    finally:
        # Neither atexit handlers nor the parent's buffers: only the result leaves the child.
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """A parent killed outright (SIGKILL, SIGTERM) takes its children with it, instead of
    leaving them waiting on a silent server."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # it died before prctl took effect
            os._exit(1)


def _ended(child: _Child, index: int, died: Callable[[int, str], T]) -> tuple[bool, T | str]:
    os.close(child.fd)
    _, status = os.waitpid(child.pid, 0)
    if child.data and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        result: tuple[bool, T | str] = pickle.loads(bytes(child.data))
        return result
    if os.WIFSIGNALED(status):
        why = f"its process ended with {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        why = f"its process ended with exit code {os.WEXITSTATUS(status)} and no result"
    return True, died(index, why)


def _interrupt_once(_signum: int, _frame: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _stop(children: list[_Child]) -> None:
    """Interrupt each child as Ctrl-C would, so that what it started (a credential plugin) is
    stopped by its own clean-up; kill those still running STOP_WAIT later."""
    for child in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_WAIT
    for child in children:
        while os.waitpid(child.pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                break
            time.sleep(0.02)
        os.close(child.fd)
