"""rollout restart plans on the scenarios' realistic objects, both API generations: which
instances are old, the start recorded (or the recorded one gone on with), and the refusals with
what rolls each provider instead."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import snapshot_of

from kubectl_machinepool.app.restarting import unavailable
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.revisions import ANNOTATION, START, Change, decode
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.restart import (
    RestartPlan,
    RestartRequest,
    finished,
    plan_restart,
)
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
GENERATIONS = pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
PAUSED = "cluster.x-k8s.io/paused"


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def pool_of(objects: list[Obj]) -> PoolDescription:
    [pool] = [p for c in describe(snapshot_of(objects), Selection(), NOW).clusters for p in c.pools]
    return pool


def plan(objects: list[Obj], request: RestartRequest | None = None) -> RestartPlan:
    snapshot = snapshot_of(objects)
    return plan_restart(
        pool_of(objects), snapshot, request or RestartRequest(), NOW, permissions=allowed
    )


def annotate(objects: list[Obj], kind: str, **values: str) -> None:
    find(objects, kind)["metadata"].setdefault("annotations", {}).update(values)


def said(found: RestartPlan, level: Level) -> list[str]:
    return [c.message for c in found.checks if c.level is level]


@GENERATIONS
def test_a_restart_begins_now_and_records_it(generation: str) -> None:
    found = plan(objects_of("capd", generation))
    assert (found.resumed, found.started, found.refusals) == (False, NOW, ())
    assert found.old == ("dev-mp-0-k9d4m", "dev-mp-0-x7q2p")
    [write] = found.writes
    # The start and the restart's revision, in one request.
    [revision] = decode(write.body["metadata"]["annotations"].pop(ANNOTATION)).revisions
    assert (write.target.kind, write.body) == (
        "MachinePool",
        {"metadata": {"annotations": {STARTED: format_time(NOW)}}},
    )
    assert (revision.number, revision.cause, revision.at) == (
        1,
        "rollout restart",
        format_time(NOW),
    )
    assert revision.changes == (
        Change("MachinePool", "cluster.x-k8s.io", "dev-mp-0", START, None, format_time(NOW)),
    )
    assert write.undo == {"metadata": {"annotations": {STARTED: None, ANNOTATION: None}}}
    assert not found.nothing_to_do


@GENERATIONS
def test_the_recorded_restart_goes_on_with_the_instances_older_than_it(generation: str) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    find(objects, "Machine", "vmss-workers-1")["metadata"]["creationTimestamp"] = format_time(
        NOW - timedelta(minutes=5)
    )
    annotate(objects, "MachinePool", **{STARTED: format_time(NOW - timedelta(minutes=30))})
    found = plan(objects)
    assert (found.resumed, found.writes) == (True, ())
    assert found.started == NOW - timedelta(minutes=30)
    assert found.old == ("vmss-workers-0", "vmss-workers-2")  # -1 is the new one


def test_a_machine_already_going_is_not_replaced_again() -> None:
    objects = objects_of("capd", "v1beta2")
    going = find(objects, "Machine", "dev-mp-0-k9d4m")["metadata"]
    going.update(deletionTimestamp=format_time(NOW), finalizers=["machine.cluster.x-k8s.io"])
    found = plan(objects)
    assert found.old == ("dev-mp-0-x7q2p",)
    assert unavailable(pool_of(objects)) == 1


def test_a_recorded_restart_with_nothing_old_left_still_waits_and_finishes() -> None:
    objects = objects_of("capd", "v1beta2")
    annotate(objects, "MachinePool", **{STARTED: "2026-11-01T00:00:00Z"})
    found = plan(objects)
    assert (found.old, found.resumed, found.nothing_to_do) == ((), True, False)
    [raw] = found.planned
    write = finished(raw)
    assert write.body == {"metadata": {"annotations": {STARTED: None}}}
    assert write.undo == {"metadata": {"annotations": {STARTED: "2026-11-01T00:00:00Z"}}}


@pytest.mark.parametrize(
    ("scenario", "rolls"),
    [
        ("aws-asg", "a new launch template version"),
        ("eks-managed", "EKS"),
        ("oci-instance-pool", "nothing CAPOCI does"),
    ],
)
def test_a_pool_whose_single_instances_cannot_be_replaced_is_refused_with_what_rolls_it(
    scenario: str, rolls: str
) -> None:
    found = plan(objects_of(scenario, "v1beta2"))
    [refusal] = found.refusals
    assert "single instances of this pool cannot be replaced" in refusal
    assert "what rolls it: " in refusal
    assert rolls in refusal
    assert found.writes == ()


@GENERATIONS
def test_a_paused_pool_is_refused(generation: str) -> None:
    objects = objects_of("capd", generation)
    annotate(objects, "MachinePool", **{PAUSED: ""})
    found = plan(objects)
    assert [r for r in found.refusals if "the pool is paused" in r]
    assert found.writes == ()


def test_a_pool_being_deleted_is_refused() -> None:
    objects = objects_of("capd", "v1beta2")
    meta = find(objects, "MachinePool")["metadata"]
    meta.update(deletionTimestamp=format_time(NOW), finalizers=["machinepool.cluster.x-k8s.io"])
    assert "the pool or its Cluster is being deleted" in plan(objects).refusals


def test_instances_unavailable_now_are_said_before_anything_starts() -> None:
    objects = objects_of("azure-vmss", "v1beta2")  # vmss-workers-2's Node is NotReady
    found = plan(objects, RestartRequest(max_unavailable=1))
    [warning] = said(found, Level.WARNING)
    assert warning.startswith("1 instance(s) have no Ready Node now")
    assert unavailable(pool_of(objects)) == 1


def test_an_instance_the_pool_is_short_of_is_unavailable() -> None:
    objects = objects_of("capd", "v1beta2")
    find(objects, "MachinePool")["spec"]["replicas"] = 3
    assert unavailable(pool_of(objects)) == 1


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("2099-01-01T00:00:00Z", '"2099-01-01T00:00:00Z"'),
        (format_time(NOW + timedelta(seconds=1)), f'"{format_time(NOW + timedelta(seconds=1))}"'),
        ("2099-01-01T00:00:00+01:00", '"2099-01-01T00:00:00+01:00"'),
    ],
)
def test_a_recorded_start_later_than_the_servers_time_is_refused(value: str, shown: str) -> None:
    objects = objects_of("capd", "v1beta2")
    annotate(objects, "MachinePool", **{STARTED: value})
    found = plan(objects)
    assert found.refusals == (
        f"the {STARTED} annotation is {shown}, later than the API server's time "
        f"{format_time(NOW)}: every replacement would count as old; remove the annotation to "
        "begin afresh",
    )
    assert found.writes == ()


def test_a_recorded_start_at_the_servers_time_goes_on() -> None:
    objects = objects_of("capd", "v1beta2")
    annotate(objects, "MachinePool", **{STARTED: format_time(NOW)})
    found = plan(objects)
    assert (found.refusals, found.resumed, found.started) == ((), True, NOW)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("yesterday", '"yesterday"'),
        ("2026-11-01", '"2026-11-01"'),  # a date alone
        ("2026-11-01T00:00:00", '"2026-11-01T00:00:00"'),  # no zone
        ("2026-11-01 00:00:00Z", '"2026-11-01 00:00:00Z"'),
        ("2026-11-01T00:00:00Z;$(id)", '"2026-11-01T00:00:00Z;$(id)"'),  # never trimmed
        ("2026-11-01T00:00:00Z\x1b[2J", '"2026-11-01T00:00:00Z\\x1b[2J"'),
        ("", '""'),
        ("9" * 300, '"' + "9" * 128 + '…"'),
    ],
)
def test_a_record_that_names_no_time_is_said_and_written_over(value: str, shown: str) -> None:
    objects = objects_of("capd", "v1beta2")
    annotate(objects, "MachinePool", **{STARTED: value})
    found = plan(objects)
    assert said(found, Level.WARNING) == [
        f"the {STARTED} annotation is {shown}, which is no RFC 3339 time: read as no restart "
        "recorded; a restart begun now writes its start over it"
    ]
    assert (found.resumed, found.started, found.refusals) == (False, NOW, ())
    assert found.old == ("dev-mp-0-k9d4m", "dev-mp-0-x7q2p")
    [write] = found.writes
    assert write.body["metadata"]["annotations"][STARTED] == format_time(NOW)
    # Taken back, the annotation is as it was, not gone.
    assert write.undo == {"metadata": {"annotations": {STARTED: value, ANNOTATION: None}}}
    assert write.undo_summary == (
        f"set the {STARTED} annotation back to what it was, and set {ANNOTATION} back"
    )


def test_a_machine_made_in_the_second_the_restart_begins_is_new() -> None:
    """The server counts whole seconds: a Machine stamped with the start was made after the
    plan's reads (or with them), never before."""
    objects = objects_of("capd", "v1beta2")
    find(objects, "Machine", "dev-mp-0-x7q2p")["metadata"]["creationTimestamp"] = format_time(NOW)
    found = plan(objects)
    assert (found.started, found.old) == (NOW, ("dev-mp-0-k9d4m",))
