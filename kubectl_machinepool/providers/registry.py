"""One record per infra MachinePool kind: every provider fact this tool acts on.

Behaviour (what deleting a Machine does, conditions, who owns replicas) is that of each
provider's infra-machine and infra-pool controllers; docs/delete-machine.md's table says it for
users and a test keeps the two equal. Every field path below was checked against the
json tags of the provider's Go API types at these upstream commits, and is the same at the tag:

  CAPA    kubernetes-sigs/cluster-api-provider-aws    2cf09d78547d (v2.11.1)  exp/api/v1beta2
          (awsmachinepool, awsmanagedmachinepool, rosamachinepool, types.go), api/v1beta2/types.go
  CAPZ    kubernetes-sigs/cluster-api-provider-azure  69ec3a40a818 (v1.26.0)
          exp/api/v1beta1/azuremachinepool_types.go; api/v1beta1 types.go, types_class.go,
          azureasomanagedmachinepool_types.go
  CAPG    kubernetes-sigs/cluster-api-provider-gcp    5e0bb3b249ca (v1.12.0)  exp/api/v1beta1
  CAPOCI  oracle/cluster-api-provider-oci             f917d3c5c587 (v0.24.0)  exp/api/v1beta2
          (spec.version also in v1beta1)
  CAPS    scaleway/cluster-api-provider-scaleway      453691a92b81 (v0.2.2)   api/v1alpha2
  CAPI    kubernetes-sigs/cluster-api                 ae7ff047db49 (v1.14.0)
          test/infrastructure/docker/api/v1beta2 (DockerMachinePool at v1.14.0: gone on main)
  ASO     Azure/azure-service-operator v2.18.0 (CAPZ v1.26.0's)  v2/api/containerservice/
          v1api20240901/managed_clusters_agent_pool_types_gen.go (and v1api20231001, v1api20250801)
  kwok    the stored capi-samples/cluster-api-provider-kwok (9e5f8f0) has no KwokMachinePool:
          its paths are left unknown.

Version fields (#7248) are those whose value names a Kubernetes release. Pools with none: CAPA's
AWSMachinePool (an explicit AMI id is opaque; without one CAPA looks the AMI up by the
MachinePool's version), GCPManagedMachinePool and Scaleway's pools (the provider sends the
MachinePool's version to the cloud, and GKE and Kapsule report theirs in no field of these
objects), OCIMachinePool and OCIVirtualMachinePool (an image OCID at most). AKS pools report
theirs in the ASO agent pool, their companion. CAPA has no releaseVersion field: the EKS AMI
release is spec.amiVersion.

A path is dotted from the object's root; `[]` marks a list whose every item holds the field.
A zone field holds a zone, an AD number or a list of them. None (or an empty tuple) means the
infra pool has no such field, or it was not verified.
"""

from __future__ import annotations

from typing import Protocol

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.providers.readings import (
    CAPG_IMAGE_FAMILY,
    CAPZ_CAPI_OFFER,
    CAPZ_REFERENCE_GALLERY_IMAGE,
    EKS_RELEASE,
    KUBERNETES,
)
from kubectl_machinepool.providers.records import (
    Companion,
    InstanceDeletion,
    Provider,
    RollingSignal,
    VersionField,
    ZoneSource,
    numbered,
)

INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


_CAPZ_POOL_TYPES = "exp/api/v1beta1/azuremachinepool_types.go, api/v1beta1/types.go"


def _capz_images(root: str) -> tuple[VersionField, ...]:
    """An AzureMachinePool image (spec.template.image, or status.image: the one in use)."""
    return (
        VersionField(
            f"{root}.computeGallery.version", CAPZ_REFERENCE_GALLERY_IMAGE, _CAPZ_POOL_TYPES
        ),
        VersionField(
            f"{root}.sharedGallery.version", CAPZ_REFERENCE_GALLERY_IMAGE, _CAPZ_POOL_TYPES
        ),
        VersionField(f"{root}.marketplace.version", CAPZ_CAPI_OFFER, _CAPZ_POOL_TYPES),
    )


_ASG_DOCS = (
    "AWS EC2 Auto Scaling user guide: Availability Zone distribution and rebalancing activities"
)


def _capa_zones(
    subnets: str, rebalance: str, source: str, suspended: tuple[str, ...] = ()
) -> ZoneSource:
    """CAPA places the ASG by its subnets, else its own zones, else spec.failureDomains, else the
    cluster's private subnets (pkg/cloud/scope/shared.go)."""
    return ZoneSource(
        fields=("spec.availabilityZones",),
        placed_by=(subnets,),
        failure_domains=True,
        replacement="the ASG launches the replacement in the zone with the fewest instances",
        rebalance=rebalance,
        rebalance_suspended=suspended,
        source=source,
    )


_CAPZ_ZONES = ZoneSource(
    failure_domains=True,
    naming=numbered,
    replacement="the VMSS adds the replacement to a zone that needs more VMs (best-effort zone "
    "balance; strict with spec.zoneBalance)",
    rebalance="nothing moves existing VMs: CAPZ sets no automatic zone rebalancing on the VMSS",
    source="Azure docs: zone balancing in Virtual Machine Scale Sets; CAPZ "
    "azure/scope/machinepool.go, azure/services/scalesets/spec.go",
)


def _aks_zones(field: str) -> ZoneSource:
    return ZoneSource(
        fields=(field,),
        naming=numbered,
        replacement="AKS spreads the pool's nodes over its zones",
        source="AKS docs: availability zones (zone-spanning node pools)",
    )


def _oci_zones(field: str) -> ZoneSource:
    # CAPOCI never reads spec.failureDomains; without a placement it uses every AD of the
    # cluster. The Node label is the AD name without its tenancy prefix (OCI CCM zones.go).
    return ZoneSource(fields=(field,), naming=numbered, source="CAPOCI exp/api/v1beta2")


_CAPD_ZONES = ZoneSource(
    failure_domains=True,
    replacement="CAPD gives each new container a random failure domain",
    rebalance="nothing evens the zones out",
    source="CAPI dockermachinepool_backend.go, the docker backend of both kinds (v1.14.0)",
)


_ASO_AGENT_POOL_TYPES = (
    "azure-service-operator v2/api/containerservice/v1api20250801/"
    "managed_clusters_agent_pool_types_gen.go"
)


def _aks_agent_pool(*, embedded: bool) -> Companion:
    """The ASO agent pool: the version CAPZ asks AKS for (the larger of the MachinePool's and
    the control plane's auto-upgrade version, azure/services/agentpools/spec.go), and the one
    AKS runs. status.nodeImageVersion names no Kubernetes release."""
    return Companion(
        "containerservice.azure.com",
        "ManagedClustersAgentPool",
        embedded,
        (
            VersionField("spec.orchestratorVersion", KUBERNETES, _ASO_AGENT_POOL_TYPES),
            VersionField("status.currentOrchestratorVersion", KUBERNETES, _ASO_AGENT_POOL_TYPES),
        ),
    )


AKS_NODE_IMAGE = "kubernetes.azure.com/node-image-version"
_REPLACED = "the instance is drained and deleted, then the provider creates a replacement"
_ANNOTATED_FIRST = "the annotated Machine is removed first"
_OCI_NO_OP = InstanceDeletion(
    False,
    "CAPOCI only removes the OCIMachinePoolMachine finalizer: the instance keeps running and its "
    "Node is deleted, so it comes back as a new Machine",
    False,
    "the annotation is ignored",
)

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "AzureMachinePool",
        "VMSS",
        "AzureMachinePoolMachine",
        InstanceDeletion(
            True,
            _REPLACED + " (the VMSS grows back to spec.replicas)",
            True,
            "CAPZ deletes the annotated AzureMachinePoolMachine first",
            annotation_deletes=True,
            sticky_when_managed="the instance is drained and deleted and the VMSS stays one "
            "smaller; CAPZ lowers spec.replicas to match (replicas-managed-by)",
        ),
        # The image asked for, and the one CAPZ put in the VMSS model (defaulted from the
        # MachinePool's version when none is asked for); status.version is never written.
        version_fields=(*_capz_images("spec.template.image"), *_capz_images("status.image")),
        provisioning_state_field="status.provisioningState",
        # CAPZ api/v1beta1/consts.go; azure/scope/machinepoolmachine.go sets the flag.
        rolling=(RollingSignal("ScaleSetModelUpdated", "False", updating=False),),
        latest_model_field="status.latestModelApplied",
        zones=_CAPZ_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "AWSMachinePool",
        "Auto Scaling Group",
        # Only with CAPA's MachinePoolMachines feature gate (default off).
        "AWSMachine",
        InstanceDeletion(
            True,
            _REPLACED + " (the ASG keeps its desired capacity)",
            False,
            "CAPA ignores the annotation: the ASG termination policy picks the instance, undrained",
        ),
        # CAPA suspends only the processes spec.suspendProcesses names
        # (exp/controllers/awsmachinepool_controller.go).
        zones=_capa_zones(
            "spec.subnets",
            "AZRebalance then evens the zones out, launching before it terminates",
            _ASG_DOCS,
            ("spec.suspendProcesses.processes.azRebalance", "spec.suspendProcesses.all"),
        ),
        autoscaler_scale_in="CAPA ignores cluster.x-k8s.io/delete-machine: on scale-down the ASG "
        "terminates an arbitrary instance, undrained",
        model_version_field="status.launchTemplateVersion",
    ),
    Provider(
        INFRA_GROUP,
        "AWSManagedMachinePool",
        "EKS managed node group",
        None,
        # The EKS AMI release; CAPA sends it apart from the Kubernetes version it takes from
        # the MachinePool (pkg/cloud/services/eks/nodegroup.go reconcileNodegroupVersion).
        version_fields=(
            VersionField(
                "spec.amiVersion", EKS_RELEASE, "exp/api/v1beta2/awsmanagedmachinepool_types.go"
            ),
        ),
        zones=_capa_zones(
            "spec.subnetIDs",
            "the node group's ASG evens the zones out (AZRebalance, which EKS relies on)",
            _ASG_DOCS + "; EKS user guide: managed node update behavior",
        ),
        model_version_field="status.launchTemplateVersion",
        node_image_label="eks.amazonaws.com/nodegroup-image",
    ),
    Provider(
        INFRA_GROUP,
        "ROSAMachinePool",
        "ROSA HCP node pool",
        None,
        rolling=(RollingSignal("RosaMachinePoolUpgrading", "True"),),
        zones=ZoneSource(fields=("spec.availabilityZone",), placed_by=("spec.subnet",)),
    ),
    Provider(
        INFRA_GROUP,
        "AzureManagedMachinePool",
        "AKS agent pool",
        None,
        companion=_aks_agent_pool(embedded=False),
        zones=_aks_zones("spec.availabilityZones"),
        node_image_label=AKS_NODE_IMAGE,
        # CAPZ marks a service's condition False/Updating while its long-running operation runs.
        rolling=(RollingSignal("AgentPoolsReady", "False", "Updating"),),
    ),
    # Its agent pool is an embedded ASO ManagedClustersAgentPool in spec.resources[]; CAPZ fails
    # the reconcile when its orchestratorVersion is not the MachinePool's
    # (pkg/mutators/azureasomanagedmachinepool.go).
    Provider(
        INFRA_GROUP,
        "AzureASOManagedMachinePool",
        "AKS agent pool",
        None,
        version_fields=(
            VersionField(
                "spec.resources[].spec.orchestratorVersion",
                KUBERNETES,
                "api/v1beta1/azureasomanagedmachinepool_types.go",
            ),
        ),
        companion=_aks_agent_pool(embedded=True),
        node_image_label=AKS_NODE_IMAGE,
        zones=_aks_zones("spec.resources[].spec.availabilityZones"),
    ),
    Provider(
        INFRA_GROUP,
        "GCPMachinePool",
        "managed instance group",
        None,
        # spec.image takes precedence over spec.imageFamily; the single zone of its MIG comes
        # from the MachinePool's spec.failureDomains. Unset, the family is CAPG's default for
        # the MachinePool's minor (cloud/scope/machinepool.go InstanceImageSpec).
        version_fields=(
            VersionField(
                "spec.imageFamily", CAPG_IMAGE_FAMILY, "exp/api/v1beta1/gcpmachinepool_types.go"
            ),
        ),
        # A zonal MIG: CAPG refuses more than one zone (cloud/scope/machinepool.go).
        zones=ZoneSource(failure_domains=True),
    ),
    Provider(
        INFRA_GROUP,
        "GCPManagedMachinePool",
        "GKE node pool",
        # Its own kind: core treats the pool as having Machines, but none exist.
        "GCPManagedMachinePool",
        rolling=(RollingSignal("GKEMachinePoolUpdating", "True"),),
        zones=ZoneSource(
            fields=("spec.nodeLocations",),
            replacement="the zone's instance group recreates its own instances",
            rebalance="GKE keeps a node count per zone: CAPG sends spec.replicas divided by the "
            "zones (regional clusters)",
            source="CAPG cloud/scope/managedmachinepool.go ConvertToSdkNodePool",
        ),
    ),
    Provider(
        INFRA_GROUP,
        "OCIMachinePool",
        "instance pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        zones=_oci_zones("spec.placementDetails[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "OCIManagedMachinePool",
        "OKE node pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        # CAPOCI never reads the MachinePool's version (#163, filed for #7248).
        version_fields=(
            VersionField(
                "spec.version",
                KUBERNETES,
                "exp/api/v1beta2/ocimanagedmachinepool_types.go",
                deployed=True,
            ),
        ),
        zones=_oci_zones("spec.nodePoolNodeConfig.placementConfigs[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "OCIVirtualMachinePool",
        "OKE virtual node pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        zones=_oci_zones("spec.placementConfigs[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "ScalewayManagedMachinePool",
        "Kapsule pool",
        None,
        zones=ZoneSource(fields=("spec.zone",)),
    ),
    Provider(
        INFRA_GROUP,
        "DevMachinePool",
        "docker containers",
        "DevMachine",
        InstanceDeletion(True, _REPLACED, True, _ANNOTATED_FIRST),
        zones=_CAPD_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "DockerMachinePool",
        "docker containers",
        "DockerMachine",
        InstanceDeletion(True, _REPLACED, True, _ANNOTATED_FIRST),
        zones=_CAPD_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "KwokMachinePool",
        "simulated nodes",
        "KwokMachine",
        InstanceDeletion(True, _REPLACED + " (simulated)", False, "the annotation is ignored"),
    ),
)

_BY_KIND = {(p.group, p.kind): p for p in PROVIDERS}


def infra_pool(group: str | None, kind: str | None) -> Provider | None:
    """The record of an infra pool kind; None for a kind (or group) this tool does not know."""
    return _BY_KIND.get((group or "", kind or ""))


class Typed(Protocol):
    """An object as read (the model's ObjectState): what names its kind."""

    @property
    def kind(self) -> str: ...
    @property
    def api_version(self) -> str: ...


def infra_pool_of(infra: Typed | None) -> Provider | None:
    """The record of an infra pool as read, by the group of its apiVersion and its kind."""
    return infra_pool(group_of(infra.api_version), infra.kind) if infra else None


def instance_deletion(
    group: str | None, kind: str | None, machine_kind: str | None
) -> InstanceDeletion | None:
    """What deleting one Machine does, for a pool whose infra pool names exactly that kind."""
    provider = infra_pool(group, kind)
    if provider is None or provider.machine_kind != machine_kind:
        return None
    return provider.deletion


def annotation_deletes(kind: str) -> bool:
    """Whether the delete-machine annotation alone makes this kind's provider delete the instance.

    By kind alone, whatever the group: the answer decides that a mark is never taken back, and
    keeping one that was harmless is the safe mistake.
    """
    return any(p.kind == kind and p.deletion and p.deletion.annotation_deletes for p in PROVIDERS)
