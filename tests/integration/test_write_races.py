"""delete-machine racing other actors, refusals, lost answers and signals, as a review found them.

Each test pins one defect the review reproduced. The plugin talks to the real API server through
the fault proxy; a script of rules decides what happens to chosen requests: another actor writes
straight to the API server right before one of ours arrives, one gets a fault, or one is held
until the test lets it go. Signals go to the installed plugin as a process of its own, like
test_signals.py does.

The contract: a write the server refused is never reported done; nothing is taken back on top of
someone else's change; the report names every object left changed or whose state is unknown; a
stalled network after a signal cannot keep the plugin from ending.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from support.faultproxy import Fault, FaultProxy, Match, Seen
from support.management import ManagementCluster, create_scenario
from support.run import Result, run_cli, start_plugin
from support.scenarios import SCENARIOS

MACHINE = "dev-mp-0-x7q2p"
POOL = "dev-mp-0"
DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
MERGE = "application/merge-patch+json"
WAIT = 60  # seconds: generous bounds on steps that take well under one


@dataclass(frozen=True)
class Rule:
    """What happens to the first request `match` accepts once the rule before it has fired:
    `before` runs first (another actor, straight to the API server), then the request gets
    `fault`, or is held until released, or is forwarded as it is. With `partition`, it and
    every later request stall, as behind a dead network."""

    match: Match
    before: Callable[[], object] | None = None
    fault: Fault | None = None
    hold: bool = False
    partition: bool = False
    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def wait(self, what: str) -> None:
        assert self.arrived.wait(WAIT), f"{what} never came"


class Scripted(FaultProxy):
    """The fault proxy, driven by a script of rules that fire one after another."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._rules: list[Rule] = []
        self._scripted: list[Rule] = []  # every rule, to let held requests go at close
        self._partitioned = False

    def script(self, *rules: Rule) -> None:
        self.arm()
        with self._lock:
            self._rules = list(rules)
            self._scripted += rules
            self._partitioned = False

    def _arrive(self, request: Any) -> Seen:
        seen = super()._arrive(request)
        with self._lock:
            rule = self._rules[0] if self._rules and self._rules[0].match(seen) else None
            if rule is not None:
                self._rules.pop(0)
                self._partitioned = self._partitioned or rule.partition
            partitioned = self._partitioned
        if rule is not None:
            if rule.before is not None:
                rule.before()
            rule.arrived.set()
            if rule.hold:
                rule.released.wait(WAIT)
        if partitioned:
            return replace(seen, fault=Fault.STALL)
        if rule is not None and rule.fault is not None:
            return replace(seen, fault=rule.fault)
        return seen

    def close(self) -> None:
        with self._lock:
            rules, self._rules = self._scripted, []
        for rule in rules:
            rule.released.set()
        super().close()


@dataclass(frozen=True)
class Stage:
    """A fresh capd scenario, reached through a scripted proxy."""

    cluster: ManagementCluster
    proxy: Scripted
    kubeconfig: Path
    namespace: str

    def path(self, rest: str) -> str:
        return (
            f"/apis/cluster.x-k8s.io/{self.cluster.generation}/namespaces/{self.namespace}/{rest}"
        )

    @property
    def machine_path(self) -> str:
        return self.path(f"machines/{MACHINE}")

    @property
    def pool_path(self) -> str:
        return self.path(f"machinepools/{POOL}")

    @property
    def machine_name(self) -> str:
        return f"Machine {self.namespace}/{MACHINE}"

    @property
    def pool_name(self) -> str:
        return f"MachinePool {self.namespace}/{POOL}"

    def machine(self) -> dict[str, Any]:
        return self.cluster.api.request("GET", self.machine_path)  # type: ignore[no-any-return]

    def pool(self) -> dict[str, Any]:
        return self.cluster.api.request("GET", self.pool_path)  # type: ignore[no-any-return]

    def patch(self, path: str, body: dict[str, Any]) -> Callable[[], object]:
        """Another actor's merge patch, to run later."""
        return lambda: self.cluster.api.request("PATCH", path, body, MERGE)

    def someone_deletes_the_machine(self) -> object:
        # Its finalizer keeps it, deleting: what a user's `kubectl delete` leaves meanwhile.
        return self.cluster.api.request("DELETE", self.machine_path)

    # What the plugin sends.
    def is_scale(self, seen: Seen) -> bool:
        return seen.method == "PUT" and seen.path == self.pool_path + "/scale"

    def is_delete(self, seen: Seen) -> bool:
        return seen.method == "DELETE" and seen.path == self.machine_path

    def is_machine_read(self, seen: Seen) -> bool:
        return seen.method == "GET" and seen.path == self.machine_path

    def is_pool_read(self, seen: Seen) -> bool:
        return seen.method == "GET" and seen.path == self.pool_path

    def is_annotation_removal(self, seen: Seen) -> bool:
        if seen.method != "PATCH" or seen.path != self.machine_path:
            return False
        annotations = json.loads(seen.body).get("metadata", {}).get("annotations", {})
        return DELETE_MACHINE in annotations and annotations[DELETE_MACHINE] is None

    def statuses(self, match: Match) -> list[int | None]:
        """The API server's answer to each request `match` accepts (None: never forwarded)."""
        return [s.upstream_status for s in self.proxy.log if match(s)]

    def argv(self, *args: str) -> list[str]:
        return ["delete-machine", MACHINE, "-n", self.namespace,
                "--kubeconfig", str(self.kubeconfig), "--yes", "--no-wait", *args]  # fmt: skip

    def delete(self, capsys: pytest.CaptureFixture[str], *args: str) -> Result:
        return run_cli(capsys, *self.argv(*args))


@pytest.fixture
def stage_of(tmp_path: Path) -> Iterator[Callable[[ManagementCluster], Stage]]:
    proxies: list[Scripted] = []

    def make(cluster: ManagementCluster) -> Stage:
        workdir = tmp_path / f"proxy-{len(proxies)}"
        proxy = Scripted.for_apiserver(cluster.server, cluster.server.admin, workdir).start()
        proxies.append(proxy)
        namespace = cluster.new_namespace()
        objects = SCENARIOS["capd"](cluster.generation, namespace, namespace.removeprefix("t-"))
        create_scenario(cluster, objects)
        kubeconfig = proxy.write_kubeconfig(workdir / "kubeconfig", cluster.server.admin)
        return Stage(cluster, proxy, kubeconfig, namespace)

    yield make
    for proxy in proxies:
        proxy.close()
        assert not proxy.errors


@pytest.fixture
def each_generation(mgmt: ManagementCluster, stage_of) -> Stage:
    return stage_of(mgmt)


@pytest.fixture
def on_v1beta2(v1beta2: ManagementCluster, stage_of) -> Stage:
    return stage_of(v1beta2)


def done_lines(out: str) -> list[str]:
    """kubectl-style lines: printed only for writes that were all made."""
    return [
        line for line in out.splitlines() if line.endswith((" annotated", " scaled", " deleted"))
    ]


def assert_one_message(result: Result) -> None:
    assert "Traceback" not in result.err
    assert "Aborted." not in result.err


# -- F1: a write the server refused with 409 is not done ---------------------------------------


@pytest.mark.parametrize("replicas", [1, 3], ids=["scaled-down-meanwhile", "scaled-up-meanwhile"])
def test_a_scale_step_refused_because_someone_scaled_is_taken_back(
    each_generation: Stage, capsys, replicas: int
) -> None:
    """F1a/F1b: someone scales the pool (to our own target, or up) right before our PUT /scale."""
    stage = each_generation
    other = stage.patch(stage.pool_path, {"spec": {"replicas": replicas}})
    stage.proxy.script(Rule(stage.is_scale, before=other))
    result = stage.delete(capsys, "--scale-down")
    assert_one_message(result)
    assert result.code == 1, result.err
    assert done_lines(result.out) == []
    assert f"{stage.pool_name} changed meanwhile (spec.replicas)" in result.err
    assert (
        f"Taken back: {stage.machine_name}: removed the {DELETE_MACHINE} annotation again; "
        "the cluster is as before"
    ) in result.err
    assert stage.statuses(stage.is_scale) == [409]  # refused, and not sent again
    assert DELETE_MACHINE not in (stage.machine()["metadata"].get("annotations") or {})
    assert stage.pool()["spec"]["replicas"] == replicas  # the other actor's, not ours


def test_a_delete_refused_because_someone_deleted_first_is_not_ours(
    each_generation: Stage, capsys
) -> None:
    """F1c: someone deletes the Machine right before our DELETE."""
    stage = each_generation
    stage.proxy.script(Rule(stage.is_delete, before=stage.someone_deletes_the_machine))
    result = stage.delete(capsys, "--replace")
    assert_one_message(result)
    assert result.code == 1, result.err
    assert done_lines(result.out) == []
    assert f"{stage.machine_name} changed meanwhile (" in result.err
    assert "metadata.deletionTimestamp" in result.err
    assert "Nothing was written" in result.err
    assert stage.statuses(stage.is_delete) == [409]


def test_a_delete_meeting_only_status_updates_is_sent_again_each_time(
    each_generation: Stage, capsys
) -> None:
    """A Machine controller answers our drain-timeout patch with status updates, two of them
    right before our DELETE (seen with the real v1.14 controller): only status changed, so the
    DELETE goes again with the newer resourceVersion."""
    stage = each_generation

    def controller(generation: int) -> Callable[[], object]:
        return stage.patch(
            stage.machine_path + "/status", {"status": {"observedGeneration": generation}}
        )

    stage.proxy.script(
        Rule(stage.is_delete, before=controller(7)), Rule(stage.is_delete, before=controller(8))
    )
    result = stage.delete(capsys, "--replace", "--drain-timeout", "5m")
    assert_one_message(result)
    assert result.code == 0, result.err
    assert done_lines(result.out) == [f"machine.cluster.x-k8s.io/{MACHINE} deleted"]
    assert stage.statuses(stage.is_delete) == [409, 409, 200]


def test_a_scale_step_meeting_the_controllers_provider_id_copy_is_sent_again(
    each_generation: Stage, capsys
) -> None:
    """The MachinePool controller copies the infra pool's spec.providerIDList into the pool's as
    instances come and go (seen with a restart rolling under load, right between our revision
    record and our /scale): bookkeeping no write relies on, so /scale goes again."""
    stage = each_generation
    before = stage.pool()["spec"]
    ids = [*before.get("providerIDList", []), "docker:////surge-instance"]
    copy = stage.patch(stage.pool_path, {"spec": {"providerIDList": ids}})
    stage.proxy.script(Rule(stage.is_scale, before=copy))
    result = stage.delete(capsys, "--scale-down")
    assert_one_message(result)
    assert result.code == 0, result.err
    assert stage.statuses(stage.is_scale) == [409, 200]
    after = stage.pool()["spec"]
    assert (after["replicas"], after["providerIDList"]) == (before["replicas"] - 1, ids)


# -- F2: nothing is taken back on top of someone else's change -----------------------------------


def test_an_undo_never_overwrites_another_actors_change(on_v1beta2: Stage, capsys) -> None:
    """F2a: someone sets another deletion timeout right before our DELETE (which gets 409)."""
    stage = on_v1beta2
    other = {"spec": {"deletion": {"nodeVolumeDetachTimeoutSeconds": 120}}}
    stage.proxy.script(Rule(stage.is_delete, before=stage.patch(stage.machine_path, other)))
    result = stage.delete(capsys, "--replace", "--drain-timeout", "5m")
    assert_one_message(result)
    assert result.code == 5, result.err
    assert (
        f"Left changed: set spec.deletion.nodeDrainTimeoutSeconds=300 on {stage.machine_name}: done"
    ) in result.err
    machine = stage.machine()
    assert machine["spec"]["deletion"] == {
        "nodeDrainTimeoutSeconds": 300,
        "nodeVolumeDetachTimeoutSeconds": 120,
    }
    assert "deletionTimestamp" not in machine["metadata"]


def test_a_machine_someone_else_deletes_keeps_its_bounded_drain(on_v1beta2: Stage, capsys) -> None:
    """F2b: someone deletes the Machine, then our scale step is refused: removing the drain
    timeout now would leave a draining Machine unbounded."""
    stage = on_v1beta2
    refused = Rule(stage.is_scale, before=stage.someone_deletes_the_machine, fault=Fault.FORBIDDEN)
    stage.proxy.script(refused)
    result = stage.delete(capsys, "--scale-down", "--drain-timeout", "5m")
    assert_one_message(result)
    assert result.code == 5, result.err
    assert (
        f"Left changed: set spec.deletion.nodeDrainTimeoutSeconds=300 on {stage.machine_name}: "
        f"done; annotate {stage.machine_name} {DELETE_MACHINE}="
    ) in result.err
    machine = stage.machine()
    assert machine["metadata"]["deletionTimestamp"]
    assert machine["spec"]["deletion"]["nodeDrainTimeoutSeconds"] == 300
    assert stage.pool()["spec"]["replicas"] == 2


# -- a 429 to a write -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retry_after", "timeout"),
    [("\u00b2", ()), ("1", ("--request-timeout", "1s"))],
    ids=["superscript-two", "one-second-past-the-timeout"],
)
def test_a_429_to_a_write_is_a_refusal_unless_its_retry_after_fits(
    on_v1beta2: Stage, capsys, retry_after: str, timeout: tuple[str, ...]
) -> None:
    """A Retry-After of "²" passes str.isdigit() and once crashed float(); one the request
    timeout has no room for is not waited out (test_scale_bounds.py: one that fits is); no
    write is sent twice."""
    stage = on_v1beta2
    stage.proxy.retry_after = retry_after  # type: ignore[assignment]
    stage.proxy.script(Rule(stage.is_delete, fault=Fault.TOO_MANY_REQUESTS))
    result = stage.delete(capsys, "--replace", "--drain-timeout", "5m", *timeout)
    assert_one_message(result)
    assert result.code == 1, result.err
    assert "too many requests" in result.err
    assert "(HTTP 429)" in result.err
    assert f"Taken back: {stage.machine_name}: " in result.err
    assert "the cluster is as before" in result.err
    assert stage.statuses(stage.is_delete) == [None]  # answered by the proxy, never repeated
    machine = stage.machine()
    assert "deletion" not in machine["spec"]
    assert "deletionTimestamp" not in machine["metadata"]


# -- signals: the installed plugin as a process of its own -------------------------------------


@dataclass
class Process:
    popen: subprocess.Popen[str]
    finished: bool = False

    def signal(self, signum: int) -> None:
        self.popen.send_signal(signum)

    def handled(self, signum: int) -> None:
        """Until the kernel has delivered the signal (no longer pending): its handler runs in
        the plugin before it reads another byte, so a held request may be let go then."""
        bit = 1 << (signum - 1)
        status = Path(f"/proc/{self.popen.pid}/status")
        for _ in range(WAIT * 100):
            fields = dict(line.partition(":")[::2] for line in status.read_text().splitlines())
            if not any(int(fields[k], 16) & bit for k in ("SigPnd", "ShdPnd")):
                return
            time.sleep(0.01)
        pytest.fail(f"signal {signum} still pending")

    def finish(self) -> tuple[int, str, str]:
        """Exit code and output; the plugin must end on its own within WAIT."""
        out, err = self.popen.communicate(timeout=WAIT)
        self.finished = True
        return self.popen.returncode, out, err


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[[Stage, tuple[str, ...]], Process]]:
    started: list[Process] = []

    def run(stage: Stage, args: tuple[str, ...]) -> Process:
        popen = start_plugin(list(stage.argv(*args)), tmp_path)
        started.append(Process(popen))
        return started[-1]

    yield run
    for process in started:
        if not process.finished:
            process.popen.kill()
            process.popen.communicate()


def stall_from_the_delete(stage: Stage) -> tuple[Rule, Rule]:
    """Our DELETE and every request after it stall (with --request-timeout 0: no timeout)."""
    partition = Rule(stage.is_delete, partition=True)
    reread = Rule(stage.is_machine_read)
    stage.proxy.script(partition, reread)
    return partition, reread


def assert_delete_unknown(stage: Stage, err: str) -> None:
    assert (
        f"set spec.deletion.nodeDrainTimeoutSeconds=300 on {stage.machine_name}: done; "
        f"delete {stage.machine_name}: unknown, {stage.machine_name} must be checked"
    ) in err


def test_a_second_ctrl_c_while_a_stalled_network_is_reread_ends_the_run(on_v1beta2, launch) -> None:
    """F3: after SIGINT the DELETE's outcome is read back over a dead network; a second SIGINT
    stops at once, saying what is known."""
    stage = on_v1beta2
    delete, reread = stall_from_the_delete(stage)
    process = launch(stage, ("--replace", "--drain-timeout", "5m"))
    delete.wait("the DELETE")
    process.signal(signal.SIGINT)
    reread.wait("the re-read of the Machine")
    process.signal(signal.SIGINT)
    code, _out, err = process.finish()
    assert code == 130, err
    assert "Traceback" not in err
    assert "stopped again before the state was worked out" in err
    assert_delete_unknown(stage, err)


def test_one_ctrl_c_while_a_stalled_network_is_reread_still_ends(on_v1beta2, launch) -> None:
    """F3: without a second signal the re-read is bounded (writing.SETTLE_TIMEOUT) whatever
    --request-timeout says, and nothing is written on a state that cannot be read."""
    stage = on_v1beta2
    delete, reread = stall_from_the_delete(stage)
    process = launch(stage, ("--replace", "--drain-timeout", "5m", "--request-timeout", "0"))
    delete.wait("the DELETE")
    process.signal(signal.SIGINT)
    reread.wait("the re-read of the Machine")
    code, _out, err = process.finish()
    assert code == 130, err
    assert "Traceback" not in err
    assert "whether it took effect is unknown (it could not be read back" in err
    assert "it may still take effect" in err
    assert_delete_unknown(stage, err)
    log = stage.proxy.log
    after = log[next(i for i, s in enumerate(log) if stage.is_delete(s)) + 1 :]
    # Only the bounded re-read: no undo is sent blind on a state that cannot be read.
    assert {(s.method, s.path) for s in after} == {("GET", stage.machine_path)}
    machine = stage.machine()  # the stalled DELETE never reached the server
    assert "deletionTimestamp" not in machine["metadata"]
    assert machine["spec"]["deletion"]["nodeDrainTimeoutSeconds"] == 300


def test_ctrl_c_while_the_last_writes_lost_answer_is_reread(on_v1beta2, launch) -> None:
    """F4: the /scale answer is lost, SIGINT comes while the pool is read back: the report
    names every write as done (the Machine stays annotated, the pool one smaller)."""
    stage = on_v1beta2
    reread = Rule(stage.is_pool_read, hold=True)
    stage.proxy.script(Rule(stage.is_scale, fault=Fault.RESET_AFTER), reread)
    process = launch(stage, ("--scale-down",))
    reread.wait("the re-read of the MachinePool")
    process.signal(signal.SIGINT)
    process.handled(signal.SIGINT)
    reread.released.set()
    code, _out, err = process.finish()
    assert code == 130, err
    assert "Traceback" not in err
    assert f"every write was made: annotate {stage.machine_name} {DELETE_MACHINE}=" in err
    assert f"; scale {stage.pool_name} from 2 to 1 replicas (/scale): done" in err
    assert DELETE_MACHINE in stage.machine()["metadata"]["annotations"]
    assert stage.pool()["spec"]["replicas"] == 1


def test_ctrl_c_while_a_refused_scale_step_is_taken_back(on_v1beta2, launch) -> None:
    """F4: the scale step is refused, SIGINT comes during the undo: 130, not 1, and the
    message says what was taken back."""
    stage = on_v1beta2
    undo = Rule(stage.is_annotation_removal, hold=True)
    stage.proxy.script(Rule(stage.is_scale, fault=Fault.FORBIDDEN), undo)
    process = launch(stage, ("--scale-down",))
    undo.wait("the removal of the annotation")
    process.signal(signal.SIGINT)
    process.handled(signal.SIGINT)
    undo.released.set()
    code, _out, err = process.finish()
    assert code == 130, err
    assert "Traceback" not in err
    assert (
        f"Taken back: {stage.machine_name}: removed the {DELETE_MACHINE} annotation again; "
        "the cluster is as before"
    ) in err
    assert DELETE_MACHINE not in (stage.machine()["metadata"].get("annotations") or {})
    assert stage.pool()["spec"]["replicas"] == 2
