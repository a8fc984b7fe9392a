"""diff-metadata against the real API server, both Cluster API generations."""

from __future__ import annotations

import json

from support.management import create_scenario
from support.run import run_cli
from support.scenarios import SCENARIOS, core_manager


def diff(mgmt, namespace: str, capsys, *extra: str) -> dict:
    result = run_cli(
        capsys,
        "diff-metadata",
        "-n",
        namespace,
        "--kubeconfig",
        str(mgmt.kubeconfig),
        "-o",
        "json",
        *extra,
    )
    assert result.code == 0, result.err
    [pool] = json.loads(result.out)["machinePools"]
    return pool


def key(pool: dict, name: str) -> dict:
    return next(k for k in pool["keys"] if k["key"] == name)


def load(mgmt, scenario: str) -> str:
    namespace = mgmt.new_namespace()
    create_scenario(
        mgmt, SCENARIOS[scenario](mgmt.generation, namespace, namespace.removeprefix("t-"))
    )
    return namespace


def test_node_role_label_on_every_node_of_a_pool_with_machines(mgmt, capsys) -> None:
    pool = diff(mgmt, load(mgmt, "azure-vmss"), capsys)
    role = key(pool, "node-role.kubernetes.io/worker")
    assert role["reachesNodes"] is True
    assert [a["state"] for a in role["machines"] + role["nodes"]] == ["present"] * 6
    assert key(pool, "team")["reachesNodes"] is False


def test_same_label_never_arrives_without_machines(mgmt, capsys) -> None:
    pool = diff(mgmt, load(mgmt, "aws-asg"), capsys)
    role = key(pool, "node-role.kubernetes.io/worker")
    assert (
        role["neverReason"]
        == "the pool has no MachinePool Machines: Cluster API copies no template metadata to its Nodes"
    )
    assert {a["state"] for a in role["nodes"]} == {"never"}


def test_label_removed_from_the_template_but_still_on_nodes(mgmt, capsys) -> None:
    namespace = load(mgmt, "capd")
    path = f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machinepools/dev-mp-0"
    patch = {
        "spec": {"template": {"metadata": {"labels": {"node-role.kubernetes.io/worker": None}}}}
    }
    mgmt.api.request("PATCH", path, patch, "application/merge-patch+json")

    pool = diff(mgmt, namespace, capsys)

    assert [(x["key"], x["value"]) for x in pool["leftovers"]] == [
        ("node-role.kubernetes.io/worker", "")
    ] * 2
    text = run_cli(
        capsys, "diff-metadata", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig)
    ).out
    assert "put there by Cluster API, not in the template now" in text


def test_sync_regexes_from_the_manager_deployment_and_from_flags(v1beta2, capsys) -> None:
    namespace = load(v1beta2, "azure-vmss")
    system = v1beta2.new_namespace()
    v1beta2.api.create(
        core_manager(system, args=("--leader-elect", "--additional-sync-machine-labels=^team$"))
    )
    try:
        pool = diff(v1beta2, namespace, capsys)
        assert pool["syncRules"] == {
            "labels": ["^team$"],
            "annotations": [],
            "source": f"args of Deployment {system}/capi-controller-manager",
        }
        # The manager would sync `team`, yet the Nodes lack it: this is what the diff is for.
        assert {a["state"] for a in key(pool, "team")["nodes"]} == {"missing"}

        flagged = diff(v1beta2, namespace, capsys, "--additional-sync-machine-annotations", "owner")
        assert flagged["syncRules"]["annotations"] == ["owner"]
        assert key(flagged, "example.com/owner")["reachesNodes"] is True
    finally:
        v1beta2.api.request(
            "DELETE", f"/apis/apps/v1/namespaces/{system}/deployments/capi-controller-manager"
        )
