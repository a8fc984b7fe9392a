"""providers against the real API server: clusterctl's Provider objects, else the controller
Deployments; the MachinePool feature gate from the core manager's flags; the kinds in use; and,
without the rights to read them, a note and never "none installed"."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support import crds
from support.inventory import CRD, controller, create_providers, provider, remove_inventory_crd
from support.management import ManagementCluster, create_scenario
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

CORE_IMAGE = "cluster-api-controller:v1.10.4"


Make = Callable[[ManagementCluster, list[dict[str, Any]]], None]


@pytest.fixture
def deployments() -> Iterator[Make]:
    """Controller Deployments made for one test, deleted after it: a core one left behind would
    be where other tests' diagnose reads the Cluster API version."""
    made: list[tuple[ManagementCluster, dict[str, Any]]] = []

    def make(cluster: ManagementCluster, objects: list[dict[str, Any]]) -> None:
        cluster.create(objects)
        made.extend((cluster, obj) for obj in objects)

    yield make
    for cluster, obj in made:
        meta = obj["metadata"]
        path = f"/apis/apps/v1/namespaces/{meta['namespace']}/deployments/{meta['name']}"
        cluster.api.request("DELETE", path)


@pytest.fixture
def inventory_crd(mgmt: ManagementCluster) -> Iterator[None]:
    crds.install(mgmt.api, [CRD])
    yield
    remove_inventory_crd(mgmt.api)


def providers(capsys, mgmt: ManagementCluster, *args: str, kubeconfig: str | None = None) -> Result:
    return run_cli(capsys, "providers", *args, "--kubeconfig", kubeconfig or str(mgmt.kubeconfig))


def mine(document: dict[str, Any], namespace: str) -> list[tuple[str, str, str]]:
    return [
        (p["name"], p["type"], p["version"])
        for p in document["providers"]
        if p["namespace"] == namespace
    ]


def test_provider_objects_as_clusterctl_writes_them(
    mgmt: ManagementCluster, inventory_crd: None, deployments: Make, capsys
) -> None:
    namespace = mgmt.new_namespace()
    create_scenario(mgmt, SCENARIOS["capd"](mgmt.generation, namespace, namespace[2:]))
    gates = "--feature-gates=MachinePool=false,ClusterTopology=true"
    deployments(
        mgmt,
        [controller("cluster-api", "capi-controller-manager", namespace, CORE_IMAGE, (gates,))],
    )
    create_providers(
        mgmt.api,
        [
            provider("docker", "InfrastructureProvider", "v1.10.4", namespace),
            provider("cluster-api", "CoreProvider", "v1.10.4", namespace),
            provider("kubeadm", "BootstrapProvider", "v1.10.4", namespace),
        ],
    )  # fmt: skip

    result = providers(capsys, mgmt, "-n", namespace, "-o", "json")
    assert (result.code, result.err) == (0, "")
    document = json.loads(result.out)
    assert document["providersNamedBy"] == "Provider"
    assert mine(document, namespace) == [
        ("cluster-api", "CoreProvider", "v1.10.4"),
        ("kubeadm", "BootstrapProvider", "v1.10.4"),
        ("docker", "InfrastructureProvider", "v1.10.4"),
    ]
    # The core manager beside the core Provider object, whatever other tests left elsewhere.
    gate = document["machinePoolFeatureGate"]
    assert gate == {
        "state": "off",
        "reason": f"--feature-gates sets MachinePool=false "
        f"(Deployment {namespace}/capi-controller-manager)",
    }
    [kind] = document["kinds"]
    assert (kind["kind"], kind["pools"], kind["known"]) == ("DockerMachinePool", 1, True)
    assert [o["answer"] for o in kind["operations"]] == ["yes"] * 4 + ["no", "yes"]

    text = providers(capsys, mgmt, "-n", namespace)
    assert (text.code, text.err) == (0, "")
    assert "MachinePool feature gate: off: --feature-gates sets MachinePool=false" in text.out
    row = next(line for line in text.out.splitlines() if line.startswith("DockerMachinePool "))
    assert row.split() == ["DockerMachinePool", "1", "yes", "yes", "yes", "yes", "no", "yes"]
    assert "DockerMachinePool (infrastructure.cluster.x-k8s.io), 1 pool:" in text.out
    assert "a pause does not stop: nothing: CAPD acts only while it reconciles" in text.out


def test_without_clusterctl_s_inventory_the_deployments_name_the_providers_silently(
    mgmt: ManagementCluster, deployments: Make, capsys
) -> None:
    remove_inventory_crd(mgmt.api)  # as on a cluster clusterctl did not install
    namespace = mgmt.new_namespace()
    deployments(
        mgmt,
        [
            controller("infrastructure-docker", "capd-controller-manager", namespace,
                       "capd-manager:v1.10.4"),
            controller("bootstrap-kubeadm", "capi-kubeadm-bootstrap-controller-manager", namespace,
                       "kubeadm-bootstrap-controller:v1.10.4@sha256:" + "1" * 64),
        ]
    )  # fmt: skip
    result = providers(capsys, mgmt, "-A", "-o", "json")
    assert (result.code, result.err) == (0, "")
    document = json.loads(result.out)
    assert document["providersNamedBy"] == "Deployment"
    assert document["providersRead"] is True
    assert mine(document, namespace) == [
        ("kubeadm", "BootstrapProvider", "v1.10.4"),
        ("docker", "InfrastructureProvider", "v1.10.4"),
    ]
    assert {p["from"] for p in document["providers"] if p["namespace"] == namespace} == {
        "Deployment capd-controller-manager",
        "Deployment capi-kubeadm-bootstrap-controller-manager",
    }


def test_without_rights_to_read_them_it_says_so_never_none(
    v1beta2: ManagementCluster, deployments: Make, capsys
) -> None:
    crds.install(v1beta2.api, [CRD])
    try:
        namespace = v1beta2.new_namespace()
        create_providers(
            v1beta2.api, [provider("cluster-api", "CoreProvider", "v1.14.2", namespace)]
        )
        deployments(
            v1beta2, [controller("cluster-api", "capi-controller-manager", namespace, CORE_IMAGE)]
        )
        pools_only = v1beta2.server.add_user(f"pools-only-{namespace}")
        machinepools = {"apiGroups": ["cluster.x-k8s.io"], "resources": ["machinepools"]}
        v1beta2.grant(pools_only.name, None, [{**machinepools, "verbs": ["list"]}])
        result = providers(capsys, v1beta2, "-A", kubeconfig=str(pools_only.kubeconfig))
        assert result.code == 0, result.err
        assert (
            "warning: cannot read Provider objects, so the providers are named by their "
            'controller Deployments: providers.clusterctl.cluster.x-k8s.io is forbidden: User "'
        ) in result.err
        assert "warning: cannot read Deployment objects, so the controllers' images and the " \
            "MachinePool feature gate are not known" in result.err  # fmt: skip
        assert "The installed providers are not known: they could not be read" in result.out
        assert "MachinePool feature gate: unknown: Deployments could not be read" in result.out
        assert "No provider" not in result.out

        # With the Deployments but not the inventory: named by the Deployments, and said so.
        deployments = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]}
        v1beta2.grant(pools_only.name, None, [deployments])
        result = providers(
            capsys, v1beta2, "-A", "-o", "json", kubeconfig=str(pools_only.kubeconfig)
        )
        assert result.code == 0, result.err
        assert "cannot read Provider objects" in result.err
        assert "cannot read Deployment objects" not in result.err
        document = json.loads(result.out)
        assert document["providersNamedBy"] == "Deployment"
        assert document["providersRead"] is False
        assert mine(document, namespace) == [("cluster-api", "CoreProvider", "v1.10.4")]
    finally:
        remove_inventory_crd(v1beta2.api)
