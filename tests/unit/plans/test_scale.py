"""scale's plan on the scenarios' realistic objects, both API generations: who else owns the size
(replicas-managed-by, the topology, cluster-autoscaler's bounds with and without --force), the
pool's state, who picks the instances a scale-down removes, the zones, and the one write."""

from __future__ import annotations

from typing import Any

import pytest
from support.autoscalerbounds import MAX_SIZE, MIN_SIZE, unusable
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.scale import ScalePlan, ScaleRequest, plan_scale
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
GENERATIONS = pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def plan(objects: list[Obj], replicas: int, **request: Any) -> ScalePlan:
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    return plan_scale(pool, snapshot, ScaleRequest(replicas, **request), NOW, permissions=allowed)


def said(found: ScalePlan, level: Level) -> list[str]:
    return [c.message for c in found.checks if c.level is level]


@GENERATIONS
def test_one_write_to_scale_with_the_planned_object(generation: str) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    found = plan(objects, 5)
    # The revision first, a patch of the pool (a Scale carries no annotation): a /scale write
    # that fails takes it back.
    record, write = found.writes
    assert (record.verb, record.subresource, record.target) == ("patch", "", write.target)
    assert (write.verb, write.subresource, write.done) == ("update", "scale", "scaled")
    assert write.body == {
        "apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "vmss-workers", "namespace": write.target.namespace},
        "spec": {"replicas": 5},
    }  # fmt: skip
    assert write.target.resource_version == find(objects, "MachinePool")["metadata"].get(
        "resourceVersion", ""
    )
    assert found.refusals == ()
    assert "you may update machinepools/scale" in said(found, Level.OK)[-1]


@GENERATIONS
def test_the_same_size_is_nothing_to_do(generation: str) -> None:
    found = plan(objects_of("azure-vmss", generation, healthy=True), 3)
    assert found.nothing_to_do
    assert found.writes == ()


@pytest.mark.parametrize("value", ["true", "", "external-autoscaler"])
def test_replicas_managed_by_refuses_unless_false(value: str) -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "MachinePool")["metadata"].setdefault("annotations", {})[
        f"{CAPI}/replicas-managed-by"
    ] = value
    [refusal] = plan(objects, 5).refusals
    assert refusal.startswith(f"replicas are managed by {value or '(empty value)'}")


def test_replicas_managed_by_false_is_not_managed() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "MachinePool")["metadata"].setdefault("annotations", {})[
        f"{CAPI}/replicas-managed-by"
    ] = "false"
    assert plan(objects, 5).refusals == ()


@pytest.mark.parametrize(
    ("replicas", "force", "level", "phrase"),
    [
        (5, False, Level.WARNING, "cluster-autoscaler sizes this pool between 1 and 10"),
        (11, False, Level.REFUSED, "11 is above its maximum 10"),
        (0, False, Level.REFUSED, "0 is below its minimum 1"),
        (11, True, Level.WARNING, "--force: going ahead): the autoscaler may change it back"),
    ],
)
def test_cluster_autoscaler_bounds(replicas: int, force: bool, level: Level, phrase: str) -> None:
    found = plan(objects_of("aws-asg", "v1beta2", healthy=True), replicas, force=force)
    assert any(phrase in m for m in said(found, level)), found.checks


def bounded(low: str | None, high: str | None) -> list[Obj]:
    """aws-asg (3 replicas) with these annotations (None: absent)."""
    objects = objects_of("aws-asg", "v1beta2", healthy=True)
    annotations = find(objects, "MachinePool")["metadata"]["annotations"]
    for key, value in ((MIN_SIZE, low), (MAX_SIZE, high)):
        annotations.pop(key, None)
        if value is not None:
            annotations[key] = value
    return objects


def test_max_size_alone_is_a_node_group_from_zero() -> None:
    found = plan(bounded(None, "10"), 5)
    assert "cluster-autoscaler sizes this pool between 0 and 10" in said(found, Level.WARNING)[0]
    assert plan(bounded(None, "10"), 11).refusals


def test_min_size_at_zero_alone_is_no_node_group() -> None:
    found = plan(bounded("0", None), 11)
    assert not [m for m in said(found, Level.WARNING) if "autoscaler" in m]
    assert found.refusals == ()


@unusable(model=True)
def test_bounds_the_autoscaler_cannot_use_refuse_unless_forced(
    low: str | None, high: str | None, named: str
) -> None:
    [refusal] = plan(bounded(low, high), 3).refusals
    assert refusal.startswith("cluster-autoscaler cannot use this pool's node-group bounds: ")
    assert named in refusal
    assert refusal.endswith("; fix the annotations, or --force to scale anyway")
    assert "below its minimum" not in refusal
    forced = plan(bounded(low, high), 3, force=True)
    assert forced.refusals == ()
    [warning] = [m for m in said(forced, Level.WARNING) if "node-group bounds" in m]
    assert named in warning
    assert warning.endswith("; --force: going ahead without them")


@GENERATIONS
def test_a_topology_that_sets_replicas_refuses_and_one_that_does_not_allows(
    generation: str,
) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    labels = find(objects, "MachinePool")["metadata"]["labels"]
    labels["topology.cluster.x-k8s.io/owned"] = ""
    labels["topology.cluster.x-k8s.io/pool-name"] = "workers"
    entry: Obj = {"class": "default", "name": "workers"}
    find(objects, "Cluster")["spec"]["topology"] = {"workers": {"machinePools": [entry]}}
    assert plan(objects, 5).refusals == ()
    entry["replicas"] = 3
    [refusal] = plan(objects, 5).refusals
    assert "spec.topology.workers.machinePools[workers].replicas (3)" in refusal


def test_current_replicas_is_a_precondition() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    assert plan(objects, 5, current=3).refusals == ()
    [refusal] = plan(objects, 5, current=4).refusals
    assert refusal.startswith("spec.replicas is 3, not --current-replicas 4")


def test_deleting_refuses_and_paused_warns() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "Cluster")["metadata"]["deletionTimestamp"] = "2026-11-29T14:00:00Z"
    [refusal] = plan(objects, 5).refusals
    assert refusal.endswith("prod is being deleted")
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    find(objects, "AzureMachinePool")["metadata"].setdefault("annotations", {})[
        f"{CAPI}/paused"
    ] = ""
    found = plan(objects, 5)
    assert found.refusals == ()
    assert any("reconciliation is paused" in m for m in said(found, Level.WARNING))


def test_who_picks_the_instances_a_scale_down_removes() -> None:
    azure = plan(objects_of("azure-vmss", "v1beta2", healthy=True), 2)
    assert any("the provider picks which instances go" in m for m in said(azure, Level.OK))
    aws = plan(objects_of("aws-asg", "v1beta2", healthy=True), 2)
    assert any(
        m.startswith("the cloud picks which instances go: AWSMachinePool cannot be told which")
        for m in said(aws, Level.OK)
    )
    growing = plan(objects_of("aws-asg", "v1beta2", healthy=True), 4)
    assert not [m for m in said(growing, Level.OK) if "picks which instances" in m]


def test_zero_replicas_warns() -> None:
    objects = objects_of("azure-vmss", "v1beta2", healthy=True)
    found = plan(objects, 0)
    assert "0 replicas: every instance goes, and the Pods on its Nodes with it" in said(
        found, Level.WARNING
    )
