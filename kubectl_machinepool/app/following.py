"""Following a view live: read it, show it, and read it again whenever a watch says something it
shows changed (changes.py), until the caller says it is over, the timeout passes, or Ctrl-C.

The first read says what to watch; once the watches have their first answers the view is read
again and shown, so nothing that changed in between is missed (one read more than a single
view). Never a timer: a steady pool costs one watch request per kind per WINDOW, no LIST. Changes
that come together (an instance replaced: Machine, infra machine, Node) are read once, SETTLE
after the first. A read that fails after the first (an API server restarting) is reported and
tried again RETRY later; the first must succeed. A watch silent long enough to be stalled
(changes.py) is warned about, as the view may then be stale, and again when it is heard from,
and the view read again; a watch the API server refuses (RBAC without `watch`) is warned about
once, as that kind is then read again only every RESTART seconds. Library code: no click, no
printing.
"""

from __future__ import annotations

import contextlib
import ctypes
import time
from collections.abc import Callable
from typing import TypeVar

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.changes import RESTART, Changes, Silence, Watched
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.model.changes import Change

SETTLE = 1.0
RETRY = 5.0
# glibc's mallopt: at most this many malloc arenas (M_ARENA_MAX) for a followed view.
M_ARENA_MAX, FEW_ARENAS = -8, 2
# How long the watches may take to start before the view is shown anyway.
STARTING = 10.0
T = TypeVar("T")


def follow(
    access: AccessOptions,
    *,
    read: Callable[[], T],
    watches: Callable[[Kube, T], list[Watched]],
    show: Callable[[T, tuple[Change, ...]], bool],
    warn: Callable[[str], None],
    over: Callable[[T], bool] = lambda _: False,
    timeout: float | None = None,
    wake_in: Callable[[T], float | None] = lambda _: None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[bool, T]:
    """read() and show() until show() says it is over (True, and the last view) or timeout
    passes (False). over: whether a first view needs no following (shown once, then).
    wake_in: seconds after which the view must be read again even if nothing changed (a
    deadline of its own, as rollout status's stuck clock), None for never."""
    deadline = None if timeout is None else clock() + timeout
    _few_arenas()
    # Every read and watch of the run on one Kube: each read goes over the connections the
    # first opened, with what its discovery found and the workload clusters' connections.
    with Kube.kept(access) as kube:
        view = read()
        if over(view):
            show(view, ())
            return True, view
        changes = Changes()
        # The first read says what to watch; what changes while the watches start is in the
        # second, shown first.
        watched = watches(kube, view)
        for one in watched:
            changes.follow(one)
        try:
            changes.started(STARTING)
            _say_refused(changes, warn)  # before a short --timeout ends the run
            changes.take()
            view = read()
            if show(view, ()):
                return True, view
            # After a failed read the view is read again RETRY later, change or not: the
            # change that woke the failed read was taken with it.
            retry_at: float | None = None
            seen: tuple[Change, ...] = ()
            while True:
                now = clock()
                if deadline is not None and now >= deadline:
                    return False, view
                due = [w for w in (wake_in(view),) if w is not None]
                if deadline is not None:
                    due.append(deadline - now)
                if retry_at is not None:
                    due.append(retry_at - now)
                quiet = changes.quiet_in()
                waits = [*due, quiet] if quiet is not None else due
                changed = changes.wait(max(min(waits), 0.0) if waits else None)
                heard_again = _say_quiet(changes, warn)
                for_quiet = quiet is not None and all(quiet < d for d in due)
                if for_quiet and not (changed or heard_again):
                    continue  # woken only to say that a watch went silent: nothing new to read
                if changed:
                    time.sleep(SETTLE)
                seen = (*seen, *changes.take())
                try:
                    view = read()
                except MachinePoolError as err:
                    warn(f"cannot read now, trying again: {err.message}")
                    retry_at = clock() + RETRY
                    continue
                retry_at = None
                if show(view, seen):
                    return True, view
                seen = ()
        finally:
            changes.stop()


def _few_arenas() -> None:
    """glibc gives a thread that allocates while another holds the arena one of its own, up to
    eight per core, and each read runs in new threads: what one read freed stayed spread over
    them, and a followed view kept growing (50 to 72 MB over 5 minutes of churn in
    tests/benchmarks/watchsoak.py; one process reading the N=1000 pool 24 times: 62 to 84 MB,
    63 to 68 with two arenas). Where there is no glibc, nothing to do."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, FEW_ARENAS)


def _say_refused(changes: Changes, warn: Callable[[str], None]) -> None:
    for plural, message in changes.refused():
        warn(
            f"cannot watch {plural} ({message}); they are read again every {RESTART:.0f}s "
            "instead of when they change"
        )


def _say_quiet(changes: Changes, warn: Callable[[str], None]) -> bool:
    """Warn of the watches refused or gone silent, and of those heard again; whether any was
    heard again."""
    _say_refused(changes, warn)
    began, ended = changes.quiet()
    for silence in began:
        warn(
            f"no word from the API server of {silence.where} about {_plurals(silence)} for "
            f"{silence.seconds:.0f}s; the view may be stale (reconnecting)"
        )
    for silence in ended:
        warn(
            f"the API server of {silence.where} answers again about {_plurals(silence)} "
            f"after {silence.seconds:.0f}s without a word; the view is read again"
        )
    return bool(ended)


def _plurals(silence: Silence) -> str:
    return ", ".join(silence.plurals)
