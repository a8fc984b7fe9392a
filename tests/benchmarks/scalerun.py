"""Running one measured command of the scale benchmark: wall time, peak RSS, API requests.

Requests come from the servers' audit logs: the bytes a log grew by while the command ran, cut
to the ResponseComplete events of the user the command authenticates as.

Peak RSS is the ru_maxrss of wait4, but taken by GNU time between this process and the command:
at exec Linux folds the RSS high-water mark of the exec'ing process (here, a fork of this
benchmark, which has held whole fleets) into the new program's ru_maxrss, so the command's own
figure needs a small process to be exec'd from.

CPU seconds: the command's (its children's included, from the same wait4), and the servers'
(every etcd and kube-apiserver this benchmark started, from /proc) while it ran. On a machine
whose cores the servers share, their sum over the cores bounds how fast a command can be.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

GNU_TIME = "/usr/bin/time"
USER = "admin"  # the kubeconfig user of every measured command, on both servers


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    expect: str  # a piece of the standard output that shows the command did its job
    # round: every round; reference: the first --reference-runs rounds; floor: tried in every
    # server-side mode first, the best mode then in every round; once: one run after the rounds
    # (too slow to repeat), under the timeout; warm: before anything, not counted.
    phase: str = "round"


@dataclass(frozen=True)
class Outcome:
    seconds: float
    rss_kib: int
    requests: Counter[str]  # "VERB resource" -> count, per server prefix
    timed_out: bool = False
    cpu: float = 0.0  # the command's user + system seconds
    server_cpu: float = 0.0  # the servers' and etcd's, while it ran

    @property
    def request_count(self) -> int:
        return sum(self.requests.values())


def _sizes(logs: dict[str, Path]) -> dict[str, int]:
    return {name: path.stat().st_size if path.exists() else 0 for name, path in logs.items()}


def _read_requests(logs: dict[str, Path], before: dict[str, int]) -> Counter[str]:
    """Requests since `before`, waiting until the logs stop growing: the last event of a
    request is written as its response goes out, a moment after the client has it."""
    sizes = _sizes(logs)
    for _ in range(20):
        time.sleep(0.05)
        now = _sizes(logs)
        if now == sizes:
            break
        sizes = now
    found: Counter[str] = Counter()
    for name, path in logs.items():
        if sizes[name] <= before[name]:
            continue
        with path.open("rb") as log:
            log.seek(before[name])
            chunk = log.read(sizes[name] - before[name])
        for line in chunk.splitlines():
            event = json.loads(line)
            if event.get("stage") != "ResponseComplete" or event["user"]["username"] != USER:
                continue
            ref = event.get("objectRef") or {}
            what = ref.get("resource") or event.get("requestURI", "?").split("?")[0]
            if ref.get("subresource"):
                what += "/" + ref["subresource"]
            if ref.get("name") and event["verb"] == "get":
                what += " (one)"
            found[f"{name[0]}:{event['verb']} {what}"] += 1
    return found


SERVERS = ("etcd", "kube-apiserver")


def _server_pids() -> list[int]:
    """This benchmark's etcd and kube-apiserver processes (its children)."""
    found = []
    for tasks in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (tasks / "children").read_text().split():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() in SERVERS:
                    found.append(int(pid))
    return found


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def run(
    command: Command, env: dict[str, str], logs: dict[str, Path], timeout: float | None
) -> Outcome:
    """Run once; raise SystemExit when it fails (a broken run must not count as a fast one)."""
    before = _sizes(logs)
    servers = _server_pids()
    servers_before = _cpu_seconds(servers)
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile() as rss,
    ):
        argv = [GNU_TIME, "--format=%M", f"--output={rss.name}", *command.argv]
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err, start_new_session=True)
        killed = threading.Event()

        def kill() -> None:
            """The command, not GNU time: time then still reports the peak RSS so far."""
            killed.set()
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
            pids = children.read_text().split() if children.exists() else []
            for pid in pids or [str(proc.pid)]:
                os.kill(int(pid), signal.SIGKILL)

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer:
                timer.cancel()
            if killed.is_set():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # whatever the command started
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        took = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
        server_cpu = _cpu_seconds(servers) - servers_before
        requests = _read_requests(logs, before)
        rss_kib = int((rss.read().decode().split() or ["0"])[-1])
        if killed.is_set():
            return Outcome(took, rss_kib, requests, True, cpu, server_cpu)
        out.seek(0)
        stdout = out.read().decode(errors="replace")
        if proc.returncode != 0 or command.expect not in stdout:
            err.seek(0)
            raise SystemExit(
                f"{command.label} failed (exit {proc.returncode}): {' '.join(command.argv)}\n"
                f"stdout: {stdout[-600:]!r}\nstderr: {err.read()[-1500:]!r}"
            )
    return Outcome(took, rss_kib, requests, cpu=cpu, server_cpu=server_cpu)
