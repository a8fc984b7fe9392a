from __future__ import annotations

import pytest
from support.objects import aws_ids, infra_pool, list_scenario, machine_pool

from kubectl_machinepool.model.pool import machine_pools
from kubectl_machinepool.model.snapshot import Snapshot


def pools_by_name(objects: list[dict]) -> dict:
    return {p.name: p for p in machine_pools(Snapshot.of(objects))}


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_ready_is_node_based_not_the_provider_copy(generation: str) -> None:
    pools = pools_by_name(list_scenario(generation, "default"))
    asg = pools["asg-workers"]
    assert (asg.desired, asg.current, asg.ready, asg.available) == (3, 3, 2, 2)


def test_v1beta2_provider_copy_is_what_the_top_level_counter_says() -> None:
    # The fixture must model the upstream behaviour the column works around.
    raw = next(
        o for o in list_scenario("v1beta2", "default") if o["metadata"]["name"] == "asg-workers"
    )
    assert raw["status"]["readyReplicas"] == 3
    assert raw["status"]["deprecated"]["v1beta1"]["readyReplicas"] == 2


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_both_generations_give_the_same_model_apart_from_api_version(generation: str) -> None:
    v2 = pools_by_name(list_scenario("v1beta2", "default"))
    other = pools_by_name(list_scenario(generation, "default"))
    for name, pool in v2.items():
        normalised = other[name]
        assert pool.infrastructure_ref is not None
        assert normalised.infrastructure_ref is not None
        assert (normalised.infrastructure_ref.api_group, normalised.infrastructure_ref.kind) == (
            pool.infrastructure_ref.api_group,
            pool.infrastructure_ref.kind,
        )
        fields = ("desired", "current", "ready", "available", "phase", "version", "has_machines")
        assert [getattr(normalised, f) for f in fields] == [getattr(pool, f) for f in fields]


def test_machines_flag_follows_infra_machine_kind() -> None:
    pools = pools_by_name(list_scenario("v1beta2", "default"))
    assert pools["vmss-workers"].has_machines is True
    assert pools["vmss-workers"].machine_kind == "AzureMachinePoolMachine"
    assert pools["asg-workers"].has_machines is False
    # The infra pool of pending-pool does not exist: unknown, not "no".
    assert pools["pending-pool"].has_machines is None


def test_infra_pool_is_matched_in_the_pools_namespace_only() -> None:
    ids = aws_ids(1)
    objects = [
        machine_pool(
            "v1beta2", "mp", "team-a", "c1", infra_kind="AWSMachinePool", provider_ids=ids
        ),
        infra_pool("AWSMachinePool", "mp", "team-b", "c1", machine_kind="AWSMachine"),
    ]
    assert pools_by_name(objects)["mp"].has_machines is None


def test_missing_status_counts_as_zero_and_missing_replicas_as_unset() -> None:
    raw = machine_pool("v1beta2", "new", "default", "c1", infra_kind="AWSMachinePool")
    del raw["status"]
    del raw["spec"]["replicas"]
    pool = pools_by_name([raw])["new"]
    assert (pool.desired, pool.current, pool.ready, pool.available, pool.phase) == (
        None,
        0,
        0,
        0,
        "",
    )


def test_pools_sort_by_namespace_then_name() -> None:
    objects = [
        machine_pool("v1beta2", name, ns, "c", infra_kind="AWSMachinePool")
        for ns, name in [("b", "a"), ("a", "z"), ("a", "b")]
    ]
    assert [(p.namespace, p.name) for p in machine_pools(Snapshot.of(objects))] == [
        ("a", "b"),
        ("a", "z"),
        ("b", "a"),
    ]


def test_v1beta1_refs_keep_their_version() -> None:
    pool = pools_by_name(list_scenario("v1beta1", "default"))["vmss-workers"]
    assert pool.infrastructure_ref is not None
    assert pool.infrastructure_ref.version == "v1beta1"
    assert pool.bootstrap_ref is not None
    assert pool.bootstrap_ref.kind == "KubeadmConfig"
    assert pools_by_name(list_scenario("v1beta1", "default"))["gke-default"].bootstrap_ref is None
