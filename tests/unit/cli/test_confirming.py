"""The question every write asks on a terminal: click.confirm's answers, no unless said, asked
again on anything else; the end of input or a signal cancels with nothing written."""

from __future__ import annotations

import io
import os
import signal

import pytest

from kubectl_machinepool.base.errors import Interrupted
from kubectl_machinepool.cli.commands.confirming import confirmed
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.interrupts import like_ctrl_c


def asked(stdin: io.TextIOBase) -> Environment:
    return Environment(stdin, io.StringIO(), io.StringIO(), {}, True, False, None, True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("typed", "answer"),
    [("y\n", True), ("YES\n", True), ("n\n", False), ("\n", False), ("maybe\nyes\n", True)],
)
def test_the_answers_click_takes(typed: str, answer: bool, capsys) -> None:
    assert confirmed(False, asked(io.StringIO(typed))) is answer
    err = capsys.readouterr().err
    assert err.count("Go ahead? [y/N]: ") == typed.count("\n")
    assert ("Error: invalid input" in err) == ("maybe" in typed)


def test_the_end_of_input_cancels() -> None:
    with pytest.raises(Interrupted) as stopped:
        confirmed(False, asked(io.StringIO("")))
    assert (stopped.value.exit_code, stopped.value.report) == (
        130,
        "Cancelled: nothing was written.",
    )


def test_sigterm_while_the_answer_is_awaited_cancels_with_its_exit_code() -> None:
    """SIGTERM (sent by a timer 10 ms in) while a pipe no one writes to is waited on."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stdin, like_ctrl_c():
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
        try:
            with pytest.raises(Interrupted) as stopped:
                confirmed(False, asked(stdin))  # type: ignore[arg-type]
        finally:
            signal.signal(signal.SIGALRM, previous)
            os.close(write_end)
    assert (stopped.value.exit_code, stopped.value.report) == (
        143,
        "Cancelled: nothing was written.",
    )
