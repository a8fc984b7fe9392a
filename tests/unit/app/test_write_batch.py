"""delete-machine's writes as app/deleting.py sends them (kube/writing.py), over a fake server of
our own client's boundary (support.fakeapi): in order and exactly as planned, taken back newest
first on a failure, a lost reply read back and decided, a signal mid-batch worked out and said.

Plans are made by the plugin itself (plan_for) from Cluster API's own test provider (CAPD) and
from CAPZ, whose annotated Machine cannot be taken back. The real server's side of the same
faults is in tests/integration/test_fault_matrix.py; each decision is pinned here.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from support.fakeapi import Asked, FakeAPI, FakeServer
from support.objects import NOW
from support.scenarios import SCENARIOS

from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.app.deleting import (
    Carry,
    DeleteMachine,
    carry_out,
    execute,
    plan_for,
)
from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    ConflictError,
    ExitCode,
    IncompleteError,
    Interrupted,
    UnreachableError,
)
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fencing import FENCE_ANNOTATION
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Wanted
from kubectl_machinepool.plans.deletewrites import DELETE_MACHINE_ANNOTATION
from kubectl_machinepool.plans.writes import identity

NAMESPACE = "capi-prod"
MACHINE = "dev-mp-0-x7q2p"
MACHINE_PATH = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{NAMESPACE}/machines/{MACHINE}"
POOL_PATH = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{NAMESPACE}/machinepools/dev-mp-0"
STAMP = "2026-11-29T15:00:00Z"
DRAIN = f"set spec.deletion.nodeDrainTimeoutSeconds=300 on Machine {NAMESPACE}/{MACHINE}"
ANNOTATE = f"annotate Machine {NAMESPACE}/{MACHINE} {DELETE_MACHINE_ANNOTATION}={STAMP}"
SCALE = f"scale MachinePool {NAMESPACE}/dev-mp-0 from 2 to 1 replicas (/scale)"
TAKEN_BACK = (
    f"Taken back: Machine {NAMESPACE}/{MACHINE}: removed the {DELETE_MACHINE_ANNOTATION} "
    f"annotation again; Machine {NAMESPACE}/{MACHINE}: set spec.deletion.nodeDrainTimeoutSeconds "
    "back to unset; the cluster is as before"
)
HINT = f"check the state with: kubectl machinepool describe dev-mp-0 -n {NAMESPACE}"


@dataclass
class Batch:
    """A planned delete-machine and the servers it writes to."""

    server: FakeServer
    kube: Kube
    plan: Plan
    warnings: list[str] = field(default_factory=list)
    before: dict[str, dict] = field(default_factory=dict)

    def execute(self, *, dry_run: bool = False) -> tuple[str, ...]:
        self.server.asked.clear()
        return execute(self.kube, self.plan, dry_run=dry_run, warn=self.warnings.append).lines

    def sent(self) -> list[tuple[str, str]]:
        """The writes that reached the server, in order, fences left out."""
        return [
            (a.method, a.path) for a in self.server.writes() if FENCE_ANNOTATION not in str(a.body)
        ]

    def as_before(self) -> bool:
        """Machine and pool hold what they held before (status and bookkeeping aside)."""
        return all(identity(self.now(kind)) == identity(old) for kind, old in self.before.items())

    def now(self, kind: str) -> dict:
        name = MACHINE if kind == "Machine" else "dev-mp-0"
        found = self.server.get(kind, NAMESPACE, name)
        assert found is not None
        return found


def planned(
    api: FakeAPI, mode: Mode = Mode.SCALE_DOWN, scenario: str = "capd", machine: str = MACHINE
) -> Batch:
    server, _ = api.scenario(scenario, NAMESPACE)
    kube = api.kube()
    asked = DeleteMachine(
        Wanted(machine=machine), mode, drain_timeout=timedelta(minutes=5), namespace=NAMESPACE
    )
    plan = plan_for(kube, asked, warn=pytest.fail, now=NOW)
    assert plan.refusals == ()
    batch = Batch(server, kube, plan)
    [pool] = server.of_kind("MachinePool")
    batch.before = {"Machine": server.get("Machine", NAMESPACE, machine), "MachinePool": pool}
    return batch


@pytest.fixture
def batch(fake_api: FakeAPI) -> Batch:
    """Scale down by one, marking the Machine (CAPD), with a drain timeout: three writes."""
    return planned(fake_api)


def without_version(body: dict) -> dict:
    """A write's body without the precondition writing.py adds to it."""
    meta = {k: v for k, v in body.get("metadata", {}).items() if k != "resourceVersion"}
    return (
        {**body, "metadata": meta} if meta else {k: v for k, v in body.items() if k != "metadata"}
    )


def scale(asked: Asked) -> bool:
    return asked.method == "PUT" and asked.path.endswith("/scale")


def annotation(asked: Asked) -> bool:
    return asked.method == "PATCH" and DELETE_MACHINE_ANNOTATION in str(asked.body)


def test_the_writes_go_in_order_each_on_the_version_the_last_one_left(batch: Batch) -> None:
    lines = batch.execute()
    assert lines == (
        f"machine.cluster.x-k8s.io/{MACHINE} patched",
        f"machine.cluster.x-k8s.io/{MACHINE} annotated",
        "machinepool.cluster.x-k8s.io/dev-mp-0 scaled",
    )
    assert [(a.method, a.path) for a in batch.server.asked] == [
        ("GET", MACHINE_PATH),  # both objects still as planned: nothing written otherwise
        ("GET", POOL_PATH),
        ("PATCH", MACHINE_PATH),
        ("PATCH", MACHINE_PATH),
        ("GET", MACHINE_PATH),  # the Machine still as the batch left it before the scale
        ("PUT", POOL_PATH + "/scale"),
    ]
    drain, annotate, scaling = batch.server.writes()
    # Each write names the version its object had: the plan's, then what the last write left.
    planned_machine = batch.before["Machine"]["metadata"]["resourceVersion"]
    assert drain.body["metadata"]["resourceVersion"] == planned_machine
    assert annotate.body["metadata"]["resourceVersion"] != planned_machine
    assert (
        scaling.body["metadata"]["resourceVersion"]
        == (batch.before["MachinePool"]["metadata"]["resourceVersion"])
    )
    machine = batch.now("Machine")
    assert machine["metadata"]["annotations"][DELETE_MACHINE_ANNOTATION] == STAMP
    assert machine["spec"]["deletion"]["nodeDrainTimeoutSeconds"] == 300
    assert batch.now("MachinePool")["spec"]["replicas"] == 1
    assert batch.warnings == []


def test_a_refused_write_takes_back_the_done_ones_newest_first(batch: Batch) -> None:
    refusal = 'machinepools.cluster.x-k8s.io "dev-mp-0" is forbidden: cannot update scale'
    batch.server.fail(scale, ClusterAccessError(refusal, status=403))
    with pytest.raises(ClusterAccessError) as failed:
        batch.execute()
    assert failed.value.message == f"step 3 of 3 ({SCALE}) failed: {refusal}. {TAKEN_BACK}"
    # Newest first, each on the version the last write left.
    undo = batch.server.writes()[3:]
    assert [(a.method, a.path) for a in undo] == [("PATCH", MACHINE_PATH)] * 2
    assert [without_version(a.body) for a in undo] == [
        {"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: None}}},
        {"spec": {"deletion": None}},
    ]
    versions = [a.body["metadata"]["resourceVersion"] for a in batch.server.writes()]
    assert len(set(versions[:2] + versions[3:])) == 4
    assert batch.as_before()


def test_a_write_that_cannot_be_taken_back_keeps_the_earlier_ones(fake_api: FakeAPI) -> None:
    """CAPZ deletes an annotated Machine on the mark alone: the mark stays, and so does the
    drain timeout it was made on top of; the error names both, exit code INCOMPLETE."""
    machines = [
        o["metadata"]["name"]
        for o in SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
        if o["kind"] == "Machine"
    ]
    batch = planned(fake_api, scenario="azure-vmss", machine=machines[0])
    batch.server.fail(scale, ClusterAccessError("forbidden", status=403))
    with pytest.raises(IncompleteError) as failed:
        batch.execute()
    message = failed.value.message
    assert message.startswith("step 3 of 3 (scale MachinePool capi-prod/")
    assert message.endswith(
        f"failed: forbidden. Left changed: set spec.deletion.nodeDrainTimeoutSeconds=300 on "
        f"Machine {NAMESPACE}/{machines[0]}: done; annotate Machine {NAMESPACE}/{machines[0]} "
        f"{DELETE_MACHINE_ANNOTATION}={STAMP}: done (the AzureMachinePool provider deletes an "
        "annotated Machine on the mark alone)"
    )
    assert failed.value.exit_code is ExitCode.INCOMPLETE
    assert failed.value.hint.startswith("check the state with: kubectl machinepool describe ")
    assert [m for m, _ in batch.sent()] == ["PATCH", "PATCH", "PUT"]  # nothing taken back


def test_a_lost_reply_of_a_write_that_landed_is_read_back_and_counted(batch: Batch) -> None:
    batch.server.fail(annotation, batch.server.lost_reply(), applied=True)
    lines = batch.execute()
    assert len(lines) == 3
    [warning] = batch.warnings
    assert warning.startswith(f"no answer to step 2 of 3 ({ANNOTATE}) (the API server of ")
    assert warning.endswith(f"reading Machine {NAMESPACE}/{MACHINE} again shows it took effect")
    assert batch.now("MachinePool")["spec"]["replicas"] == 1
    assert [m for m, _ in batch.sent()] == ["PATCH", "PATCH", "PUT"]  # the mark not sent twice


def test_a_lost_reply_of_a_write_that_did_not_land_is_fenced_and_taken_back(
    batch: Batch,
) -> None:
    """Not "not written" on a guess: the pool is fenced so the write can no longer land,
    read again, and only then the earlier writes are taken back."""
    reset = batch.server.lost_reply(ConnectionResetError(104, "Connection reset by peer"))
    batch.server.fail(scale, reset)
    with pytest.raises(UnreachableError) as failed:
        batch.execute()
    assert failed.value.message == (
        f"step 3 of 3 ({SCALE}) failed: no answer ({reset.message}); read back, it did not "
        f"take effect, and it can no longer land. {TAKEN_BACK}"
    )
    fences = [a for a in batch.server.writes() if FENCE_ANNOTATION in str(a.body)]
    assert [a.path for a in fences] == [POOL_PATH, POOL_PATH]  # set, then removed
    assert FENCE_ANNOTATION not in str(batch.now("MachinePool")["metadata"])
    assert batch.as_before()


def test_a_lost_reply_that_cannot_be_read_back_is_unknown_not_undone(batch: Batch) -> None:
    lost = batch.server.lost_reply()
    batch.server.fail(scale, lost)
    # Every read of the pool after that is lost too.
    batch.server.fail(lambda a: a.method == "GET" and a.path == POOL_PATH, lost, nth=2)
    with pytest.raises(IncompleteError) as failed:
        batch.execute()
    assert failed.value.message == (
        f"step 3 of 3 ({SCALE}) got no answer ({lost.message}); whether it took effect is "
        f"unknown (it could not be read back: {lost.message}) and it may still take effect: "
        f"{DRAIN}: done; {ANNOTATE}: done; {SCALE}: unknown, MachinePool {NAMESPACE}/dev-mp-0 "
        "must be checked"
    )
    assert failed.value.hint == HINT
    assert [m for m, _ in batch.sent()] == ["PATCH", "PATCH", "PUT"]  # nothing taken back


@pytest.fixture
def handlers() -> Iterator[None]:
    """The signal handlers are the test run's own again once the batch is over."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    assert {s: signal.getsignal(s) for s in before} == before


def signal_when(
    server: FakeServer, matches: Callable[[Asked], bool], signum: int, *, landed: bool = False
) -> None:
    """Send this process a signal the first time a request it matches is in flight (before
    the server applies it, or after with landed). raise_signal runs the handler before it
    returns: no timing is involved."""
    sent: list[Asked] = []

    def hook(asked: Asked) -> None:
        if not sent and matches(asked):
            sent.append(asked)
            signal.raise_signal(signum)

    if landed:
        server.landed = hook
    else:
        server.during = hook


def interrupted(batch: Batch) -> Interrupted:
    with pytest.raises(Interrupted) as stopped:
        batch.execute()
    return stopped.value


@pytest.mark.usefixtures("handlers")
def test_sigint_during_a_write_works_out_the_state_and_takes_back(batch: Batch) -> None:
    signal_when(batch.server, scale, signal.SIGINT)
    stopped = interrupted(batch)
    assert stopped.exit_code is ExitCode.INTERRUPTED
    assert stopped.report == (
        f"SIGINT during step 3 of 3 ({SCALE}), which did not take effect and can no longer "
        f"land. {TAKEN_BACK}"
    )
    assert batch.as_before()


@pytest.mark.usefixtures("handlers")
def test_sigterm_after_a_write_landed_counts_it_and_takes_it_back_too(batch: Batch) -> None:
    signal_when(batch.server, annotation, signal.SIGTERM, landed=True)
    stopped = interrupted(batch)
    assert stopped.exit_code is ExitCode.TERMINATED
    assert stopped.report == (
        f"SIGTERM during step 2 of 3 ({ANNOTATE}), which took effect. {TAKEN_BACK}"
    )
    assert "PUT" not in [m for m, _ in batch.sent()]  # the scale never went out
    assert batch.as_before()


@pytest.mark.usefixtures("handlers")
def test_sigint_while_the_plan_is_checked_writes_nothing(batch: Batch) -> None:
    signal_when(batch.server, lambda a: a.method == "GET", signal.SIGINT)
    stopped = interrupted(batch)
    assert (stopped.exit_code, stopped.report) == (
        ExitCode.INTERRUPTED,
        "Nothing was written",
    )
    assert batch.server.writes() == []


@pytest.mark.usefixtures("handlers")
def test_a_second_signal_while_settling_says_what_is_known_at_once(batch: Batch) -> None:
    """The first SIGINT abandons the scale in flight; the second comes while the pool is read
    back: the tool gives up at once and says which write must be checked."""
    seen: list[Asked] = []

    def hook(asked: Asked) -> None:
        scaling = any(scale(a) for a in seen)
        seen.append(asked)
        if scale(asked) or (scaling and asked.path == POOL_PATH):
            signal.raise_signal(signal.SIGINT)

    batch.server.during = hook
    stopped = interrupted(batch)
    assert stopped.exit_code is ExitCode.INTERRUPTED
    assert stopped.report == (
        f"stopped again before the state was worked out: {DRAIN}: done; {ANNOTATE}: done; "
        f"{SCALE}: unknown, MachinePool {NAMESPACE}/dev-mp-0 must be checked; MachinePool "
        f"{NAMESPACE}/dev-mp-0 may keep the annotation {FENCE_ANNOTATION}, safe to remove"
    )


def test_a_plan_made_stale_by_someone_else_writes_nothing(batch: Batch) -> None:
    machine = batch.now("Machine")
    machine["metadata"].setdefault("labels", {})["team"] = "someone-else"
    batch.server.add(machine)
    with pytest.raises(ConflictError) as stale:
        batch.execute()
    assert stale.value.message.startswith(f"Machine {NAMESPACE}/{MACHINE} changed since the plan")
    assert stale.value.message.endswith("; nothing was written")
    assert stale.value.hint == "run the command again to plan from what is there now"
    assert batch.server.writes() == []


def test_a_controller_s_status_update_meanwhile_is_written_over(batch: Batch) -> None:
    """The Machine controller rewrites status between the plan and the write: the first
    write meets 409, and is sent again on the new version since only status changed."""
    machine = batch.now("Machine")
    machine["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    updated = batch.server.add(machine)["metadata"]["resourceVersion"]
    assert len(batch.execute()) == 3
    first, again = batch.server.writes()[:2]
    assert first.body == again.body | {
        "metadata": {"resourceVersion": first.body["metadata"]["resourceVersion"]}
    }
    assert (
        first.body["metadata"]["resourceVersion"]
        == batch.before["Machine"]["metadata"]["resourceVersion"]
    )
    assert again.body["metadata"]["resourceVersion"] == updated
    assert [m for m, _ in batch.sent()] == ["PATCH", "PATCH", "PATCH", "PUT"]


def test_server_dry_run_asks_the_server_without_asking_the_user_and_changes_nothing(
    batch: Batch,
) -> None:
    said: list[str] = []
    ui = Callbacks(report=said.append, inform=said.append, warn=said.append, confirm=never)
    asked = DeleteMachine(Wanted(machine=MACHINE), Mode.SCALE_DOWN, namespace=NAMESPACE)
    batch.server.asked.clear()
    carry_out(batch.kube, batch.plan, asked, Carry(dry_run=DryRun.SERVER), ui)
    assert said == [
        f"machine.cluster.x-k8s.io/{MACHINE} patched (server dry run)",
        f"machine.cluster.x-k8s.io/{MACHINE} annotated (server dry run)",
        "machinepool.cluster.x-k8s.io/dev-mp-0 scaled (server dry run)",
    ]
    named = {"dryRun": "All", "fieldManager": "kubectl-machinepool"}
    assert [a.query for a in batch.server.writes()] == [named] * 3
    assert batch.as_before()


def never() -> bool:
    pytest.fail("a server dry run asks no confirmation")


def test_carry_out_asks_first_and_a_no_writes_nothing(batch: Batch) -> None:
    said: list[str] = []
    ui = Callbacks(report=said.append, inform=said.append, warn=said.append, confirm=lambda: False)
    asked = DeleteMachine(Wanted(machine=MACHINE), Mode.SCALE_DOWN, namespace=NAMESPACE)
    batch.server.asked.clear()
    carry_out(batch.kube, batch.plan, asked, Carry(), ui)
    assert said == ["Cancelled: nothing was written."]
    assert batch.server.writes() == []
    ui = Callbacks(report=said.append, inform=said.append, warn=said.append, confirm=lambda: True)
    said.clear()
    carry_out(batch.kube, batch.plan, asked, Carry(), ui)
    assert said == [
        f"machine.cluster.x-k8s.io/{MACHINE} patched",
        f"machine.cluster.x-k8s.io/{MACHINE} annotated",
        "machinepool.cluster.x-k8s.io/dev-mp-0 scaled",
        "The provider deletes the marked Machine next (--wait follows it).",
    ]


def test_a_replace_reports_the_delete_last(fake_api: FakeAPI) -> None:
    batch = planned(fake_api, Mode.REPLACE)
    said: list[str] = []
    ui = Callbacks(report=said.append, inform=said.append, warn=said.append, confirm=lambda: True)
    carry_out(batch.kube, batch.plan, DeleteMachine(Wanted(machine=MACHINE)), Carry(), ui)
    assert said == [
        f"machine.cluster.x-k8s.io/{MACHINE} patched",
        f"machine.cluster.x-k8s.io/{MACHINE} deleted",
    ]
    assert batch.sent()[-1] == ("DELETE", MACHINE_PATH)
    delete = batch.server.writes()[-1].body
    assert delete["preconditions"]["uid"] == batch.before["Machine"]["metadata"]["uid"]
