"""Many runs of the plugin under injected faults, spread over worker processes.

A cell is one run: a command, a scenario, and at most one fault at one request index. Each
worker process imports the plugin once and runs it in-process (cli.main with its error boundary,
as support.run.run_cli does), against its own fault proxy per API server and its own scenario
namespaces: a namespace serves run after run while they leave its content unchanged, and is
replaced by a fresh one once a run changed it. Stalls make a run wait for the request timeout;
with several workers the waits overlap, which keeps the matrix at minutes.

Workers are started with "spawn" (the parent runs proxy and server threads, which fork would
copy mid-flight) and die with the test process (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import gc
import io
import multiprocessing
import os
import re
import signal
import ssl
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .controlplane import User
from .faultproxy import Fault, FaultProxy, Injection, Paging, Seen, Upstream
from .faultstate import (
    Collection,
    FastKubeAPI,
    Loaded,
    ObjectKey,
    Snapshot,
    changes,
    delete_nodes,
    load_through_proxy,
    namespaced_collections,
    normalized,
    observe_held,
    put_back,
)
from .kinds import Kinds

PR_SET_PDEATHSIG = 1
# How long the interrupter waits for the plugin to be waiting for the held answer.
WAITING = 10.0
# How long a cell may still run once it is waited for: a bound on a hang, never a measure.
CELL_GUARD = 300.0
# How long close() lets a worker finish before killing it.
CLOSE_WAIT = 30.0


@dataclass(frozen=True)
class Server:
    """What a worker needs to reach one test API server as its admin."""

    generation: str
    port: int
    ca_file: Path
    admin: User


@dataclass(frozen=True)
class Cell:
    generation: str
    scenario: str
    # The command line without -n and --kubeconfig, which the worker adds.
    argv: tuple[str, ...]
    fault: Fault | None = None
    # The faulted request's place in the clean run, for reports; which request it is, is
    # `request`: the plugin reads several kinds side by side, so arrival order varies.
    index: int | None = None
    # The request's label (Outcome.label) and which of the requests with that label it is.
    request: tuple[str, int] | None = None
    # Page size the proxy asks for on namespaced lists, so that continue tokens are walked.
    paging: int | None = None
    # A read command: the worker also keeps the output of a clean run in the same namespace.
    read_only: bool = False
    # SIGINT to the plugin when the faulted request arrives (it runs with no request timeout,
    # so the signal, not a timeout, ends the request).
    interrupt: bool = False


def creates(seen: Seen) -> bool:
    return seen.method == "POST" and not seen.path.endswith("accessreviews")


def changes_state(seen: Seen) -> bool:
    """A request that can change what the server stores (an access review stores nothing)."""
    return creates(seen) or seen.method in {"PUT", "PATCH", "DELETE"}


@dataclass(frozen=True)
class Outcome:
    cell: Cell
    code: int
    out: str
    err: str
    namespace: str
    salt: str
    log: tuple[Seen, ...]
    before: Snapshot
    changed: dict[ObjectKey, tuple[dict[str, Any] | None, dict[str, Any] | None]]
    # Read cells: stdout of a fault-free run of the same command in the same namespace.
    clean_out: str | None
    proxy_errors: tuple[str, ...]
    seconds: float

    def generic(self, text: str) -> str:
        """Text with this run's namespace and salt replaced, comparable across namespaces."""
        return _generic(text, self.namespace, self.salt)

    def label(self, index: int) -> str:
        """`METHOD path?query` of request #index, namespace-free, continue tokens elided."""
        if index > len(self.log):
            return "<not sent>"
        return generic_label(self.log[index - 1], self.namespace, self.salt)

    def request(self, index: int) -> tuple[str, int]:
        """Request #index as a cell names it: its label, and the how-manieth with that label."""
        label = self.label(index)
        return label, sum(1 for i in range(1, index + 1) if self.label(i) == label)

    @property
    def fired(self) -> Seen | None:
        return next((s for s in self.log if s.fault is not None), None)

    @property
    def forwarded_writes(self) -> list[Seen]:
        return [
            s
            for s in self.log
            if changes_state(s) and s.forwarded and 200 <= (s.upstream_status or 0) < 300
        ]


def _generic(text: str, namespace: str, salt: str) -> str:
    text = text.replace(namespace, "{ns}")
    return text.replace(salt, "{salt}") if salt else text


def generic_label(seen: Seen, namespace: str, salt: str) -> str:
    """`METHOD path?query`, namespace-free, continue tokens elided."""
    text = _generic(f"{seen.method} {seen.target}", namespace, salt)
    return re.sub(r"continue=[^&]*", "continue=…", text)


def _nth(request: tuple[str, int], namespace: str, salt: str) -> Callable[[Seen], bool]:
    """A match for the proxy: true for the occurrence-th request with this label. The proxy
    asks it under its lock, once per arriving request until it fires."""
    label, occurrence = request
    count = 0

    def match(seen: Seen) -> bool:
        nonlocal count
        if generic_label(seen, namespace, salt) != label:
            return False
        count += 1
        return count == occurrence

    return match


def _namespaced(seen: Seen) -> bool:
    return "/namespaces/" in seen.path


def invoke(argv: list[str]) -> tuple[int, str, str]:
    """cli.main in this process, like run_cli: exit code, stdout, stderr. An exception that
    escapes the error boundary is a bug; its traceback goes to stderr, the code is -1."""
    from kubectl_machinepool.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as exited:
            code = exited.code if isinstance(exited.code, int) else 0
        except BaseException:  # reported as a traceback, which fails the cell
            traceback.print_exc()
            code = -1
    gc.collect(1)  # as run_cli does: what the command left in cycles fails this cell's test
    return code, out.getvalue(), err.getvalue()


@dataclass
class _Site:
    """One API server as one worker sees it: its proxy, its namespaces, clean outputs."""

    server: Server
    workdir: Path
    api: FastKubeAPI = field(init=False)
    collections: list[Collection] = field(init=False)
    proxy: FaultProxy = field(init=False)
    kubeconfig: Path = field(init=False)
    loaded: dict[str, Loaded] = field(default_factory=dict)
    # The kinds each scenario's first namespace held, found by listing every kind the server
    # serves: its next namespaces hold the same (no controller runs to make others), so only
    # these are listed when they are made.
    kinds: dict[str, list[Collection]] = field(default_factory=dict)
    clean: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    # The next namespace per scenario, made in the background while runs go on.
    spares: dict[str, Future[Loaded]] = field(default_factory=dict)
    _maker: ThreadPoolExecutor = field(init=False)
    _maker_api: FastKubeAPI = field(init=False)

    def __post_init__(self) -> None:
        context = ssl.create_default_context(cafile=str(self.server.ca_file))
        context.load_cert_chain(str(self.server.admin.cert), str(self.server.admin.key))
        self.api = FastKubeAPI("127.0.0.1", self.server.port, context, Kinds())
        self._maker_api = FastKubeAPI("127.0.0.1", self.server.port, context, Kinds())
        self._maker = ThreadPoolExecutor(1, thread_name_prefix="namespace-maker")
        self.collections = namespaced_collections(self.api)
        self.proxy = FaultProxy(
            Upstream("127.0.0.1", self.server.port, context), self.workdir / "proxy"
        ).start()
        self.kubeconfig = self.proxy.write_kubeconfig(
            self.workdir / "proxy.kubeconfig", self.server.admin
        )

    def _make(self, scenario: str) -> Loaded:
        return load_through_proxy(
            self._maker_api,
            self.server.generation,
            self.proxy,
            self.server.admin,
            scenario,
            self.kinds.get(scenario, self.collections),
        )

    def namespace(self, scenario: str) -> Loaded:
        if scenario not in self.kinds:
            # The pool serves every matrix module of the run, and a module may add kinds
            # (CRDs) for its scenarios before its first cell: list them again for each new one.
            self.collections = namespaced_collections(self.api)
        if scenario not in self.loaded:
            spare = self.spares.pop(scenario, None) or self._maker.submit(self._make, scenario)
            self.loaded[scenario] = spare.result()
            self.kinds.setdefault(scenario, list(self.loaded[scenario].present))
            self.spares[scenario] = self._maker.submit(self._make, scenario)
        return self.loaded[scenario]

    def _settle(self, cell: Cell, loaded: Loaded, changed: dict[Any, Any], held: Snapshot) -> None:
        """Keep the namespace for the next run if it holds what it held, else drop it. `held`
        is the namespace as the run left it; what is written back is updated in it."""
        if not changed:
            return
        answers = put_back(self.api, self.collections, changed)
        # Only the objects written back moved since `held` was listed (the run has ended, its
        # late writes delivered): the server's answers are what it holds of them now.
        if answers is not None and all(
            normalized(obj) == loaded.objects.get(key) for key, obj in answers.items()
        ):
            held.update(answers)
            return
        del self.loaded[cell.scenario]
        delete_nodes(self.api, loaded)

    def _clean_output(self, cell: Cell, argv: list[str], namespace: str) -> str | None:
        key = (namespace, cell.argv)
        if key not in self.clean:
            self.proxy.arm()
            # Unbounded: a busy machine must not spoil the output the faulted runs are held to.
            unbounded = [*argv]
            if TIMEOUT_FLAG in unbounded:
                unbounded[unbounded.index(TIMEOUT_FLAG) + 1] = "0"
            code, out, _ = invoke(unbounded)
            self.clean[key] = out if code == 0 else ""
        return self.clean[key]

    def run(self, cell: Cell) -> Outcome:
        loaded = self.namespace(cell.scenario)
        argv = [*cell.argv, "-n", loaded.namespace, "--kubeconfig", str(self.kubeconfig)]
        clean_out = self._clean_output(cell, argv, loaded.namespace) if cell.read_only else None
        injection = None
        if cell.fault and cell.request:
            match = _nth(cell.request, loaded.namespace, loaded.salt)
            injection = Injection(cell.fault, match=match)
        elif cell.fault:
            injection = Injection(cell.fault, index=cell.index)
        paging = Paging(cell.paging, _namespaced) if cell.paging else None
        self.proxy.arm(injection, paging)
        _after_their_second(loaded)
        interrupter = _Interrupter(self.proxy) if cell.interrupt else None
        started = time.monotonic()
        code, out, err = invoke(argv)
        seconds = time.monotonic() - started
        if interrupter is not None:
            interrupter.stop()
        # A write held past the client's timeout goes to the server now: whatever the command
        # reported must hold after it too.
        self.proxy.deliver_late()
        log = tuple(self.proxy.log)
        # Every request of the plugin passed the proxy (the workload Secret points there too):
        # a read run that sent nothing that changes state left the namespace as it was.
        wrote = any(changes_state(s) and s.forwarded for s in log)
        changed = {}
        held: Snapshot = {}
        if wrote or not cell.read_only:
            created = any(creates(s) and s.forwarded for s in log)
            held = loaded.listing(self.api, self.collections, created=created)
            changed = changes(loaded.objects, {k: normalized(o) for k, o in held.items()})
        self._settle(cell, loaded, changed, held)
        if wrote and cell.scenario in self.loaded:
            observe_held(self.api, self.collections, held)
        return Outcome(
            cell,
            code,
            out,
            err,
            loaded.namespace,
            loaded.salt,
            log,
            loaded.objects,
            changed,
            clean_out,
            tuple(self.proxy.errors),
            seconds,
        )


def _after_their_second(loaded: Loaded) -> None:
    """Start in a later second than the namespace's objects were made, as a user's command
    does: the API server stamps creation in whole seconds, and rollout restart counts an
    instance made in the second it begins as new."""
    stamps = [obj.get("metadata", {}).get("creationTimestamp") for obj in loaded.objects.values()]
    made = max((datetime.fromisoformat(t) for t in stamps if isinstance(t, str)), default=None)
    while made is not None and datetime.now(UTC) < made + timedelta(seconds=1):
        time.sleep(0.05)


class _Interrupter:
    """Sends this process SIGINT when the faulted request arrives, as Ctrl-C would: the plugin
    runs in the main thread (the signal's handler runs there), the proxy in others."""

    def __init__(self, proxy: FaultProxy) -> None:
        self._arrived = proxy.arrival(lambda seen: seen.fault is not None)
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="interrupter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._finished.is_set():
            if self._arrived.wait(0.05):
                self._until_waiting_for_the_answer()
                # To the plugin's thread, as a terminal's Ctrl-C reaches the plugin alone: sent
                # to the process, the kernel may hand it to a proxy thread, where it only sets
                # a flag, and a request without timeout in the main thread never returns.
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                return

    def _until_waiting_for_the_answer(self) -> None:
        """Until the plugin waits for the held request's answer (what a user sees hang before
        pressing Ctrl-C), at most WAITING seconds: the proxy sees the request as soon as its
        bytes arrive, which can be before the plugin's main thread reaches the read."""
        main = threading.main_thread().ident
        deadline = time.monotonic() + WAITING
        while time.monotonic() < deadline and not self._finished.is_set():
            frame = sys._current_frames().get(main or 0)
            while frame is not None and frame.f_code.co_name != "getresponse":
                frame = frame.f_back
            if frame is not None:
                return
            time.sleep(0.01)

    def stop(self) -> None:
        self._finished.set()
        self._thread.join()


class _Worker:
    def __init__(self, servers: tuple[Server, ...], workdir: Path) -> None:
        self.servers = {s.generation: s for s in servers}
        self.workdir = workdir
        self.sites: dict[str, _Site] = {}

    def run(self, cell: Cell) -> Outcome:
        if cell.generation not in self.sites:
            self.sites[cell.generation] = _Site(
                self.servers[cell.generation], self.workdir / cell.generation
            )
        return self.sites[cell.generation].run(cell)


# This process's worker, once it is one.
_WORKER: dict[str, _Worker] = {}


def _start_worker(servers: tuple[Server, ...], workdir: str) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _WORKER["worker"] = _Worker(servers, Path(workdir) / f"worker-{os.getpid()}")


def _run_cell(cell: Cell) -> Outcome:
    return _WORKER["worker"].run(cell)


SLOW_RERUNS = 4
TIMEOUT_FLAG = "--request-timeout"


def _timeout_of(cell: Cell) -> float | None:
    """The cell's --request-timeout in seconds ("1s", "2s", ...); None: none or unbounded."""
    argv = list(cell.argv)
    if TIMEOUT_FLAG not in argv:
        return None
    value = argv[argv.index(TIMEOUT_FLAG) + 1]
    seconds = float(value.removesuffix("s"))
    return seconds or None


def _slower(cell: Cell) -> Cell:
    argv = list(cell.argv)
    at = argv.index(TIMEOUT_FLAG) + 1
    argv[at] = f"{2 * (_timeout_of(cell) or 0):g}s"
    return replace(cell, argv=tuple(argv))


def _spoiled(outcome: Outcome) -> bool:
    """Spoiled by a busy machine, not by the plugin: only a bounded request could time out."""
    if _timeout_of(outcome.cell) is None:
        return False
    if outcome.cell.fault is None:
        return outcome.code != 0
    return outcome.fired is None


class Matrix:
    """A pool of worker processes running cells; results come back in cell order."""

    def __init__(self, servers: list[Server], workdir: Path, workers: int) -> None:
        self.slow_reruns = 0
        self._executor = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(tuple(servers), str(workdir)),
        )

    def run(self, cells: list[Cell]) -> list[Outcome]:
        """Each cell's outcome. A run that the machine's speed spoiled (a request timed out
        before the fault was reached, or a fault-free run failed) is run again with the
        request timeout doubled, up to SLOW_RERUNS times: a cell's verdict never depends on
        how busy the machine is, only the time it takes."""
        outcomes = self._results(cells)
        for _ in range(SLOW_RERUNS):
            spoiled = [i for i, o in enumerate(outcomes) if _spoiled(o)]
            if not spoiled:
                break
            self.slow_reruns += len(spoiled)
            again = self._results([_slower(outcomes[i].cell) for i in spoiled])
            for i, outcome in zip(spoiled, again, strict=True):
                outcomes[i] = outcome
        return outcomes

    def _results(self, cells: list[Cell]) -> list[Outcome]:
        """The cells' outcomes in order; a cell that has not ended CELL_GUARD after its turn
        to be waited for fails the test naming it, instead of holding the run forever."""
        futures = [self._executor.submit(_run_cell, cell) for cell in cells]
        outcomes = []
        for cell, future in zip(cells, futures, strict=True):
            try:
                outcomes.append(future.result(timeout=CELL_GUARD))
            except TimeoutError:
                for waiting in futures:
                    waiting.cancel()
                raise AssertionError(
                    f"a run never ended (its worker is killed at close): {cell}"
                ) from None
        return outcomes

    def close(self) -> None:
        processes = list(getattr(self._executor, "_processes", {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        # A cell that never ended (the test failed on it already) must not hold the run.
        for process in processes:
            process.join(CLOSE_WAIT)
            if process.is_alive():
                process.kill()
                process.join()
