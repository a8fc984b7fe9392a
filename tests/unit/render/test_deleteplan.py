"""delete-machine's plan, built purely from scenario objects: verdicts, checks and writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS, as_provider
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection, selector_matches
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Request, Wanted, find_target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Budget, Disruption, disruption_of
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.deleteplan import render_plan

Obj = dict[str, Any]
NO_BUDGETS = Disruption(())
REPLACE = Request(Mode.REPLACE)


def find(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    return next(
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    )


def plan(
    scenario: str,
    wanted: Wanted,
    request: Request = REPLACE,
    change: Callable[[list[Obj]], Any] | None = None,
    *,
    generation: str = "v1beta2",
    permissions: dict[Any, bool | None] | None = None,
    disruption: Disruption = NO_BUDGETS,
) -> Plan:
    objects = SCENARIOS[scenario](generation, NAMESPACE)
    if change is not None:
        change(objects)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    [target] = find_target(description, snapshot, wanted)
    writes = writes_for(target, request, NOW)
    allowed = permissions if permissions is not None else {w.access: True for w in writes}
    return plan_deletion(target, request, NOW, allowed, disruption)


def refusals(p: Plan) -> list[str]:
    return [c.message for c in p.refusals]


CAPD = Wanted(machine="dev-mp-0-x7q2p")
AZURE = Wanted(machine="vmss-workers-1")


def test_a_supported_replace_is_one_delete_with_a_clean_bill() -> None:
    p = plan("capd", CAPD)
    assert refusals(p) == []
    assert [(w.verb, w.resource, w.target.name) for w in p.writes] == [
        ("delete", "machines", "dev-mp-0-x7q2p")
    ]
    assert p.writes[0].target.uid  # the delete names the uid the plan saw


def test_scale_down_annotates_then_updates_the_scale_subresource() -> None:
    p = plan("capd", CAPD, Request(Mode.SCALE_DOWN))
    annotate, scale = p.writes
    assert (annotate.verb, scale.verb, scale.resource) == ("patch", "update", "machinepools/scale")
    assert annotate.body == {
        "metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": "2026-11-29T15:00:00Z"}}
    }
    assert annotate.undo == {"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": None}}}
    assert scale.body is not None
    assert scale.body["spec"] == {"replicas": 1}


def test_scale_down_of_a_pool_whose_replicas_the_topology_sets_is_refused() -> None:
    """The topology controller would write spec.replicas back, as it does after scale."""

    def topology(replicas: int | None) -> Callable[[list[Obj]], None]:
        def change(objects: list[Obj]) -> None:
            labels = find(objects, "MachinePool")["metadata"].setdefault("labels", {})
            labels["topology.cluster.x-k8s.io/owned"] = ""
            labels["topology.cluster.x-k8s.io/pool-name"] = "workers"
            entry: Obj = {"class": "default", "name": "workers"}
            if replicas is not None:
                entry["replicas"] = replicas
            find(objects, "Cluster")["spec"]["topology"] = {"workers": {"machinePools": [entry]}}

        return change

    [refusal] = refusals(plan("capd", CAPD, Request(Mode.SCALE_DOWN), change=topology(2)))
    assert "spec.topology.workers.machinePools[workers].replicas (2)" in refusal
    assert refusals(plan("capd", CAPD, Request(Mode.SCALE_DOWN), change=topology(None))) == []
    assert refusals(plan("capd", CAPD, change=topology(2))) == []  # a replacement keeps the size


@pytest.mark.parametrize(
    ("generation", "stored"),
    [("v1beta2", {"spec": {"deletion": {"nodeDrainTimeoutSeconds": 600}}}), ("v1beta1", {"spec": {"nodeDrainTimeout": "600s"}})],
)  # fmt: skip
def test_drain_timeout_is_written_in_each_generation_shape(generation, stored) -> None:
    p = plan("capd", CAPD, Request(Mode.REPLACE, timedelta(minutes=10)), generation=generation)
    first, delete = p.writes
    assert (first.body, delete.verb) == (stored, "delete")
    assert first.undo is not None  # back to unset if the delete fails


def test_aws_machines_replace_but_do_not_scale_down() -> None:
    aws = as_provider("AWSMachinePool", "AWSMachine")
    replace = plan("capd", CAPD, change=aws)
    assert refusals(replace) == []
    assert replace.checks[0].message.startswith("supported: the instance is drained and deleted")
    scale = plan("capd", CAPD, Request(Mode.SCALE_DOWN), change=aws)
    assert any("CAPA ignores the annotation" in r for r in refusals(scale))


def test_an_unverified_provider_needs_the_override() -> None:
    acme = as_provider("AcmeMachinePool", "AcmeMachine")
    refused = plan("capd", CAPD, change=acme)
    assert refusals(refused)[0].startswith("unverified: AcmeMachinePool has AcmeMachine Machines")
    allowed = plan("capd", CAPD, Request(Mode.REPLACE, allow_unverified=True), change=acme)
    assert refusals(allowed) == []
    assert allowed.checks[0].level is Level.WARNING
    # Whether the provider removes the annotated instance first is not known either.
    scale = plan("capd", CAPD, Request(Mode.SCALE_DOWN, allow_unverified=True), change=acme)
    assert "--scale-down could remove any instance" in refusals(scale)[0]
    assert "None" not in scale.then


def test_oci_is_refused_with_what_to_do_instead() -> None:
    [refusal] = refusals(plan("oci-instance-pool", Wanted(machine="oci-workers-0")))
    assert "CAPOCI only removes the OCIMachinePoolMachine finalizer" in refusal
    assert "instead: change spec.replicas" in refusal


def paused_cluster(objects: list[Obj]) -> None:
    find(objects, "Cluster")["spec"]["paused"] = True


def deleting_machine(objects: list[Obj]) -> None:
    find(objects, "Machine", "dev-mp-0-x7q2p")["metadata"]["deletionTimestamp"] = (
        "2026-11-29T14:00:00Z"
    )


def orphaned_infra_machine(objects: list[Obj]) -> None:
    find(objects, "DockerMachine", "dev-mp-0-x7q2p")["metadata"]["ownerReferences"] = [
        find(objects, "DockerMachine", "dev-mp-0-x7q2p")["metadata"]["ownerReferences"][0]
    ]


def without_infra_machine(objects: list[Obj]) -> None:
    objects.remove(find(objects, "DockerMachine", "dev-mp-0-x7q2p"))


def no_controller(objects: list[Obj]) -> None:
    find(objects, "Machine", "dev-mp-0-x7q2p")["metadata"]["ownerReferences"] = []


def owner_not_controller(objects: list[Obj]) -> None:
    find(objects, "Machine", "dev-mp-0-x7q2p")["metadata"]["ownerReferences"][0]["controller"] = (
        False
    )


def annotated(kind: str, key: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        find(objects, kind, "dev-mp-0-x7q2p")["metadata"].setdefault("annotations", {})[key] = ""

    return change


def without_cluster(objects: list[Obj]) -> None:
    objects.remove(find(objects, "Cluster"))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (no_controller, "is not controlled by MachinePool dev-mp-0"),
        (owner_not_controller, "is not controlled by MachinePool dev-mp-0"),
        (annotated("Machine", "cluster.x-k8s.io/paused"), "Machine dev-mp-0-x7q2p is paused"),
        (
            annotated("DockerMachine", "cluster.x-k8s.io/paused"),
            "DockerMachine dev-mp-0-x7q2p is paused",
        ),
        (without_cluster, "Cluster capi-prod/dev does not exist"),
        (paused_cluster, "reconciliation is paused (Cluster spec.paused)"),
        (deleting_machine, "Machine dev-mp-0-x7q2p is already being deleted"),
        (orphaned_infra_machine, "does not name Machine dev-mp-0-x7q2p as its owner"),
        (without_infra_machine, "DockerMachine dev-mp-0-x7q2p does not exist"),
    ],
)
def test_unsafe_states_are_refused(change, says) -> None:
    assert any(says in r for r in refusals(plan("capd", CAPD, change=change)))


def test_replicas_managed_elsewhere_or_at_the_minimum_refuse_scale_down() -> None:
    def managed(objects: list[Obj]) -> None:
        find(objects, "MachinePool")["metadata"]["annotations"] = {
            "cluster.x-k8s.io/replicas-managed-by": "external-autoscaler"
        }

    scale = Request(Mode.SCALE_DOWN)
    assert any(
        "managed by external-autoscaler" in r for r in refusals(plan("capd", CAPD, scale, managed))
    )

    # CAPZ with replicas-managed-by: a plain delete already shrinks the pool.
    def azure_managed(objects: list[Obj]) -> None:
        find(objects, "MachinePool")["metadata"].setdefault("annotations", {})[
            "cluster.x-k8s.io/replicas-managed-by"
        ] = "true"

    [why] = [
        r for r in refusals(plan("azure-vmss", AZURE, scale, azure_managed)) if "--scale-down" in r
    ]
    assert "with replicas-managed-by the removal already sticks" in why
    replace = plan("azure-vmss", AZURE, change=azure_managed)
    assert "VMSS stays one smaller" in replace.checks[0].message


def test_hooks_and_an_unread_cluster_are_warnings() -> None:
    hook = annotated("Machine", "pre-drain.delete.hook.machine.cluster.x-k8s.io/backup")
    [warning] = [c.message for c in plan("capd", CAPD, change=hook).checks if "hooks" in c.message]
    assert "waits until their owners remove them" in warning
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of([o for o in objects if o["kind"] != "Cluster"])
    unread = replace(snapshot, unread=(("cluster.x-k8s.io", "Cluster"),))
    [target] = find_target(describe(unread, Selection(), NOW), unread, CAPD)
    p = plan_deletion(target, REPLACE, NOW, {}, NO_BUDGETS)
    assert any(c.level is Level.WARNING and "could not be read" in c.message for c in p.checks)
    assert not any("does not exist" in r for r in refusals(p))


def test_scale_down_puts_back_an_annotation_that_was_there() -> None:
    def marked(objects: list[Obj]) -> None:
        find(objects, "Machine", "dev-mp-0-x7q2p")["metadata"]["annotations"][
            "cluster.x-k8s.io/delete-machine"
        ] = "set-by-cluster-autoscaler"

    annotate = plan("capd", CAPD, Request(Mode.SCALE_DOWN), marked).writes[0]
    assert annotate.undo == {
        "metadata": {
            "annotations": {"cluster.x-k8s.io/delete-machine": "set-by-cluster-autoscaler"}
        }
    }
    azure = plan("azure-vmss", AZURE, Request(Mode.SCALE_DOWN))
    assert any("cannot be taken back" in c.message for c in azure.checks)


def test_the_drain_bound_comes_from_what_is_written() -> None:
    blocking = Disruption((Budget("shop", "web", 0, ("web-0",)),))
    bounded = Request(Mode.SCALE_DOWN, timedelta(minutes=10))
    p = plan("capd", CAPD, bounded, disruption=blocking)
    assert [w.done for w in p.writes] == ["patched", "annotated", "scaled"]
    assert refusals(p) == []

    def unlimited(objects: list[Obj]) -> None:
        find(objects, "Machine", "dev-mp-0-x7q2p")["spec"]["nodeDrainTimeout"] = "0s"

    zero = plan("capd", CAPD, change=unlimited, generation="v1beta1", disruption=blocking)
    assert any("would wait forever" in r for r in refusals(zero))

    def ten_minutes(objects: list[Obj]) -> None:
        find(objects, "Machine", "dev-mp-0-x7q2p")["spec"]["deletion"] = {
            "nodeDrainTimeoutSeconds": 600
        }

    stored = plan("capd", CAPD, change=ten_minutes, disruption=blocking)
    assert any("gives up after 10m" in c.message for c in stored.checks)


def test_budgets_and_permissions_decide_before_any_write() -> None:
    blocking = Disruption((Budget("shop", "web", 0, ("web-0", "web-1")),))
    [refusal] = refusals(plan("capd", CAPD, disruption=blocking))
    assert refusal.startswith(
        "PodDisruptionBudgets allow no disruption now: shop/web (pods web-0, web-1)"
    )
    bounded = plan("capd", CAPD, Request(Mode.REPLACE, timedelta(minutes=5)), disruption=blocking)
    assert refusals(bounded) == []
    unknown = plan(
        "capd", CAPD, disruption=Disruption(None, "the workload API server did not answer")
    )
    assert "were not checked: the workload API server did not answer" in unknown.checks[-3].message
    unknown_access = plan("capd", CAPD, Request(Mode.SCALE_DOWN), permissions={})
    assert [c.level for c in unknown_access.checks if "you may" in c.message] == [Level.WARNING] * 2
    writes = writes_for(unknown_access.target, Request(Mode.SCALE_DOWN), NOW)
    no_scale = {writes[0].access: True, writes[1].access: False}
    denied = plan("capd", CAPD, Request(Mode.SCALE_DOWN), permissions=no_scale)
    assert refusals(denied) == [
        "you may not update machinepools/scale.cluster.x-k8s.io in namespace capi-prod"
    ]


def pod(name: str, **extra: Any) -> Obj:
    meta = {"name": name, "namespace": "shop", "labels": {"app": "web"}, **extra.pop("meta", {})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "status": {"phase": "Running"},
        **extra,
    }


def test_only_pods_the_drain_evicts_count_against_budgets() -> None:
    pods = [
        pod("web-0"),
        pod("agent", meta={"ownerReferences": [{"kind": "DaemonSet", "name": "agent"}]}),
        pod("static", meta={"annotations": {"kubernetes.io/config.mirror": "x"}}),
        pod("skipped", meta={"labels": {"app": "web", "cluster.x-k8s.io/drain": "skip"}}),
        pod("done", status={"phase": "Succeeded"}),
    ]
    budget = {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 0},
    }  # fmt: skip
    elsewhere = json.loads(json.dumps(budget))
    elsewhere["metadata"]["namespace"] = "other"
    nothing = {**budget, "spec": {}}  # policy/v1: a budget without selector selects no pod
    assert disruption_of(pods, [budget, elsewhere, nothing]).blocking == (
        Budget("shop", "web", 0, ("web-0",)),
    )


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Near"}]}, {"a": "1"}, False),
    ],
)  # fmt: skip
def test_label_selector_objects(selector, labels, matches) -> None:
    assert selector_matches(selector, labels) is matches


def test_instances_are_found_by_machine_node_or_provider_id() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    node = find(objects, "Machine", "vmss-workers-1")["status"]["nodeRef"]["name"]
    pid = find(objects, "Machine", "vmss-workers-1")["spec"]["providerID"]
    for wanted in (AZURE, Wanted(node=node), Wanted(provider_id=pid)):
        [target] = find_target(description, snapshot, wanted)
        assert target.name == f"Machine {NAMESPACE}/vmss-workers-1"
    assert find_target(description, snapshot, Wanted(machine="nope")) == []


def test_the_plan_as_the_user_reads_it(golden) -> None:
    p = plan("capd", CAPD, Request(Mode.SCALE_DOWN))
    golden("delete-machine/capd-scale-down.txt", render_plan(p, Palette(False)))
