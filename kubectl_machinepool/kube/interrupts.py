"""SIGINT, SIGTERM and SIGHUP: never leave the cluster in a state nobody is told about.

Outside the writes, SIGTERM (a supervisor, `kill`) and SIGHUP (the terminal went away) stop a
run exactly as Ctrl-C does: raised as a KeyboardInterrupt where the run is, so every wait and
plan that says what it leaves on Ctrl-C says the same on them; only the exit code differs.
During writes, a signal during a request abandons it (its outcome is then read back); a signal
before one stops before it is sent; while the state is worked out and taken back, further
signals wait, and a second one gives up at once with what is known. A signal the run was
started ignoring (nohup's SIGHUP, a background job's SIGINT) stays ignored.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from kubectl_machinepool.base.errors import ExitCode, Interrupted

# The signals that stop a run, each with the exit code a shell reports for a death by it.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_EXIT_CODES: dict[int, ExitCode] = {
    signal.SIGINT: ExitCode.INTERRUPTED,
    signal.SIGTERM: ExitCode.TERMINATED,
    signal.SIGHUP: ExitCode.HANGUP,
}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP outside the writes, raised where Python raises KeyboardInterrupt for
    SIGINT: whatever stops cleanly on Ctrl-C stops the same way on these."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def stopped_by(err: BaseException | None) -> int:
    """The signal a KeyboardInterrupt stands for: Terminated's own, else SIGINT."""
    return err.signum if isinstance(err, Terminated) else signal.SIGINT


def _terminate(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


def _install(signums: tuple[int, ...], handler: Any) -> dict[int, Any]:
    """handler for each signal not ignored; the handlers it replaced, to restore."""
    saved: dict[int, Any] = {}
    for signum in signums:
        if signal.getsignal(signum) is signal.SIG_IGN:
            continue
        try:
            saved[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread: signals stay as they are
            break
    return saved


def _restore(saved: dict[int, Any]) -> None:
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@contextmanager
def like_ctrl_c() -> Iterator[None]:
    """For one run: SIGTERM and SIGHUP raised as Terminated, which ends the run as Ctrl-C
    does, instead of killing the process before it says what it leaves."""
    saved = _install((signal.SIGTERM, signal.SIGHUP), _terminate)
    try:
        yield
    finally:
        _restore(saved)


@contextmanager
def before_writes() -> Iterator[None]:
    """Planning a write: a stopping signal ends the command saying that nothing was written."""
    try:
        yield
    except KeyboardInterrupt as err:
        signum = stopped_by(err)
        said = f"{signal_name(signum)} before any write: nothing was written"
        raise Interrupted(exit_code(signum), said) from None


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
    return _EXIT_CODES.get(signum, ExitCode.INTERRUPTED)


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


class Signals:
    """The stopping signals while writing: a request in flight is abandoned (its outcome is
    then read back), and further signals wait while the state is worked out and taken back."""

    def __init__(self) -> None:
        self.received: int | None = None
        # Working out the state after a failure or a first signal: a second signal gives up.
        self.settling = False
        self._armed = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> Signals:
        self._saved = _install(STOPPING, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        _restore(self._saved)

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
