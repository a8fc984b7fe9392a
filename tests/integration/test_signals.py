"""Ctrl-C and SIGTERM to the installed plugin while a write hangs, and while it follows.

The plugin runs as users run it (the console script, a process of its own) through the fault
proxy; the proxy holds one write request unanswered and tells the test when it arrives, and the
test sends the signal then. The contract: exit 130 / 143, the state left reported, what was
written and can be undone taken back, never a traceback or "Aborted.".
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest
from support.faultjudge import patch_body
from support.faultproxy import Fault, FaultProxy, Injection, Match, Seen
from support.faultstate import (
    Collection,
    Loaded,
    changes,
    load_through_proxy,
    namespaced_collections,
)
from support.management import ManagementCluster
from support.run import start_plugin

MACHINE = "dev-mp-0-x7q2p"
POOL = "dev-mp-0"
# None: the signal, not a timeout, ends the held request however busy the machine is.
REQUEST_TIMEOUT = "0"
WAIT = 60  # seconds: generous bounds on a run that should take a few


@pytest.fixture
def proxy(v1beta2: ManagementCluster, tmp_path: Path) -> Iterator[FaultProxy]:
    with FaultProxy.for_apiserver(v1beta2.server, v1beta2.server.admin, tmp_path / "proxy") as p:
        yield p


@pytest.fixture(scope="module")
def collections(control_plane) -> list[Collection]:
    from support.management import management_cluster

    return namespaced_collections(management_cluster(control_plane, "v1beta2").api)


@dataclass
class Running:
    """The plugin as a child process, its output read as it comes."""

    process: subprocess.Popen[str]
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    following: threading.Event = field(default_factory=threading.Event)
    readers: list[threading.Thread] = field(default_factory=list)

    def _read(self, stream: IO[str], into: list[str]) -> None:
        for line in stream:
            into.append(line)
            if line.startswith("Following "):
                self.following.set()

    def start_reading(self) -> None:
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            reader = threading.Thread(target=self._read, args=(stream, into), daemon=True)
            reader.start()
            self.readers.append(reader)

    def wait_for(self, event: threading.Event, what: str) -> None:
        """Until the event, or fail at once with the plugin's stderr if it ended first."""
        for _ in range(WAIT * 10):
            if event.wait(0.1):
                return
            if self.process.poll() is not None:
                self.finish()
                break
        pytest.fail(f"{what} never came; the plugin said:\n{''.join(self.err)}")

    def finish(self) -> tuple[int, str, str]:
        code = self.process.wait(timeout=WAIT)
        for reader in self.readers:
            reader.join(WAIT)
        return code, "".join(self.out), "".join(self.err)


def _launcher(
    proxy: FaultProxy, v1beta2: ManagementCluster, tmp_path: Path, head: list[str]
) -> Iterator:
    """run(namespace, *args): the plugin, `head -n NS --kubeconfig PROXY --yes args`, through
    the proxy; every run ended and its pipes closed afterwards."""
    kubeconfig = proxy.write_kubeconfig(tmp_path / f"{head[0]}.kubeconfig", v1beta2.server.admin)
    started: list[Running] = []

    def run(namespace: str, *args: str) -> Running:
        argv = [*head, "-n", namespace, "--kubeconfig", str(kubeconfig), "--yes", *args]
        running = Running(start_plugin(argv, tmp_path))
        running.start_reading()
        started.append(running)
        return running

    yield run
    for running in started:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
        for stream in (running.process.stdout, running.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def launch(proxy: FaultProxy, v1beta2: ManagementCluster, tmp_path: Path) -> Iterator:
    yield from _launcher(proxy, v1beta2, tmp_path, ["delete-machine", MACHINE])


@pytest.fixture
def upgrade(proxy: FaultProxy, v1beta2: ManagementCluster, tmp_path: Path) -> Iterator:
    """launch, running `upgrade` of the pool instead of delete-machine."""
    yield from _launcher(proxy, v1beta2, tmp_path, ["upgrade", POOL, "--version", "v1.34.1"])


def load(v1beta2: ManagementCluster, proxy: FaultProxy, collections: list[Collection]) -> Loaded:
    return load_through_proxy(
        v1beta2.api, "v1beta2", proxy, v1beta2.server.admin, "capd", collections
    )


def _path(namespace: str, rest: str) -> str:
    return f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/{rest}"


def interrupted_write(
    v1beta2: ManagementCluster,
    proxy: FaultProxy,
    collections: list[Collection],
    launch,
    hold: Injection,
    signum: int,
    *args: str,
) -> tuple[Loaded, int, str, str, dict]:
    """Hold the write `hold` picks; when it arrives, send the signal; return what is left."""
    loaded = load(v1beta2, proxy, collections)
    held = hold.match
    assert held is not None
    proxy.arm(hold)
    arrived = proxy.arrival(held)
    running = launch(loaded.namespace, *args, "--no-wait", "--request-timeout", REQUEST_TIMEOUT)
    running.wait_for(arrived, "the held write")
    if hold.fault is Fault.STALL_AFTER:
        # Arrival is before forwarding: the signal must come once the server has applied it.
        deadline = time.monotonic() + 30
        while not any(s.upstream_status for s in proxy.log if held(s)):
            assert time.monotonic() < deadline, "the held write never reached the server"
            time.sleep(0.05)
    running.process.send_signal(signum)
    code, out, err = running.finish()
    left = changes(loaded.objects, loaded.snapshot(v1beta2.api, collections, created=True))
    return loaded, code, out, err, left


def assert_reported(loaded: Loaded, err: str, left: dict, written: str) -> None:
    """Either everything written is taken back (and said so), or each object left is named."""
    assert "Traceback" not in err
    assert "Aborted." not in err
    if left:
        for key in left:
            assert key.display in err, f"{key.display} is left changed and not named:\n{err}"
    else:
        assert "taken back" in err.lower(), err
        assert f"Machine {loaded.namespace}/{MACHINE}" in err, err
    assert written in err, err


# STALL: the server never sees the held write; STALL_AFTER: it applied it, the answer is held.
HOLDS = [Fault.STALL, Fault.STALL_AFTER]


@pytest.mark.parametrize("hold", HOLDS, ids=lambda f: f.value)
def test_ctrl_c_while_the_scale_step_hangs(v1beta2, proxy, collections, launch, hold) -> None:
    def scale(seen: Seen) -> bool:
        return seen.method == "PUT" and seen.path.endswith(f"/machinepools/{POOL}/scale")

    loaded, code, _out, err, left = interrupted_write(
        v1beta2, proxy, collections, launch, Injection(hold, match=scale), signal.SIGINT,
        "--scale-down",
    )  # fmt: skip
    assert code == 130, err
    # The annotation was written before the held /scale: it is part of the state to report.
    assert_reported(loaded, err, left, "annotat")
    assert set(left) <= {k for k in loaded.objects if k.kind in ("Machine", "MachinePool")}
    pool = v1beta2.api.request("GET", _path(loaded.namespace, f"machinepools/{POOL}"))
    if hold is Fault.STALL_AFTER:
        # The pool is one lower for good: whatever is taken back, that is left and said.
        assert pool["spec"]["replicas"] == 1
        assert f"MachinePool {loaded.namespace}/{POOL}" in err, err


@pytest.mark.parametrize("hold", HOLDS, ids=lambda f: f.value)
def test_sigterm_while_the_delete_hangs(v1beta2, proxy, collections, launch, hold) -> None:
    def delete(seen: Seen) -> bool:
        return seen.method == "DELETE" and seen.path.endswith(f"/machines/{MACHINE}")

    loaded, code, _out, err, left = interrupted_write(
        v1beta2, proxy, collections, launch, Injection(hold, match=delete), signal.SIGTERM,
        "--replace", "--drain-timeout", "5m",
    )  # fmt: skip
    assert code == 143, err
    # The drain timeout was set before the held DELETE.
    assert_reported(loaded, err, left, "nodeDrainTimeout")
    assert set(left) <= {k for k in loaded.objects if k.kind == "Machine"}
    machine = v1beta2.api.request("GET", _path(loaded.namespace, f"machines/{MACHINE}"))
    deleting = "deletionTimestamp" in machine["metadata"]
    assert deleting == (hold is Fault.STALL_AFTER)


def _watch_after_delete(namespace: str) -> Match:
    """The follow loop's watch of the namespace's Machines, opened after the DELETE."""
    machines = _path(namespace, "machines")
    state = {"deleted": False}

    def match(seen: Seen) -> bool:
        if seen.method == "DELETE" and seen.path == f"{machines}/{MACHINE}":
            state["deleted"] = True
        return state["deleted"] and seen.path == machines and "watch" in seen.params

    return match


@pytest.mark.parametrize("moment", ["as-it-starts", "while-watching"])
def test_ctrl_c_while_following_leaves_the_deletion_going(
    v1beta2, proxy, collections, launch, moment
) -> None:
    """As it starts: right when "Following ... (Ctrl-C stops following)" is printed, which is
    when a user reads that Ctrl-C is safe. While watching: once the watch of Machines is open."""
    loaded = load(v1beta2, proxy, collections)
    proxy.arm()
    watching = proxy.arrival(_watch_after_delete(loaded.namespace))
    running = launch(loaded.namespace, "--replace", "--wait", "--timeout", "1m")
    running.wait_for(running.following, "the Following line")
    if moment == "while-watching":
        running.wait_for(watching, "the watch of Machines")
    os.kill(running.process.pid, signal.SIGINT)
    code, _out, err = running.finish()
    assert code == 130, err
    assert "goes on in the cluster" in err
    assert "Traceback" not in err
    assert "Aborted." not in err
    machine = v1beta2.api.request("GET", _path(loaded.namespace, f"machines/{MACHINE}"))
    assert machine["metadata"]["deletionTimestamp"]


def _upgrade_step(step: str) -> Match:
    """Upgrade's writes, in order: pause the DockerMachinePool, the MachinePool's version, the
    DockerMachinePool's image, unpause. Each PATCH is told by its path and body."""

    def match(seen: Seen) -> bool:
        if seen.method != "PATCH":
            return False
        if seen.path.endswith(f"/machinepools/{POOL}"):
            return step == "version"
        if not seen.path.endswith(f"/dockermachinepools/{POOL}"):
            return False
        body = patch_body(seen)
        if "spec" in body:
            return step == "image"
        # The pause sets the annotation to a string, the unpause (and the pause's undo) to null.
        paused = body["metadata"]["annotations"]["cluster.x-k8s.io/paused"]
        return step == ("unpause" if paused is None else "pause")

    return match


@pytest.mark.parametrize("hold", HOLDS, ids=lambda f: f.value)
@pytest.mark.parametrize(
    ("step", "signum"),
    [("pause", signal.SIGTERM), ("version", signal.SIGINT), ("image", signal.SIGINT),
     ("unpause", signal.SIGTERM)],
    ids=lambda v: v if isinstance(v, str) else v.name,
)  # fmt: skip
def test_a_signal_between_the_upgrade_writes(
    v1beta2, proxy, collections, upgrade, hold, step, signum
) -> None:
    loaded, code, _out, err, left = interrupted_write(
        v1beta2, proxy, collections, upgrade, Injection(hold, match=_upgrade_step(step)), signum
    )
    assert code == 128 + signum, err
    assert "Traceback" not in err
    assert "Aborted." not in err
    pool = f"MachinePool {loaded.namespace}/{POOL}"
    infra = f"DockerMachinePool {loaded.namespace}/{POOL}"
    dmp = v1beta2.api.request(
        "GET",
        f"/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/{loaded.namespace}"
        f"/dockermachinepools/{POOL}",
    )
    # Whatever the moment, the infra pool is not left paused.
    assert "cluster.x-k8s.io/paused" not in (dmp["metadata"].get("annotations") or {})
    if step == "unpause" and hold is Fault.STALL_AFTER:
        # Every write took effect: the pool is upgraded, both objects say so and are named.
        assert {k.display for k in left} == {pool, infra}, left
        assert pool in err, err
        assert infra in err, err
        return
    # Otherwise everything written was taken back, and said.
    assert left == {}, left
    assert pool in err or infra in err, err
    if (step, hold) != ("pause", Fault.STALL):
        assert "taken back" in err.lower(), err
