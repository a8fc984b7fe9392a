"""The installed providers, the MachinePool feature gate and the infra pool kinds in use."""

from __future__ import annotations

import pytest
from support.inventory import controller, provider
from support.snapshots import NAMESPACE, scenario_snapshot

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.model.inventory import (
    CLUSTERCTL_GROUP,
    Installed,
    installed,
    inventory,
    kinds_in_use,
    machine_pool_gate,
)
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.registry import PROVIDERS

CORE_IMAGE = "cluster-api-controller:v1.10.4"
GATES = "--feature-gates=MachinePool=true,ClusterTopology=false,RuntimeSDK=false"

INVENTORY = [
    provider("docker", "InfrastructureProvider", "v1.10.4", "capd-system"),
    provider("cluster-api", "CoreProvider", "v1.10.4", "capi-system"),
    provider("kubeadm", "ControlPlaneProvider", "v1.10.4", "capi-kubeadm-control-plane-system"),
    provider("kubeadm", "BootstrapProvider", "v1.10.4", "capi-kubeadm-bootstrap-system"),
]
CONTROLLERS = [
    controller(
        "infrastructure-aws",
        "capa-controller-manager",
        "capa-system",
        "cluster-api-aws-controller:v2.11.1@sha256:" + "0" * 64,
    ),
    controller("cluster-api", "capi-controller-manager", "capi-system", CORE_IMAGE, (GATES,)),
]


def test_provider_objects_name_the_providers_in_clusterctl_s_order() -> None:
    found, named_by = installed(Snapshot.of([*INVENTORY, *CONTROLLERS]))
    assert named_by == "Provider"
    assert [(p.name, p.type, p.version, p.namespace) for p in found] == [
        ("cluster-api", "CoreProvider", "v1.10.4", "capi-system"),
        ("kubeadm", "BootstrapProvider", "v1.10.4", "capi-kubeadm-bootstrap-system"),
        ("kubeadm", "ControlPlaneProvider", "v1.10.4", "capi-kubeadm-control-plane-system"),
        ("docker", "InfrastructureProvider", "v1.10.4", "capd-system"),
    ]
    assert found[0].source == "Provider cluster-api"


def test_without_provider_objects_the_labelled_deployments_name_them_by_image_tag() -> None:
    unlabelled = controller("x", "other", "default", "nginx:1.27")
    del unlabelled["metadata"]["labels"]
    found, named_by = installed(Snapshot.of([*CONTROLLERS, unlabelled]))
    assert named_by == "Deployment"
    assert found == (
        Installed(
            "cluster-api", "CoreProvider", "v1.10.4", "capi-system",
            "Deployment capi-controller-manager",
        ),
        Installed(
            "aws", "InfrastructureProvider", "v2.11.1", "capa-system",
            "Deployment capa-controller-manager",
        ),
    )  # fmt: skip
    assert installed(Snapshot.of([])) == ((), "")


def test_untrusted_shapes_are_read_as_unknown_not_a_crash() -> None:
    odd = provider("aws", "InfrastructureProvider", "v2.11.1", "capa-system")
    odd.update(providerName=["aws"], version={"v": 1}, type=None)
    bad = controller("bootstrap-kubeadm", "cabpk", "cabpk-system", "kubeadm-bootstrap")
    bad["spec"]["template"]["spec"]["containers"] = "not a list"
    [found] = installed(Snapshot.of([odd]))[0]
    assert (found.name, found.type, found.version) == ("", "", "")
    [fallback] = installed(Snapshot.of([bad]))[0]
    assert (fallback.name, fallback.type, fallback.version) == ("kubeadm", "BootstrapProvider", "")


@pytest.mark.parametrize(
    ("args", "image", "state", "said"),
    [
        ((GATES,), CORE_IMAGE, "on", "--feature-gates sets MachinePool=true"),
        (("--feature-gates", "MachinePool=false"), CORE_IMAGE, "off", "sets MachinePool=false"),
        # pflag keeps the last value of a gate named twice.
        (("--feature-gates=MachinePool=false", "--feature-gates=MachinePool=T"), CORE_IMAGE, "on", "=T"),
        # Applied without clusterctl's variable substitution.
        (("--feature-gates=MachinePool=${EXP_MACHINE_POOL:=true}",), CORE_IMAGE, "unknown", "not a boolean"),
        (("--leader-elect",), CORE_IMAGE, "on", "Cluster API v1.10.4: on by default since v1.7.0"),
        ((), "cluster-api-controller:v1.6.3", "off", "off by default before v1.7.0"),
        ((), "cluster-api-controller", "unknown", "the Cluster API version is not known"),
    ],
)  # fmt: skip
def test_the_machine_pool_gate(args: tuple[str, ...], image: str, state: str, said: str) -> None:
    core = controller("cluster-api", "capi-controller-manager", "capi-system", image, args)
    gate = machine_pool_gate(Snapshot.of([core]), ())
    assert gate.state == state
    assert said in gate.reason
    assert "Deployment capi-system/capi-controller-manager" in gate.reason


def test_the_gate_s_default_follows_the_core_provider_object_s_version() -> None:
    core = controller("cluster-api", "capi-controller-manager", "capi-system", "capi:latest")
    snapshot = Snapshot.of([core, *INVENTORY])
    gate = machine_pool_gate(snapshot, installed(snapshot)[0])
    assert (gate.state, "Cluster API v1.10.4" in gate.reason) == ("on", True)


def test_the_core_manager_is_the_one_beside_the_core_provider_object() -> None:
    elsewhere = controller(
        "cluster-api", "capi-controller-manager", "a-test", CORE_IMAGE, ("--feature-gates=MachinePool=false",)
    )  # fmt: skip
    snapshot = Snapshot.of([elsewhere, *CONTROLLERS, *INVENTORY])
    gate = machine_pool_gate(snapshot, installed(snapshot)[0])
    assert (gate.state, "capi-system/" in gate.reason) == ("on", True)


def test_the_gate_is_unknown_when_the_deployments_were_not_read_or_hold_no_core() -> None:
    unread = Snapshot.of([], unread=[("apps", "Deployment")])
    assert machine_pool_gate(unread, ()).reason.startswith("Deployments could not be read")
    assert machine_pool_gate(Snapshot.of([]), ()).state == "unknown"
    assert "no core controller Deployment" in machine_pool_gate(Snapshot.of([]), ()).reason


def test_kinds_in_use_are_counted_by_group_and_kind_most_used_first() -> None:
    aws = list(scenario_snapshot("aws-asg").of_kind(CAPI_GROUP, "MachinePool"))
    azure = list(scenario_snapshot("azure-vmss").of_kind(CAPI_GROUP, "MachinePool"))
    stranger = {
        "spec": {"template": {"spec": {"infrastructureRef": {
            "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "KarpenterMachinePool",
        }}}}
    }  # fmt: skip
    found = kinds_in_use([*aws, *azure, *azure, stranger, {"spec": "odd"}])
    assert [(k.kind, k.pools, k.provider is not None) for k in found] == [
        ("AzureMachinePool", 2 * len(azure), True),
        ("AWSMachinePool", len(aws), True),
        ("KarpenterMachinePool", 1, False),
    ]


def test_the_inventory_says_what_could_not_be_read() -> None:
    unread = Snapshot.of(
        [], unread=[(CLUSTERCTL_GROUP, "Provider"), ("apps", "Deployment"), (CAPI_GROUP, "MachinePool")]
    )  # fmt: skip
    shown = inventory(unread, NAMESPACE, all_kinds=False)
    assert (shown.providers, shown.providers_read, shown.kinds_read) == ((), False, False)
    everything = inventory(Snapshot.of([*INVENTORY]), None, all_kinds=True)
    assert everything.providers_read
    assert [k.kind for k in everything.kinds] == [p.kind for p in PROVIDERS]
    assert {k.pools for k in everything.kinds} == {0}
