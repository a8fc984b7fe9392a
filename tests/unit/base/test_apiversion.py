from __future__ import annotations

import pytest

from kubectl_machinepool.base.apiversion import (
    contract_versions,
    crd_plural,
    newest,
    version_priority,
)


def test_kube_version_order() -> None:
    versions = ["v1alpha1", "v1beta1", "v2", "v1", "v1beta2", "v1alpha2", "v11alpha2", "foo"]
    assert sorted(versions, key=version_priority, reverse=True) == [
        "v2", "v1", "v1beta2", "v1beta1", "v11alpha2", "v1alpha2", "v1alpha1", "foo",
    ]  # fmt: skip


def test_newest_of_nothing_is_none() -> None:
    assert newest([]) is None


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # CAPA and CAPOCI label only the v1beta1 contract, naming both API versions.
        ({"cluster.x-k8s.io/v1beta1": "v1beta1_v1beta2"}, ["v1beta1", "v1beta2"]),
        # Scaleway maps contracts to its own alpha versions; the v1beta2 contract wins.
        (
            {"cluster.x-k8s.io/v1beta1": "v1alpha1", "cluster.x-k8s.io/v1beta2": "v1alpha2"},
            ["v1alpha2"],
        ),
        ({"cluster.x-k8s.io/v1alpha4": "v1alpha4"}, []),
        ({}, []),
    ],
)
def test_contract_versions(labels: dict[str, str], expected: list[str]) -> None:
    assert contract_versions(labels) == expected


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("AWSMachinePool", "awsmachinepools"),
        ("AzureMachinePoolMachine", "azuremachinepoolmachines"),
        ("KubeadmConfig", "kubeadmconfigs"),
        ("ROSAControlPlane", "rosacontrolplanes"),
        ("GKEConfig", "gkeconfigs"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Ingress", "ingresses"),
    ],
)
def test_crd_plural(kind: str, plural: str) -> None:
    assert crd_plural(kind) == plural
