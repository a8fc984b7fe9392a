"""scale against the real API server, in both API generations: the /scale write with its
preconditions, the dry runs, and every refusal that leaves the pool as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Result, run_cli
from support.scenarios import SCENARIOS, zoned

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"


@pytest.fixture
def loaded(mgmt: ManagementCluster) -> Iterator[Callable[..., str]]:
    """A healthy scenario, changed as the test says; its Nodes deleted afterwards."""
    created: list[list[Obj]] = []

    def load(scenario: str, change: Callable[[list[Obj]], None] = lambda _: None) -> str:
        namespace = mgmt.new_namespace()
        salt = namespace.removeprefix("t-")
        build = SCENARIOS[scenario]
        objects = build(
            mgmt.generation, namespace, salt, **({} if scenario == "capd" else {"healthy": True})
        )
        change(objects)
        create_scenario(mgmt, objects)
        created.append(objects)
        return namespace

    yield load
    for objects in created:
        delete_nodes(mgmt, objects)


def scale(mgmt: ManagementCluster, capsys, namespace: str, *args: str) -> Result:
    return run_cli(
        capsys, "scale", *args, "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), "--yes"
    )


def replicas(mgmt: ManagementCluster, namespace: str, name: str) -> int:
    path = f"/apis/{CAPI}/{mgmt.generation}/namespaces/{namespace}/machinepools/{name}"
    return int(mgmt.api.request("GET", path)["spec"]["replicas"])


def annotate(**annotations: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        pool["metadata"].setdefault("annotations", {}).update(annotations)

    return change


def test_a_pool_is_scaled_through_scale(mgmt, capsys, loaded) -> None:
    ns = loaded("capd")
    result = scale(mgmt, capsys, ns, "dev-mp-0", "--replicas", "3")
    assert result.code == 0, result.err
    assert f"Scale MachinePool {ns}/dev-mp-0" in result.out
    assert "from 2 to 3 replicas" in result.out
    assert result.out.splitlines()[-1] == "machinepool.cluster.x-k8s.io/dev-mp-0 scaled"
    assert replicas(mgmt, ns, "dev-mp-0") == 3


def test_dry_runs_write_nothing(mgmt, capsys, loaded) -> None:
    ns = loaded("capd")
    client = scale(mgmt, capsys, ns, "dev-mp-0", "--replicas", "1", "--dry-run=client")
    assert client.code == 0, client.err
    assert "machinepool.cluster.x-k8s.io/dev-mp-0 scaled (dry run)" in client.out
    server = scale(mgmt, capsys, ns, "dev-mp-0", "--replicas", "1", "--dry-run=server")
    assert server.code == 0, server.err
    assert "(server dry run)" in server.out
    assert replicas(mgmt, ns, "dev-mp-0") == 2


def test_a_scale_down_says_who_picks_the_instances(mgmt, capsys, loaded) -> None:
    capd = loaded("capd")
    picked = scale(mgmt, capsys, capd, "dev-mp-0", "--replicas", "1", "--dry-run=client")
    assert "the provider picks which instances go" in " ".join(picked.out.split())
    assert f"delete-machine MACHINE -n {capd} --scale-down" in " ".join(picked.out.split())
    asg = loaded("aws-asg", zoned("eu-west-1a", "eu-west-1b", "eu-west-1c"))
    cloud = scale(mgmt, capsys, asg, "asg-workers", "--replicas", "2", "--dry-run=client")
    said = " ".join(cloud.out.split())
    assert "the cloud picks which instances go: AWSMachinePool cannot be told which" in said
    # The fullest zone loses first; all three hold one, so the last one does.
    assert (
        "zones (Nodes): eu-west-1a=1 -> 1, eu-west-1b=1 -> 1, eu-west-1c=1 -> 0 (or another of the zones tied, the group's choice)"
        in said
    )


@pytest.mark.parametrize(
    ("scenario", "pool", "change", "args", "refusal"),
    [
        ("capd", "dev-mp-0", annotate(**{f"{CAPI}/replicas-managed-by": "external-autoscaler"}),
         ("--replicas", "3"), "replicas are managed by external-autoscaler"),
        ("aws-asg", "asg-workers", lambda _: None, ("--replicas", "11"),
         "11 is above its maximum 10"),
        ("aws-asg", "asg-workers", lambda _: None, ("--replicas", "0"),
         "0 is below its minimum 1"),
        ("capd", "dev-mp-0", lambda _: None, ("--replicas", "3", "--current-replicas", "5"),
         "spec.replicas is 2, not --current-replicas 5"),
    ],
    ids=["replicas-managed-by", "above-max", "below-min", "current-replicas"],
)  # fmt: skip
def test_a_refusal_writes_nothing(mgmt, capsys, loaded, scenario, pool, change, args, refusal):
    ns = loaded(scenario, change)
    before = replicas(mgmt, ns, pool)
    result = scale(mgmt, capsys, ns, pool, *args)
    assert result.code == 3, result.out + result.err
    assert refusal in " ".join(result.err.split()), result.err
    assert "nothing was written" in result.err
    assert replicas(mgmt, ns, pool) == before


def test_force_goes_outside_the_autoscaler_bounds_and_says_so(mgmt, capsys, loaded) -> None:
    ns = loaded("aws-asg")
    result = scale(mgmt, capsys, ns, "asg-workers", "--replicas", "11", "--force")
    assert result.code == 0, result.err
    assert "the autoscaler may change it back" in " ".join(result.out.split())
    assert replicas(mgmt, ns, "asg-workers") == 11


def test_a_topology_that_sets_the_replicas_refuses(mgmt, capsys, loaded) -> None:
    def topology(objects: list[Obj]) -> None:
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        pool["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
        pool["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"] = "workers"
        cluster = next(o for o in objects if o["kind"] == "Cluster")
        cls = {"classRef": {"name": "dev"}} if mgmt.generation == "v1beta2" else {"class": "dev"}
        cluster["spec"]["topology"] = {
            **cls, "version": "v1.34.0",
            "workers": {"machinePools": [{"class": "default", "name": "workers", "replicas": 2}]},
        }  # fmt: skip

    ns = loaded("capd", topology)
    result = scale(mgmt, capsys, ns, "dev-mp-0", "--replicas", "3")
    assert result.code == 3, result.out + result.err
    said = " ".join(result.err.split())
    assert "spec.topology.workers.machinePools[workers].replicas (2)" in said
    assert replicas(mgmt, ns, "dev-mp-0") == 2


def test_the_same_size_is_nothing_to_do(mgmt, capsys, loaded) -> None:
    ns = loaded("capd")
    result = scale(mgmt, capsys, ns, "dev-mp-0", "--replicas", "2")
    assert result.code == 0, result.err
    assert "Nothing to do: dev-mp-0 already at 2 replicas." in result.err


def test_a_name_given_twice_is_planned_once(mgmt, capsys, loaded) -> None:
    ns = loaded("capd")
    result = scale(mgmt, capsys, ns, "dev-mp-0", "dev-mp-0", "--replicas", "3")
    assert result.code == 0, result.err
    assert result.out.count("Scale MachinePool") == 1
    assert replicas(mgmt, ns, "dev-mp-0") == 3
