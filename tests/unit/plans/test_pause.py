"""rollout pause and resume plans on the scenarios' realistic objects, both API generations: what
is set, what is recorded, what resume lifts (only what the record names), and the refusals."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.pause import RECORD, PausePlan, plan_pause, plan_resume
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
PAUSED = "cluster.x-k8s.io/paused"
GENERATIONS = pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
MP, AMP = "MachinePool/vmss-workers", "AzureMachinePool/vmss-workers"


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def plan(objects: list[Obj], pausing: bool, caveat: str | None = None) -> PausePlan:
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    if pausing:
        return plan_pause(
            pool, snapshot, plural="azuremachinepools", caveat=caveat, permissions=allowed
        )
    return plan_resume(pool, snapshot, plural="azuremachinepools", permissions=allowed)


def annotate(objects: list[Obj], kind: str, **values: str) -> None:
    find(objects, kind)["metadata"].setdefault("annotations", {}).update(values)


def bodies(found: PausePlan) -> list[tuple[str, Any]]:
    return [(w.target.kind, w.body["metadata"]["annotations"]) for w in found.writes if w.body]


def said(found: PausePlan, level: Level) -> list[str]:
    return [c.message for c in found.checks if c.level is level]


@GENERATIONS
def test_pause_sets_both_and_records_them(generation: str) -> None:
    found = plan(objects_of("azure-vmss", generation, healthy=True), True, "a VMSS upgrade")
    assert bodies(found) == [
        ("AzureMachinePool", {PAUSED: ""}),
        ("MachinePool", {RECORD: f"{AMP},{MP}", PAUSED: ""}),
    ]
    mp_write = found.writes[1]
    assert mp_write.undo == {"metadata": {"annotations": {RECORD: None, PAUSED: None}}}
    assert "what a pause leaves running (AzureMachinePool): a VMSS upgrade" in said(
        found, Level.WARNING
    )
    assert found.refusals == ()


def test_pause_leaves_someone_elses_pause_and_records_only_its_own() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    annotate(objects, "MachinePool", **{PAUSED: "ops"})
    found = plan(objects, True)
    assert bodies(found) == [("AzureMachinePool", {PAUSED: ""}), ("MachinePool", {RECORD: AMP})]
    assert f"already paused: {MP}" in said(found, Level.OK)


def test_pause_of_a_paused_pool_is_nothing_to_do() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    annotate(objects, "MachinePool", **{PAUSED: "", RECORD: f"{AMP},{MP}"})
    annotate(objects, "AzureMachinePool", **{PAUSED: ""})
    found = plan(objects, True, "a VMSS upgrade")
    assert found.nothing_to_do
    assert not said(found, Level.WARNING)


@pytest.mark.parametrize("where", ["Cluster", "MachinePool"])
def test_pause_refuses_a_deleting_pool_and_resume_goes_ahead(where: str) -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, where)["metadata"]["deletionTimestamp"] = "2026-11-29T14:00:00Z"
    [refusal] = plan(objects, True).refusals
    assert "is being deleted: a pause would only hold the deletion" in refusal
    annotate(objects, "MachinePool", **{PAUSED: "", RECORD: MP})
    resumed = plan(objects, False)
    assert resumed.refusals == ()
    assert any("it goes on once resumed" in m for m in said(resumed, Level.WARNING))


def test_pause_refuses_a_topology_owned_pool() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "MachinePool")["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
    [refusal] = plan(objects, True).refusals
    assert refusal.startswith("the topology controller owns this pool")


@GENERATIONS
def test_resume_lifts_exactly_what_the_record_names(generation: str) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    annotate(objects, "MachinePool", **{PAUSED: "", RECORD: f"{AMP},{MP}"})
    annotate(objects, "AzureMachinePool", **{PAUSED: ""})
    found = plan(objects, False)
    assert bodies(found) == [
        ("AzureMachinePool", {PAUSED: None}),
        ("MachinePool", {RECORD: None, PAUSED: None}),
    ]
    assert found.writes[1].undo == {
        "metadata": {"annotations": {RECORD: f"{AMP},{MP}", PAUSED: ""}}
    }


def test_resume_leaves_a_pause_the_record_does_not_name() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    annotate(objects, "MachinePool", **{PAUSED: "ops", RECORD: AMP})
    annotate(objects, "AzureMachinePool", **{PAUSED: ""})
    found = plan(objects, False)
    assert bodies(found) == [("AzureMachinePool", {PAUSED: None}), ("MachinePool", {RECORD: None})]
    assert f"paused by someone else, left as it is: {MP}" in said(found, Level.WARNING)


def test_resume_without_a_record_writes_nothing() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    assert plan(objects, False).nothing_to_do
    annotate(objects, "AzureMachinePool", **{PAUSED: ""})
    found = plan(objects, False)
    assert found.nothing_to_do
    assert f"paused by someone else, left as it is: {AMP}" in said(found, Level.WARNING)


def test_a_recorded_object_no_longer_the_pools_is_said() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    annotate(objects, "MachinePool", **{RECORD: "AzureMachinePool/old-pool"})
    found = plan(objects, False)
    assert bodies(found) == [("MachinePool", {RECORD: None})]
    assert "AzureMachinePool/old-pool is recorded as paused but is not this pool's now" in said(
        found, Level.WARNING
    )
