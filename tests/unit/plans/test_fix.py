"""fix's plan on the scenarios' realistic objects: each rule with a remedy of this tool's writes
made the step its finding asks for (rule -> step), or said why not; one disruptive step per pool
unless every step is asked for; no step that rolls a pool whose rollout is in progress, none but
the resume of this tool's pause on a paused pool; the rest outside the tool."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of, pause, upgrade, vmss_surge
from support.scenarios import VARIANTS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.core import CapiVersion
from kubectl_machinepool.diagnostics.rules import RULES, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.revisions import Change, Revision, encode
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.fix import FixPlan, Held, plan_fix

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
GALLERY = {"gallery": "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019", "name": "capi-ubun2-2404"}


def planned(objects: list[Obj], **asked: Any) -> FixPlan:
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    capi = CapiVersion(None, "not read")
    findings = diagnose(description, snapshot, capi, Thresholds())
    return plan_fix(description, snapshot, findings, capi=capi, thresholds=Thresholds(), **asked)


def lines(plan: FixPlan) -> list[str]:
    return [step.line for step in plan.steps]


def held(plan: FixPlan, code: str) -> Held:
    [found] = [h for h in plan.held if h.finding.code == code]
    return found


def healthy_vmss() -> list[Obj]:
    return objects_of("azure-vmss", "v1beta2", healthy=True)


def bounds(objects: list[Obj], low: int, high: int) -> None:
    find(objects, "MachinePool")["metadata"].setdefault("annotations", {}).update({
        f"{CAPI}/cluster-api-autoscaler-node-group-min-size": str(low),
        f"{CAPI}/cluster-api-autoscaler-node-group-max-size": str(high),
    })  # fmt: skip


def test_the_rules_with_a_remedy_of_this_tool() -> None:
    fixable = {r.code: r.remedy.command for r in RULES if r.remedy}
    assert fixable == {
        "MP0001": "rollout resume",
        "MP0302": "scale",
        "MP1101": "rollout restart",
        "MP1102": "delete-machine",
        "MP1201": "rollout undo",
        "MP1301": "upgrade",
        "MP1401": "rollout restart",
    }


def test_a_healthy_pool_has_nothing_to_fix() -> None:
    assert planned(healthy_vmss()) == FixPlan((), (), ())


def test_a_forgotten_pause_of_this_tool_is_resumed() -> None:
    plan = planned(VARIANTS["capd-paused"]("v1beta2", NAMESPACE))
    [step] = plan.steps
    assert step.line == f"kubectl machinepool rollout resume dev-mp-0 -n {NAMESPACE}"
    assert [f.code for f in step.findings] == ["MP0001"]
    assert "`rollout pause` paused DockerMachinePool/dev-mp-0, MachinePool/dev-mp-0" in step.why
    assert (step.disruptive, step.rolls) == (False, False)  # its rollout is done


@pytest.mark.parametrize("how", ["cluster", "pool"])
def test_a_pause_someone_else_holds_is_outside_the_tool(how: str) -> None:
    objects = VARIANTS["capd-paused"]("v1beta2", NAMESPACE)
    if how == "cluster":
        pause(objects, "cluster")
        said = "paused by someone else too (Cluster spec.paused)"
    else:
        find(objects, "MachinePool")["metadata"]["annotations"].pop("kubectl-machinepool/paused")
        said = "no kubectl-machinepool/paused record on the pool"
    plan = planned(objects)
    assert plan.steps == ()
    assert said in held(plan, "MP0001").reason
    assert held(plan, "MP0001").step is None


def test_a_resume_that_lets_a_rollout_go_on_is_disruptive() -> None:
    objects = VARIANTS["capd-paused"]("v1beta2", NAMESPACE)
    upgrade(objects, "v1.34.1")
    [step] = planned(objects).steps
    assert (step.command, step.disruptive, step.rolls) == ("rollout resume", True, True)
    assert "its rollout goes on: " in step.why


def test_a_version_image_split_on_a_done_rollout_is_upgraded_to_its_version() -> None:
    objects = healthy_vmss()
    template = find(objects, "AzureMachinePool")["spec"]["template"]
    template["image"] = {"computeGallery": {**GALLERY, "version": "1.32.9"}}
    [step] = planned(objects).steps
    assert step.line == (
        f"kubectl machinepool upgrade vmss-workers -n {NAMESPACE} --version v1.33.4"
    )
    assert step.option("--version") == "v1.33.4"
    assert "spec.template.image.computeGallery.version for v1.33.4" in step.writes
    assert (step.disruptive, step.rolls) == (True, True)


def test_steps_that_roll_wait_for_a_rollout_in_progress() -> None:
    objects = objects_of("azure-image-drift", "v1beta2")
    plan = planned(objects)
    assert plan.steps == ()
    for code in ("MP1301", "MP1101"):
        entry = held(plan, code)
        assert entry.reason.startswith("its rollout is stuck (2 old instances left")
        assert entry.step is not None
        assert entry.step.rolls
    assert "old ones" in held(plan, "MP1102").reason  # no instance to delete: no step at all


def test_a_surge_instance_that_holds_a_rollout_is_deleted_with_its_cause_read() -> None:
    objects = healthy_vmss()
    upgrade(objects, "v1.34.1")
    machine = vmss_surge(objects, "v1beta2", bootstrap_failed=True)
    plan = planned(objects)
    [step] = plan.steps
    assert step.line == (
        f"kubectl machinepool delete-machine {machine} -n {NAMESPACE} --pool vmss-workers"
    )
    assert "BootstrapFailed" in step.why
    assert "x509: certificate has expired" in step.why
    assert (step.disruptive, step.rolls) == (True, False)
    assert held(plan, "MP1101").step is not None  # the restart rolls: held while it is stuck


def test_an_instance_without_a_machine_is_not_deleted() -> None:
    from support.rollouts import asg_surge

    objects = objects_of("aws-asg", "v1beta2", healthy=True)
    upgrade(objects)
    asg_surge(objects, joined_minutes=None, recorded=True)
    plan = planned(objects)
    assert not [s for s in plan.steps if s.command == "delete-machine"]
    assert "AWSMachinePool" in held(plan, "MP1102").reason


@pytest.mark.parametrize(
    ("low", "high", "to", "disruptive"), [(5, 8, "5", False), (1, 2, "2", True)]
)
def test_a_size_outside_the_autoscaler_bounds_is_scaled_to_the_nearest(
    low: int, high: int, to: str, disruptive: bool
) -> None:
    objects = healthy_vmss()
    bounds(objects, low, high)
    [step] = planned(objects).steps
    assert step.argv[-4:] == ("--replicas", to, "--current-replicas", "3")
    assert (step.disruptive, step.rolls) == (disruptive, False)


def test_one_disruptive_step_per_pool_unless_every_step_is_asked_for() -> None:
    objects = healthy_vmss()
    upgrade(objects, "v1.34.1")
    vmss_surge(objects, "v1beta2", bootstrap_failed=True)
    bounds(objects, 1, 2)  # 3 replicas: down to 2, disruptive too
    first = planned(objects)  # in diagnose's order: MP0302, then MP1102
    assert [s.command for s in first.steps] == ["scale"]
    [later] = [h for h in first.held if h.step and h.step.command == "delete-machine"]
    assert later.reason.startswith("one disruptive step per pool in a run")
    every = planned(objects, all_steps=True)
    assert [s.command for s in every.steps] == ["scale", "delete-machine"]
    only = planned(objects, rules={"MP1102"})
    assert [s.command for s in only.steps] == ["delete-machine"]
    assert only.outside == ()
    assert only.held == ()


def test_what_no_write_of_this_tool_remedies_is_outside() -> None:
    plan = planned(objects_of("aws-asg", "v1beta2"))
    assert plan.steps == ()
    assert {f.code for f in plan.outside} == {"MP0101", "MP1701", "MP1801", "MP1901"}


def test_a_step_is_found_again_by_its_command_line() -> None:
    plan = planned(VARIANTS["capd-paused"]("v1beta2", NAMESPACE))
    [step] = plan.steps
    assert plan.find(step.argv) == step
    assert plan.find(("scale", "dev-mp-0")) is None


def _newer_than_its_control_plane(revisions: list[Revision]) -> list[Obj]:
    """The healthy VMSS pool rolled out to v1.34.1, its control plane at v1.33.4, these
    revisions on it."""
    objects = healthy_vmss()
    upgrade(objects, "v1.34.1")
    for node in (o for o in objects if o["kind"] == "Node"):
        node["status"]["nodeInfo"]["kubeletVersion"] = "v1.34.1"
    ref = find(objects, "Cluster")["spec"]["controlPlaneRef"]
    group = ref.get("apiGroup") or ref["apiVersion"].split("/")[0]
    plane = {"metadata": {"name": ref["name"], "namespace": NAMESPACE}, "spec": {}, "status": {}}
    plane.update(apiVersion=f"{group}/v1beta2", kind=ref["kind"])
    plane["spec"]["version"] = plane["status"]["version"] = "v1.33.4"
    annotations = find(objects, "MachinePool")["metadata"].setdefault("annotations", {})
    annotations["kubectl-machinepool/revisions"] = encode(revisions)
    return [*objects, plane]


def _revision(number: int, path: str, before: str, after: str) -> Revision:
    change = Change("MachinePool", CAPI, "vmss-workers", path, before, after)
    return Revision(number, f"upgrade --version {after}", "2026-11-29T14:00:00Z", "0.1", (change,))


def test_an_upgrade_past_the_control_plane_is_undone_to_the_revision_before() -> None:
    version = "spec.template.spec.version"
    scaled = Revision(
        1, "scale --replicas 3", "2026-11-29T13:00:00Z", "0.1",
        (Change("MachinePool", CAPI, "vmss-workers", "spec.replicas", 2, 3),),
    )  # fmt: skip
    plan = planned(
        _newer_than_its_control_plane([scaled, _revision(2, version, "v1.33.4", "v1.34.1")])
    )
    [step] = [s for s in plan.steps if s.command == "rollout undo"]
    assert step.line == (
        f"kubectl machinepool rollout undo vmss-workers -n {NAMESPACE} --to-revision 1"
    )
    assert "revision 2 (upgrade --version v1.34.1) moved it from v1.33.4" in step.why
    assert (step.disruptive, step.rolls) == (True, True)
    alone = planned(_newer_than_its_control_plane([_revision(1, version, "v1.33.4", "v1.34.1")]))
    [step] = [s for s in alone.steps if s.command == "rollout undo"]
    assert step.argv[-2:] == ("-n", NAMESPACE)  # the only revision: undone to before it
    by_hand = planned(_newer_than_its_control_plane([scaled]))
    assert not [s for s in by_hand.steps if s.command == "rollout undo"]
    reasons = {h.reason for h in by_hand.held if h.finding.code == "MP1201"}
    assert reasons == {
        "the last revision (1: scale --replicas 3) did not move the pool from a version the "
        "control plane runs to this one"
    }
