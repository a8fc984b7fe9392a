"""The plugin run as users run it, signalled once it is at a point of its run: what
tests/integration/test_signal_matrix.py runs each cell with.

A lane is a fault proxy and, per scenario, a namespace reached through it: one no run has
changed is kept for the next run, else the next one is already being made. Lanes run side by
side, one cell each at a time.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from queue import Queue
from typing import IO

from .controlplane import installed_plugin
from .faultproxy import Fault, FaultProxy, Injection, Match
from .faultstate import Collection, FastKubeAPI, Loaded, changes, load_through_proxy, observe
from .kinds import Kinds
from .management import ManagementCluster

POOL = "dev-mp-0"
# The capd scenario with its pool's version set ahead of every instance: a rollout to wait for.
ROLLING = "capd-rolling"
LANES = int(os.environ.get("SIGNAL_MATRIX_LANES", "4"))
# A bound on a hang, never a measure: each wait below ends as soon as its event comes.
WAIT = 90.0
# What the kernel names the wait of a thread in time.sleep (rollout restart's pause).
SLEEPING = "hrtimer_nanosleep"
CHANGING = ("PATCH", "PUT", "DELETE")

# A request a point picks, from its namespace; called once per request, in arrival order.
Picker = Callable[[str], Match]


@dataclass(frozen=True)
class Point:
    name: str
    # What stderr says, whichever the signal ({signal}: its name).
    says: str
    # The request the run is at: held unanswered, or (hold False) let through.
    at: Picker | None = None
    hold: bool = True
    # "Go ahead?" on a terminal: the run is asked, not given --yes.
    prompt: bool = False
    # After the request: until the run sleeps (rollout restart's pause between reads).
    sleeping: bool = False
    # After the request: until the run has shown something (a followed view's first view).
    shown: bool = False


@dataclass(frozen=True)
class Command:
    name: str
    argv: tuple[str, ...]
    points: tuple[Point, ...]
    scenario: str = "capd"
    writes: bool = True  # given --yes, unless its point is the question


@dataclass
class Output:
    """A stream of the plugin read as it comes, in chunks (a prompt ends no line)."""

    text: str = ""
    changed: threading.Condition = field(default_factory=threading.Condition)
    ended: bool = False

    def read(self, stream: IO[bytes]) -> None:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            with self.changed:
                self.text += chunk.decode(errors="replace")
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def wait_for(self, words: str) -> bool:
        """Until the words are out (any text, for ""); False if the stream ended first."""
        with self.changed:
            self.changed.wait_for(lambda: (words in self.text and self.text) or self.ended, WAIT)
            return bool(words in self.text and self.text)


@dataclass(frozen=True)
class Run:
    command: Command
    point: Point
    signum: int
    code: int | None  # None: still running WAIT seconds after the signal (then killed)
    out: str
    err: str
    namespace: str
    salt: str
    left: tuple[str, ...]  # each object left changed, as the plugin names it
    reached: bool

    def generic(self, text: str) -> str:
        """Text with this run's namespace, salt, signal and times made alike."""
        text = text.replace(self.namespace, "{ns}").replace(self.salt, "{salt}")
        text = text.replace(signal.Signals(self.signum).name, "{signal}")
        return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "{time}", text)


def _sleeping(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/wchan").read_text() == SLEEPING
    except OSError:
        return False


class Lane:
    """A proxy, and per scenario a namespace reached through it that no run has changed, and
    the next one, made while runs go on."""

    def __init__(
        self, cluster: ManagementCluster, collections: list[Collection], workdir: Path
    ) -> None:
        self.cluster = cluster
        self.collections = collections
        self.workdir = workdir
        server = cluster.server
        self.proxy = FaultProxy.for_apiserver(server, server.admin, workdir).start()
        self.kubeconfig = self.proxy.write_kubeconfig(workdir / "kubeconfig", server.admin)
        self.api, self._maker_api = (
            FastKubeAPI("127.0.0.1", server.port, server.ssl_context(), Kinds()) for _ in "ab"
        )
        self._maker = ThreadPoolExecutor(1, thread_name_prefix="namespace-maker")
        self.unchanged: dict[str, Loaded] = {}
        self._spares: dict[str, Future[Loaded]] = {}

    def close(self) -> None:
        self._maker.shutdown(wait=True, cancel_futures=True)
        for api in (self.api, self._maker_api):
            api.close()
        self.proxy.close()

    def make(self, scenario: str, collections: list[Collection] | None = None) -> Loaded:
        api, shipped = self._maker_api, scenario.removesuffix("-rolling")
        admin, listed = self.cluster.server.admin, collections or self.collections
        loaded = load_through_proxy(api, "v1beta2", self.proxy, admin, shipped, listed)
        if scenario == ROLLING:
            pool = (
                f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{loaded.namespace}/machinepools/{POOL}"
            )
            version = {"spec": {"template": {"spec": {"version": "v1.34.1"}}}}
            api.request("PATCH", pool, version, "application/merge-patch+json")
            loaded = replace(loaded, objects=loaded.snapshot(api, listed, created=False))
        return loaded

    def _namespace(self, scenario: str) -> Loaded:
        loaded = self.unchanged.pop(scenario, None)
        if loaded is None:
            spare = self._spares.pop(scenario, None) or self._maker.submit(self.make, scenario)
            loaded = spare.result()
            self._spares[scenario] = self._maker.submit(self.make, scenario)
        return loaded

    def run(self, command: Command, point: Point, signum: int) -> Run:
        loaded = self._namespace(command.scenario)
        ns = loaded.namespace
        arrived = threading.Event()
        if point.at is not None and point.hold:
            self.proxy.arm(Injection(Fault.STALL, match=point.at(ns)))
            arrived = self.proxy.arrival(lambda seen: seen.fault is not None)
        else:
            self.proxy.arm()
            if point.at is not None:
                arrived = self.proxy.arrival(point.at(ns))
        argv = [*command.argv, "-n", ns, "--kubeconfig", str(self.kubeconfig)]
        argv += ["--request-timeout", "0"]  # the signal, not a timeout, ends a held request
        yes = command.writes and not point.prompt
        code, out, err, reached = self._signalled(argv, point, arrived, signum, yes=yes)
        wrote = any(s.method in CHANGING and s.upstream_status for s in self.proxy.log)
        self.proxy.arm()  # a held request goes nowhere: its connection closes unanswered
        left = changes(loaded.objects, loaded.snapshot(self.api, self.collections, created=False))
        if not left:
            if wrote:  # written and taken back: a controller would have seen the spec since
                observe(self.api, loaded)
            self.unchanged[command.scenario] = loaded
        names = tuple(sorted(k.display for k in left))
        return Run(command, point, signum, code, out, err, ns, loaded.salt, names, reached)

    def _signalled(
        self, argv: list[str], point: Point, arrived: threading.Event, signum: int, *, yes: bool
    ) -> tuple[int | None, str, str, bool]:
        """Run the plugin until it is at the point, send the signal, and wait for its end."""
        terminal, stdin = pty.openpty() if point.prompt else (None, subprocess.DEVNULL)
        process = subprocess.Popen(
            [str(installed_plugin()), *argv, *(["--yes"] if yes else [])],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "HOME": str(self.workdir), "PYTHONUNBUFFERED": "1"},
            cwd=self.workdir,
            start_new_session=True,  # the signal reaches the plugin alone
        )
        if isinstance(stdin, int) and stdin >= 0:
            os.close(stdin)
        out, err = Output(), Output()
        readers = [
            threading.Thread(target=o.read, args=(s,), daemon=True)
            for o, s in ((out, process.stdout), (err, process.stderr))
        ]
        for reader in readers:
            reader.start()
        code: int | None
        try:
            reached = self._reach(process, point, arrived, out, err)
            if reached:
                process.send_signal(signum)
            code = process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            for reader in readers:
                reader.join(WAIT)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
            if terminal is not None:
                os.close(terminal)
        return code, out.text, err.text, reached

    @staticmethod
    def _reach(
        process: subprocess.Popen[bytes],
        point: Point,
        arrived: threading.Event,
        out: Output,
        err: Output,
    ) -> bool:
        if point.prompt:
            return err.wait_for("Go ahead?")
        deadline = time.monotonic() + WAIT
        while not arrived.wait(0.05):
            if process.poll() is not None or time.monotonic() > deadline:
                return False
        if point.shown and not out.wait_for(""):
            return False
        while point.sleeping and not _sleeping(process.pid):
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True


def run_cells(lanes: Queue[Lane], cells: list[tuple[Command, Point, int]]) -> list[Run]:
    def one(cell: tuple[Command, Point, int]) -> Run:
        lane = lanes.get()
        try:
            return lane.run(*cell)
        finally:
            lanes.put(lane)

    with ThreadPoolExecutor(LANES) as pool:
        return list(pool.map(one, cells))


def open_lanes(
    cluster: ManagementCluster, every: list[Collection], workdirs: list[Path]
) -> list[Lane]:
    """A lane per work directory; the kinds each snapshot lists are those a scenario holds (no
    run creates one), as found by a first namespace listed whole."""
    made = [Lane(cluster, every, workdir) for workdir in workdirs]
    first = made[0].make("capd", every)
    made[0].unchanged["capd"] = first
    for lane in made:
        lane.collections = list(first.present)
    return made
