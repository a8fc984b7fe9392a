"""`kubectl machinepool list` against real API servers of both Cluster API generations."""

from __future__ import annotations

import json
import re

import pytest
from support.management import create_scenario, delete_nodes, management_cluster
from support.objects import NOW, list_scenario, machine_pool
from support.run import run_cli
from support.scenarios import SCENARIOS

from kubectl_machinepool.app.listing import listed_pools
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView

# Fields the API server assigns, which an offline rendering of the same objects cannot know.
SERVER_ASSIGNED = ("uid", "creationTimestamp")


def comparable(document: dict) -> list[dict]:
    return [
        {k: v for k, v in item["summary"].items() if k not in SERVER_ASSIGNED}
        for item in document["items"]
    ]


def nodes_unread(namespace: str) -> str:
    """The warning of a Cluster prod without its <cluster>-kubeconfig Secret."""
    return (
        f"warning: Nodes of Cluster {namespace}/prod are not shown: "
        f'secrets "prod-kubeconfig" not found\n'
    )


def test_live_list_matches_offline_model_of_the_same_objects(mgmt, namespace, capsys) -> None:
    objects = list_scenario(mgmt.generation, namespace)
    mgmt.create(objects)

    live = run_cli(
        capsys, "list", "-n", namespace, "-o", "json", "--kubeconfig", str(mgmt.kubeconfig)
    )

    # No kubeconfig Secret: the Nodes are not read, and their columns unknown, as offline.
    assert (live.code, live.err) == (0, nodes_unread(namespace))
    pools = listed_pools(Snapshot.of(objects), NOW, Selection(namespace))
    offline = LIST_FORMATS["json"](ListView(pools, NOW, Palette(False)))
    assert comparable(json.loads(live.out)) == comparable(json.loads(offline))
    assert {item["summary"]["replicas"]["upToDate"] for item in json.loads(live.out)["items"]} == {
        None
    }


def test_ready_counts_nodes_not_the_provider_copy(mgmt, namespace, capsys) -> None:
    mgmt.create(list_scenario(mgmt.generation, namespace))

    result = run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig))

    assert (result.code, result.err) == (0, nodes_unread(namespace))
    header, *rows = result.out.splitlines()
    assert header.split() == [
        "NAME",
        "CLUSTER",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "PHASE",
        "VERSION",
        "INFRA",
        "MACHINES",
        "FINDINGS",
        "AGE",
    ]
    asg = next(r.split() for r in rows if r.startswith("asg-workers "))
    # DESIRED 3, CURRENT 3 (the ASG's count), READY 2 and AVAILABLE 2 (Ready Nodes).
    assert asg[:10] == [
        "asg-workers",
        "prod",
        "3",
        "3",
        "2",
        "<unknown>",
        "2",
        "ScalingUp",
        "v1.33.4",
        "AWSMachinePool",
    ]
    assert asg[10] == "no"
    assert [r.split()[0] for r in rows] == [
        "asg-workers",
        "gke-default",
        "pending-pool",
        "vmss-workers",
    ]


def test_nodes_at_an_old_version_are_not_up_to_date(mgmt, capsys) -> None:
    """vmss-batch (azure-image-drift): a v1.33.4 template over two Ready Nodes on v1.32.9 and an
    image still for 1.32.9. Its Nodes come from the workload cluster through the Cluster's
    <cluster>-kubeconfig Secret (this same server)."""
    namespace = mgmt.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = SCENARIOS["azure-image-drift"](mgmt.generation, namespace, salt)
    create_scenario(mgmt, objects)
    try:
        config = ("-n", namespace, "--kubeconfig", str(mgmt.kubeconfig))
        table = run_cli(capsys, "list", *config, "-o", "wide")
        document = run_cli(capsys, "list", *config, "-o", "json")
        named = run_cli(capsys, "list", "vmss-batch", "nope", *config)
    finally:
        delete_nodes(mgmt, objects)

    assert (table.code, table.err) == (0, "")
    header, row = table.out.splitlines()
    cells = dict(zip(re.split(r"\s{2,}", header), re.split(r"\s{2,}", row), strict=True))
    assert (cells["READY"], cells["UP-TO-DATE"], cells["VERSION"]) == ("2", "0", "v1.33.4")
    assert int(cells["FINDINGS"]) >= 1
    assert cells["KUBELET VERSIONS"] == "v1.32.9(2)"
    listed = json.loads(document.out)
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["vmss-batch"]
    [summary] = [item["summary"] for item in listed["items"]]
    assert "MP1301" in summary["findings"]["codes"]
    assert summary["findings"]["count"] == int(cells["FINDINGS"])
    # kubectl's rule for names: what was found, then an error for each name that was not.
    assert named.code == 1
    assert named.out.splitlines()[1].split()[0] == "vmss-batch"
    assert named.err == (
        f'error: machinepools.cluster.x-k8s.io "nope" not found in namespace "{namespace}"\n'
    )


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
    assert re.split(r"\s{2,}", lines[0])[-5:] == [
        "AGE",
        "KUBELET VERSIONS",
        "FAILURE DOMAINS",
        "BOOTSTRAP",
        "OWNER",
    ]
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
