"""Infra pool fields that name a Kubernetes release (targets.py) and rule MP1301 (R13, #7248),
per provider shape, in both Cluster API generations: the field fires, its near miss does not.

Each field as the provider defines it (json tags, at the commits in each provider module's docstring):
  AWSManagedMachinePool spec.amiVersion, spec.amiType
      cluster-api-provider-aws exp/api/v1beta2/awsmanagedmachinepool_types.go (also v1beta1)
  AzureMachinePool spec.template.image / status.image {computeGallery, sharedGallery,
      marketplace}.version  cluster-api-provider-azure exp/api/v1beta1/azuremachinepool_types.go,
      api/v1beta1/types.go
  GCPMachinePool spec.imageFamily  cluster-api-provider-gcp exp/api/v1beta1/gcpmachinepool_types.go
  ManagedClustersAgentPool (ASO's, which CAPZ makes for an AzureManagedMachinePool, named after
      it: azure/services/agentpools/spec.go) spec.orchestratorVersion,
      status.currentOrchestratorVersion  azure-service-operator v2/api/containerservice/
      v1api20250801/managed_clusters_agent_pool_types_gen.go
  AzureASOManagedMachinePool spec.resources[] (an ASO ManagedClustersAgentPool,
      spec.orchestratorVersion)  cluster-api-provider-azure api/v1beta1/
      azureasomanagedmachinepool_types.go; azure-service-operator v2/api/containerservice/
      v1api20240901/managed_clusters_agent_pool_types_gen.go
  OCIManagedMachinePool spec.version  cluster-api-provider-oci exp/api/v1beta2/
      ocimanagedmachinepool_types.go (also v1beta1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.providers.registry import PROVIDERS, infra_pool
from kubectl_machinepool.providers.targets import companion_name, infra_targets

Obj = dict[str, Any]
INFRA = "infrastructure.cluster.x-k8s.io"
GENERATIONS = ["v1beta1", "v1beta2"]
REFERENCE = "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019"


def find(objects: list[Obj], kind: str) -> Obj:
    return next(o for o in objects if o["kind"] == kind)


def as_kind(objects: list[Obj], old: str, new: str) -> Obj:
    """The scenario's infra pool turned into another kind of the same provider."""
    infra = find(objects, old)
    infra["kind"] = new
    pool = find(objects, "MachinePool")
    pool["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = new
    return infra


def eks_ami(
    version: str, ami_type: str | None = "AL2023_x86_64_STANDARD"
) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        spec = find(objects, "AWSManagedMachinePool")["spec"]
        spec["amiVersion"] = version
        if ami_type is None:
            spec.pop("amiType", None)
        else:
            spec["amiType"] = ami_type

    return change


def vmss_image(image: Obj, where: str = "spec") -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        infra = find(objects, "AzureMachinePool")
        if where == "spec":
            infra["spec"]["template"]["image"] = image
        else:
            infra["status"]["image"] = image

    return change


def gallery(version: str, name: str = REFERENCE, kind: str = "computeGallery") -> Obj:
    return {kind: {"gallery": name, "name": "capi-ubun2-2404", "version": version}}


def marketplace(version: str, offer: str = "capi") -> Obj:
    return {
        "marketplace": {
            "publisher": "cncf-upstream",
            "offer": offer,
            "sku": "ubuntu-2204-gen1",
            "version": version,
        }
    }


def gcp_family(family: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        infra = as_kind(objects, "GCPManagedMachinePool", "GCPMachinePool")
        infra["spec"] = {"instanceType": "n2-standard-4", "imageFamily": family}
        infra["status"].pop("infrastructureMachineKind", None)

    return change


def aso_agent_pool(orchestrator: str | None) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        infra = as_kind(objects, "AzureManagedMachinePool", "AzureASOManagedMachinePool")
        agent: Obj = {"azureName": "pool0", "mode": "System", "count": 3}
        if orchestrator is not None:
            agent["orchestratorVersion"] = orchestrator
        infra["spec"] = {
            "resources": [
                {
                    "apiVersion": "containerservice.azure.com/v1api20240901",
                    "kind": "ManagedClustersAgentPool",
                    "metadata": {"name": "aks-pool0"},
                    "spec": agent,
                }
            ]
        }

    return change


def aks_agent_pool(orchestrator: str, current: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        agent = find(objects, "ManagedClustersAgentPool")
        agent["spec"]["orchestratorVersion"] = orchestrator
        agent["status"]["currentOrchestratorVersion"] = current

    return change


def oke_version(version: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        infra = as_kind(objects, "AWSManagedMachinePool", "OCIManagedMachinePool")
        infra["spec"] = {
            "version": version,
            "nodeSourceViaImage": {"imageId": "ocid1.image.oc1..x"},
        }

    return change


# shape: (scenario, fires, near miss); the scenarios' pools want v1.33.5 (EKS), v1.33.4 (VMSS),
# v1.32.9 (GKE), v1.33.3 (AKS).
SHAPES: dict[str, tuple[str, Callable[[list[Obj]], None], Callable[[list[Obj]], None]]] = {
    "eks-ami-release": ("eks-managed", eks_ami("1.32.3-20250212"), eks_ami("1.33.4-20251104")),
    "eks-default-ami-type": ("eks-managed", eks_ami("1.32.3-20250212", None), eks_ami("1.32.3-20250212", "BOTTLEROCKET_x86_64")),
    "vmss-compute-gallery": ("azure-vmss", vmss_image(gallery("1.32.9")), vmss_image(gallery("1.32.9", name="team-images"))),
    "vmss-shared-gallery": ("azure-vmss", vmss_image(gallery("1.32.9", kind="sharedGallery")), vmss_image(gallery("1.33.4", kind="sharedGallery"))),
    "vmss-marketplace": ("azure-vmss", vmss_image(marketplace("132.9.20250911")), vmss_image(marketplace("132.9.20250911", offer="ubuntu"))),
    "vmss-status-image": ("azure-vmss", vmss_image(gallery("1.32.9"), "status"), vmss_image(gallery("latest"), "status")),
    "gcp-image-family": ("gke-managed", gcp_family("projects/p/global/images/family/capi-ubuntu-2204-k8s-v1-31"), gcp_family("projects/p/global/images/family/capi-ubuntu-2204-k8s-v1-32")),
    "aks-auto-upgraded": ("aks-managed", aks_agent_pool("1.34.1", "1.34.1"), aks_agent_pool("1.33.3", "1.33.3")),
    "aks-running-behind": ("aks-managed", aks_agent_pool("1.33.3", "1.32.9"), aks_agent_pool("1.33.3", "1.33.0")),
    "aso-orchestrator": ("aks-managed", aso_agent_pool("1.32.6"), aso_agent_pool(None)),
    "oke-version": ("eks-managed", oke_version("v1.33.1"), oke_version("v1.33.5")),
}  # fmt: skip


def findings(scenario: str, change: Callable[[list[Obj]], None], generation: str) -> list[Any]:
    objects = SCENARIOS[scenario](generation, NAMESPACE)
    change(objects)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    return diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())


def mp1301(scenario: str, change: Callable[[list[Obj]], None], generation: str) -> list[Any]:
    return [f for f in findings(scenario, change, generation) if f.code == "MP1301"]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_field_for_another_release_fires(shape: str, generation: str) -> None:
    scenario, fires, _ = SHAPES[shape]
    assert len(mp1301(scenario, fires, generation)) == 1


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_its_near_miss_does_not(shape: str, generation: str) -> None:
    scenario, _, near_miss = SHAPES[shape]
    assert mp1301(scenario, near_miss, generation) == []


def test_the_message_gives_the_exact_field_and_the_two_step_advice() -> None:
    [finding] = mp1301("eks-managed", eks_ami("1.32.3-20250212"), "v1beta2")
    assert finding.message == (
        "the pool template wants v1.33.5 but AWSManagedMachinePool spec.amiVersion is "
        "'1.32.3-20250212', for Kubernetes 1.32.3"
    )
    assert finding.action.startswith(
        f"Annotate AWSManagedMachinePool {NAMESPACE}/eks-default with cluster.x-k8s.io/paused, "
        "set the MachinePool's spec.template.spec.version and spec.amiVersion to the same "
        "Kubernetes release, then remove the annotation"
    )


def test_kubelets_split_between_the_two_releases_are_counted() -> None:
    """azure-vmss runs one kubelet at v1.32.9 and two at v1.33.4."""
    [finding] = mp1301("azure-vmss", vmss_image(gallery("1.32.9")), "v1beta2")
    assert finding.message.endswith("; the pool's kubelets are split: 1 at 1.32 and 2 at 1.33")


def test_a_deployed_version_counts_to_the_patch_and_says_so() -> None:
    [finding] = mp1301("eks-managed", oke_version("v1.33.1"), "v1beta2")
    assert (
        "OCIManagedMachinePool spec.version is 'v1.33.1', for Kubernetes 1.33.1 (the version "
        in (finding.message)
    )
    assert finding.action.startswith("The provider deploys spec.version of OCIManagedMachinePool")


def test_only_the_status_image_behind_says_to_wait_for_the_model_update() -> None:
    [finding] = mp1301("azure-vmss", vmss_image(gallery("1.32.9"), "status"), "v1beta2")
    assert "ScaleSetModelUpdated" in finding.action
    assert "Annotate" not in finding.action


def test_the_aks_agent_pool_is_found_by_the_infra_pools_name() -> None:
    objects = SCENARIOS["aks-managed"]("v1beta2", NAMESPACE)
    [pool] = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools
    assert [(t.kind, t.field, t.version) for t in pool.version_targets] == [
        ("ManagedClustersAgentPool", "spec.orchestratorVersion", "1.33.3"),
        ("ManagedClustersAgentPool", "status.currentOrchestratorVersion", "1.33.3"),
    ]


def test_companion_names() -> None:
    aks = infra_pool(INFRA, "AzureManagedMachinePool")
    aso = infra_pool(INFRA, "AzureASOManagedMachinePool")
    assert aks is not None
    assert aks.companion is not None
    assert aso is not None
    assert aso.companion is not None
    assert companion_name(aks.companion, {"metadata": {"name": "Pool_0.a"}}) == "pool-0-a"
    embedded = {
        "spec": {
            "resources": [
                {"kind": "ManagedCluster", "metadata": {"name": "prod"}},
                {"kind": "ManagedClustersAgentPool", "metadata": {"name": "prod-pool1"}},
            ]
        }
    }
    assert companion_name(aso.companion, embedded) == "prod-pool1"
    assert companion_name(aso.companion, {"spec": {"resources": "x"}}) is None


def test_the_example_dump_shows_both_sides() -> None:
    objects = SCENARIOS["azure-image-drift"]("v1beta2", NAMESPACE)
    [pool] = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools
    assert [(t.field, t.version) for t in pool.version_targets] == [
        ("spec.template.image.computeGallery.version", "1.32.9"),
        ("status.image.computeGallery.version", "1.32.9"),
    ]


def test_kinds_without_version_fields_have_no_targets() -> None:
    """CAPA's AWSMachinePool (an AMI id says no release), GKE and Scaleway pools."""
    quiet = {"AWSMachinePool", "GCPManagedMachinePool", "ScalewayManagedMachinePool"}
    assert all(not p.version_fields and not p.companion for p in PROVIDERS if p.kind in quiet)
    for scenario in ("aws-asg", "gke-managed", "scaleway-kapsule"):
        objects = SCENARIOS[scenario]("v1beta2", NAMESPACE)
        [pool] = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools
        assert pool.version_targets == (), scenario


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(
    kind=st.sampled_from([p.kind for p in PROVIDERS if p.version_fields]),
    spec=json_values,
    status=json_values,
)
def test_any_shape_of_an_infra_pool_is_read_without_an_error(
    kind: str, spec: Any, status: Any
) -> None:
    """Provider objects preserve unknown fields and dumps are whatever a file holds."""
    provider = infra_pool(INFRA, kind)
    targets = infra_targets(provider, {"kind": kind, "spec": spec, "status": status})
    assert all(isinstance(t.version, str) for t in targets)


def test_an_aks_pool_ahead_of_its_machinepool_says_to_raise_the_machinepool() -> None:
    [finding] = mp1301("aks-managed", aks_agent_pool("1.34.1", "1.34.1"), "v1beta2")
    assert finding.action.startswith(
        "AzureManagedMachinePool's provider asked the cloud for 1.34.1 (ManagedClustersAgentPool "
        "spec.orchestratorVersion)"
    )
    [behind] = mp1301("aks-managed", aks_agent_pool("1.33.3", "1.32.9"), "v1beta2")
    assert behind.action.startswith(
        "ManagedClustersAgentPool status.currentOrchestratorVersion says what the provider last put"
    )


# Each provider API version that carries the field, as its CRD serves it (provider_kinds.yaml
# lists the served versions; CAPA keeps v1beta1 in its types though it serves only v1beta2).
PROVIDER_VERSIONS = [
    ("eks-ami-release", "AWSManagedMachinePool", "v1beta1"),
    ("eks-ami-release", "AWSManagedMachinePool", "v1beta2"),
    ("oke-version", "OCIManagedMachinePool", "v1beta1"),
    ("oke-version", "OCIManagedMachinePool", "v1beta2"),
    ("aso-orchestrator", "AzureASOManagedMachinePool", "v1alpha1"),
    ("aso-orchestrator", "AzureASOManagedMachinePool", "v1beta1"),
]


@pytest.mark.parametrize(("shape", "kind", "version"), PROVIDER_VERSIONS)
def test_the_field_is_read_in_every_provider_api_version(
    shape: str, kind: str, version: str
) -> None:
    scenario, fires, near_miss = SHAPES[shape]

    def in_version(change: Callable[[list[Obj]], None]) -> Callable[[list[Obj]], None]:
        def changed(objects: list[Obj]) -> None:
            change(objects)
            find(objects, kind)["apiVersion"] = f"{INFRA}/{version}"

        return changed

    assert len(mp1301(scenario, in_version(fires), "v1beta2")) == 1
    assert mp1301(scenario, in_version(near_miss), "v1beta2") == []
