"""A followed view (list -w) against the real API server through the fault proxy, when its watch
of the MachinePools is answered 410 Gone again and again, or held silent.

In-process (support.run.run_cli), so that the backoff's sleeps can be recorded instead of slept,
and the stale-view threshold made short (the follow watches' module constants); what the
command says goes to the test as it says it (Environment.warn and out, teed), and Ctrl-C comes
while the view waits for a change, where a terminal's would find it nearly always (anywhere
else, in a process that goes on, it could leave a half-made connection behind).
"""

from __future__ import annotations

import copy
import itertools
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.faultproxy import Fault, FaultProxy, Injection, Seen, fault_proxy
from support.management import ManagementCluster
from support.run import run_cli

from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube import changes
from kubectl_machinepool.kube import watch as kubewatch

# Each wait here is for something the command does on its own within seconds; the bound only
# turns a broken build into a failure instead of a hang.
BOUND = 120.0
GONE_TIMES = 8


@pytest.fixture
def proxied(v1beta2: ManagementCluster, tmp_path: Path) -> Iterator[tuple[FaultProxy, Path]]:
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path / "proxy") as proxy:
        yield proxy, proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)


class Said:
    """Every line the command writes (out) or warns, as it does, for a thread to act on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        out, warn = Environment.out, Environment.warn

        def teed_out(env: Environment, text: str, **kwargs: Any) -> None:
            out(env, text, **kwargs)
            for line in text.splitlines():
                self.lines.put(line)

        def teed_warn(env: Environment, message: str) -> None:
            warn(env, message)
            self.lines.put(f"warning: {message}")

        monkeypatch.setattr(Environment, "out", teed_out)
        monkeypatch.setattr(Environment, "warn", teed_warn)

    def until(self, wanted: Callable[[str], bool]) -> str | None:
        """The first line from now on that is wanted (None: none within BOUND)."""
        try:
            while not wanted(line := self.lines.get(timeout=BOUND)):
                pass
        except queue.Empty:
            return None
        return line


class CtrlC:
    """press(): the command's next wait for a change ends in KeyboardInterrupt, as Ctrl-C."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pressed = threading.Event()
        wait = changes.Changes.wait

        def interruptible(follower: changes.Changes, timeout: float | None) -> bool:
            end = None if timeout is None else time.monotonic() + timeout
            while not self.pressed.is_set():
                step = 0.1 if end is None else min(0.1, max(end - time.monotonic(), 0.0))
                if wait(follower, step):
                    return True
                if end is not None and time.monotonic() >= end:
                    return False
            raise KeyboardInterrupt

        monkeypatch.setattr(changes.Changes, "wait", interruptible)

    def press(self) -> None:
        self.pressed.set()


def about_machinepools(line: str) -> bool:
    """A notice naming the MachinePools' watch (not only the AzureMachinePools')."""
    named = re.search(r" about ([a-z., ]+?) (?:for|after) ", line)
    return named is not None and "machinepools" in named.group(1).split(", ")


def test_a_watch_answered_410_again_and_again_backs_off(
    v1beta2, vmss, proxied, capsys, monkeypatch, tmp_path: Path
) -> None:
    """Every watch of the MachinePools answered 410 Gone, GONE_TIMES in a row: the watch lists
    again at once after the first, then waits 0.8 s, doubling; after WATCH_RETRIES+1 it gives
    up and starts over, going on with the same backoff (with no pause, a describe -w made
    about 13 requests a second of this). Counted by the sleeps it asks for (recorded, not
    slept, jitter left out) and the requests the proxy saw."""
    namespace, _ = vmss
    proxy, kubeconfig = proxied
    slept: list[float] = []

    def recorded(heard: Callable[[], None], **_: Any) -> kubewatch.Health:
        return kubewatch.Health(heard, jitter=lambda: 0.0, sleep=slept.append)

    monkeypatch.setattr(changes, "Health", recorded, raising=False)
    monkeypatch.setattr(changes, "RESTART", 0.0)
    # Watches the server ends each second: none is still held upstream when the proxy closes.
    monkeypatch.setattr(changes, "WINDOW", 1.0)
    pools = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/machinepools"

    def pool_watch(seen: Seen) -> bool:
        return seen.path == pools and "watch" in seen.params

    proxy.arm(Injection(Fault.GONE, match=pool_watch, times=GONE_TIMES))
    counted = itertools.count(1)
    answered: list[int] = []

    def first_answered(seen: Seen) -> bool:
        if pool_watch(seen) and next(counted) == GONE_TIMES + 1:
            answered.append(seen.index)
            return True
        return False

    through = proxy.arrival(first_answered)
    ctrl_c = CtrlC(monkeypatch)
    watcher = threading.Thread(target=lambda: (through.wait(BOUND), ctrl_c.press()), daemon=True)
    watcher.start()
    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(kubeconfig), "-w")
    watcher.join()
    assert result.code == 130, result.err
    assert "Traceback" not in result.err
    assert answered, "the watch never got past the 410s"
    assert slept == [0.8, 1.6, 3.2, 6.4, 12.8]
    # Up to the first watch let through: each watch after a list of its own (the view's
    # reads page their lists, with a limit), nothing more.
    seen = [s for s in proxy.log if s.index <= answered[0] and s.path == pools]
    assert len([s for s in seen if "watch" in s.params]) == GONE_TIMES + 1
    assert len([s for s in seen if not ({"watch", "limit"} & set(s.params))]) == GONE_TIMES + 1


def test_a_silent_watch_says_the_view_may_be_stale_until_it_answers_again(
    v1beta2, vmss, proxied, capsys, monkeypatch
) -> None:
    """Every watch of the MachinePools held by the proxy, unanswered, until the client gives
    up on it: once no word has come for WINDOW + SLACK (here 1 s + 4 s) the command warns
    that the view may be stale, and goes on asking; a change made meanwhile shows only once
    the proxy lets the watch through, after a line saying the server answers again."""
    namespace, objects = vmss
    proxy, kubeconfig = proxied
    monkeypatch.setattr(changes, "WINDOW", 1.0)
    monkeypatch.setattr(changes, "SLACK", 4.0, raising=False)
    said = Said(monkeypatch)
    ctrl_c = CtrlC(monkeypatch)
    pools = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/machinepools"
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    proxy.arm(
        Injection(Fault.STALL, match=lambda s: s.path == pools and "watch" in s.params, times=1000)
    )

    def operator() -> None:
        try:
            if said.until(lambda line: "may be stale" in line and about_machinepools(line)):
                changed = copy.deepcopy(pool)
                changed["status"]["phase"] = "Running"
                v1beta2.api.set_status(changed)
                proxy.arm()  # let the watches through
                said.until(lambda line: "answers again" in line and about_machinepools(line))
                said.until(lambda line: line.split()[:1] == ["vmss-workers"] and "Running" in line)
        finally:
            ctrl_c.press()

    thread = threading.Thread(target=operator, daemon=True)
    thread.start()
    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(kubeconfig), "-w")
    thread.join()
    assert result.code == 130, result.err
    warnings = result.err.splitlines()
    notices = [i for i, w in enumerate(warnings) if "may be stale" in w and about_machinepools(w)]
    assert notices, result.err
    stale = notices[0]
    assert re.fullmatch(
        r"warning: no word from the API server of context 'fault-proxy' \(https://127\.0\.0\.1:"
        r"\d+\) about machinepools(, azuremachinepools)? for \d+s; the view may be stale "
        r"\(reconnecting\)",
        warnings[stale],
    )
    assert any("answers again" in w and about_machinepools(w) for w in warnings[stale + 1 :])
    assert any(s.path == pools and "watch" in s.params and s.forwarded for s in proxy.log)
    rows = result.out.splitlines()
    assert rows[-1].split()[0] == "vmss-workers"
    assert "Running" in rows[-1].split()
    assert not any("Running" in row.split() for row in rows[:-1])
