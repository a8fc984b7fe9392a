"""kube/interrupts.Signals: a signal handled just before a request goes out stops it from going
out, wherever between the two looks it lands (a request with no timeout would wait forever)."""

from __future__ import annotations

import signal

import pytest

from kubectl_machinepool.kube.interrupts import Signals, Stop


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
