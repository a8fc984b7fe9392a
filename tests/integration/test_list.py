"""`kubectl machinepool list` against real API servers of both Cluster API generations."""

from __future__ import annotations

import json

import pytest
from support.management import management_cluster
from support.objects import NOW, list_scenario, machine_pool
from support.run import run_cli

from kubectl_machinepool.model.pool import machine_pools
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView

# Fields the API server assigns, which an offline rendering of the same objects cannot know.
SERVER_ASSIGNED = ("uid", "creationTimestamp")


def comparable(document: dict) -> list[dict]:
    return [
        {k: v for k, v in item.items() if k not in SERVER_ASSIGNED} for item in document["items"]
    ]


def test_live_list_matches_offline_model_of_the_same_objects(mgmt, namespace, capsys) -> None:
    objects = list_scenario(mgmt.generation, namespace)
    mgmt.create(objects)

    live = run_cli(
        capsys, "list", "-n", namespace, "-o", "json", "--kubeconfig", str(mgmt.kubeconfig)
    )

    assert (live.code, live.err) == (0, "")
    offline = LIST_FORMATS["json"](
        ListView(machine_pools(Snapshot.of(objects)), NOW, Palette(False))
    )
    assert comparable(json.loads(live.out)) == comparable(json.loads(offline))


def test_ready_counts_nodes_not_the_provider_copy(mgmt, namespace, capsys) -> None:
    mgmt.create(list_scenario(mgmt.generation, namespace))

    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig))

    assert result.code == 0
    header, *rows = result.out.splitlines()
    assert header.split() == [
        "NAME",
        "CLUSTER",
        "DESIRED",
        "CURRENT",
        "READY",
        "AVAILABLE",
        "PHASE",
        "VERSION",
        "INFRA",
        "MACHINES",
        "AGE",
    ]
    asg = next(r.split() for r in rows if r.startswith("asg-workers "))
    # DESIRED 3, CURRENT 3 (the ASG's count), READY 2 and AVAILABLE 2 (Ready Nodes).
    assert asg[:9] == [
        "asg-workers",
        "prod",
        "3",
        "3",
        "2",
        "2",
        "ScalingUp",
        "v1.33.4",
        "AWSMachinePool",
    ]
    assert asg[9] == "no"
    assert [r.split()[0] for r in rows] == [
        "asg-workers",
        "gke-default",
        "pending-pool",
        "vmss-workers",
    ]


def test_all_namespaces_and_selector(mgmt, capsys) -> None:
    first, second = mgmt.new_namespace(), mgmt.new_namespace()
    for ns, env in ((first, "prod"), (second, "dev")):
        pool = machine_pool(mgmt.generation, f"pool-{env}", ns, "c1", infra_kind="AWSMachinePool")
        pool["metadata"]["labels"]["env"] = env
        mgmt.create([pool])

    everything = run_cli(capsys, "list", "-A", "-o", "wide", "--kubeconfig", str(mgmt.kubeconfig))
    assert everything.code == 0
    lines = everything.out.splitlines()
    assert lines[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert lines[0].split()[-4:] == ["AGE", "FAILURE", "DOMAINS", "BOOTSTRAP"]
    mine = [line.split()[:2] for line in lines if line.split()[0] in (first, second)]
    assert sorted(mine) == sorted([[first, "pool-prod"], [second, "pool-dev"]])

    selected = run_cli(
        capsys, "list", "-A", "-l", "env=dev", "-o", "name", "--kubeconfig", str(mgmt.kubeconfig)
    )
    assert "machinepool.cluster.x-k8s.io/pool-dev\n" in selected.out
    assert "pool-prod" not in selected.out


def test_empty_namespace_says_so_on_stderr(mgmt, namespace, capsys) -> None:
    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig))
    assert (result.code, result.out, result.err) == (
        0,
        "",
        f"No resources found in {namespace} namespace.\n",
    )


def test_namespace_defaults_to_the_contexts(v1beta2, capsys, tmp_path) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.create([machine_pool("v1beta2", "ctx-pool", ns, "c1", infra_kind="AWSMachinePool")])
    config = v1beta2.server.kubeconfig_dict(v1beta2.server.admin)
    config["contexts"][0]["context"]["namespace"] = ns
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))

    result = run_cli(capsys, "list", "-o", "name", "--kubeconfig", str(path))

    assert result.out == "machinepool.cluster.x-k8s.io/ctx-pool\n"


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_management_cluster_generation_is_chosen_by_discovery(control_plane, generation) -> None:
    from kubectl_machinepool.kube.access import AccessOptions
    from kubectl_machinepool.kube.client import Kube

    cluster = management_cluster(control_plane, generation)
    with Kube.connect(AccessOptions(kubeconfig=str(cluster.kubeconfig))) as kube:
        assert kube.capi_version() == generation
