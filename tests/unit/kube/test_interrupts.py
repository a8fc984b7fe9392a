"""kube/interrupts: a signal handled just before a request goes out stops it from going out,
wherever between the two looks it lands (a request with no timeout would wait forever); SIGTERM
and SIGHUP stop a run as Ctrl-C does, with their own exit codes."""

from __future__ import annotations

import signal

import pytest

from kubectl_machinepool.base.errors import Interrupted
from kubectl_machinepool.kube.interrupts import (
    STOPPING,
    Signals,
    Stop,
    before_writes,
    exit_code,
    like_ctrl_c,
    signal_name,
    stopped_by,
)


class ArrivesWhileArming(Signals):
    """received reads None once (the first look), then the signal: as if it was handled
    between that look and arming, when the handler only records it."""

    def __init__(self) -> None:
        self.looks = 0
        super().__init__()

    @property  # type: ignore[override]
    def received(self) -> int | None:
        self.looks += 1
        return None if self.looks == 1 else signal.SIGINT

    @received.setter
    def received(self, _value: int | None) -> None:
        pass


def test_a_signal_recorded_while_arming_stops_the_request() -> None:
    signals = ArrivesWhileArming()
    sent = []
    with pytest.raises(Stop) as stopped, signals.sending():
        sent.append("request")
    assert sent == []
    assert (stopped.value.signum, stopped.value.sent) == (signal.SIGINT, False)


def test_a_signal_before_sending_stops_it_and_one_during_is_raised_there() -> None:
    signals = Signals()
    signals.received = signal.SIGTERM
    with pytest.raises(Stop) as before, signals.sending():
        pass
    assert (before.value.signum, before.value.sent) == (signal.SIGTERM, False)
    fresh = Signals()
    with pytest.raises(Stop) as during, fresh.sending():
        fresh._handle(signal.SIGINT, None)
    assert (during.value.signum, during.value.sent) == (signal.SIGINT, True)


def test_sigterm_and_sighup_stop_a_run_as_ctrl_c_with_their_exit_codes() -> None:
    """Raised as KeyboardInterrupt where the run is, so whatever says what it leaves on Ctrl-C
    says it on these; the handlers before are back afterwards."""
    before = {s: signal.getsignal(s) for s in STOPPING}
    for signum, code, name in ((signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")):
        with pytest.raises(KeyboardInterrupt) as stopped, like_ctrl_c():
            signal.raise_signal(signum)
        assert stopped_by(stopped.value) == signum
        assert (exit_code(signum), signal_name(signum)) == (code, name)
    assert {s: signal.getsignal(s) for s in STOPPING} == before
    assert (stopped_by(KeyboardInterrupt()), exit_code(signal.SIGINT)) == (signal.SIGINT, 130)


def test_a_signal_ignored_when_the_run_began_stays_ignored() -> None:
    """nohup's SIGHUP: neither the run nor the write engine takes it back."""
    saved = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with like_ctrl_c(), Signals():
            signal.raise_signal(signal.SIGHUP)
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, saved)


def test_a_signal_while_planning_says_nothing_was_written() -> None:
    with pytest.raises(Interrupted) as stopped, like_ctrl_c(), before_writes():
        signal.raise_signal(signal.SIGHUP)
    assert stopped.value.exit_code == 129
    assert stopped.value.report == "SIGHUP before any write: nothing was written"
