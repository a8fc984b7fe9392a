"""SIGINT and SIGTERM while writing: never leave the cluster in a state nobody is told about.

A signal during a request abandons it (its outcome is then read back); a signal before one stops
before it is sent; while the state is worked out and taken back, further signals wait, and a
second one gives up at once with what is known.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from kubectl_machinepool.base.errors import ExitCode


class Abandon(BaseException):
    """A second signal while the state was being worked out: stop at once."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Stop(BaseException):
    def __init__(self, signum: int, sent: bool) -> None:
        super().__init__(signum)
        self.signum = signum
        # False when the signal was already pending before the request went out.
        self.sent = sent


def exit_code(signum: int) -> ExitCode:
    return ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED


def signal_name(signum: int) -> str:
    return "SIGTERM" if signum == signal.SIGTERM else "SIGINT"


class Signals:
    """SIGINT and SIGTERM while writing: a request in flight is abandoned (its outcome is then
    read back), and further signals wait while the state is worked out and taken back."""

    def __init__(self) -> None:
        self.received: int | None = None
        # Working out the state after a failure or a first signal: a second signal gives up.
        self.settling = False
        self._armed = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> Signals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._saved[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread: signals stay as they are
                break
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        again = self.received is not None
        if not again:
            self.received = signum
        if self._armed:
            self._armed = False
            raise Stop(signum, sent=True)
        if again and self.settling:
            raise Abandon(signum)

    def _pending(self) -> int | None:
        """The signal received so far; read afresh each time (the handler may set it)."""
        return self.received

    @contextmanager
    def sending(self) -> Iterator[None]:
        if (early := self._pending()) is not None:
            raise Stop(early, sent=False)
        self._armed = True
        # A signal handled between the look above and arming only recorded itself: without
        # this second look the request would go out, and with no request timeout wait forever.
        if (late := self._pending()) is not None:
            self._armed = False
            raise Stop(late, sent=False)
        try:
            yield
        finally:
            self._armed = False
