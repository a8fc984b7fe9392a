"""One record per infra MachinePool kind: every provider fact this tool acts on.

Behaviour (what deleting a Machine does, conditions, who owns replicas) is that of each
provider's infra-machine and infra-pool controllers; README's delete-machine table says it for
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

from dataclasses import dataclass
from typing import Protocol

from kubectl_machinepool.base.apiversion import group_of

INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


@dataclass(frozen=True, slots=True)
class InstanceDeletion:
    """What deleting one Machine of the pool does in the cloud (README: delete-machine)."""

    # False: the Machine goes, but the instance keeps running (the tool refuses).
    deletes_instance: bool
    # One sentence: what deleting one Machine does.
    effect: str
    # Whether the provider removes the Machine annotated cluster.x-k8s.io/delete-machine first
    # when replicas go down (cluster-autoscaler's way to remove a chosen instance).
    honours_delete_annotation: bool
    scale_down_effect: str
    # Whether the annotation alone, before replicas go down, makes the provider delete it.
    annotation_deletes: bool = False
    # With replicas-managed-by the provider lowers spec.replicas to the cloud's count, so a
    # deleted instance is not replaced: what deleting one does then. None: replaced as usual.
    sticky_when_managed: str | None = None


@dataclass(frozen=True, slots=True)
class VersionField:
    """A field that names the Kubernetes release the provider rolls the pool to (#7248)."""

    # Dotted from the object's root; `[]` crosses a list (each item is read).
    path: str
    # How its value names a release: a key of targets.READINGS.
    reading: str
    # Where the provider defines it, at the commit of the module docstring.
    source: str
    # The provider deploys this version instead of the MachinePool's (CAPOCI's OKE pools).
    deployed: bool = False


# CAPZ's reference images live in this community gallery; their versions are Kubernetes
# releases (azure/services/virtualmachineimages/images.go).
CAPZ_REFERENCE_GALLERY = "ClusterAPI-f72ceb4f"
_CAPZ_POOL_TYPES = "exp/api/v1beta1/azuremachinepool_types.go, api/v1beta1/types.go"


def _capz_images(root: str) -> tuple[VersionField, ...]:
    """An AzureMachinePool image (spec.template.image, or status.image: the one in use)."""
    return (
        VersionField(f"{root}.computeGallery.version", "capz-reference-gallery", _CAPZ_POOL_TYPES),
        VersionField(f"{root}.sharedGallery.version", "capz-reference-gallery", _CAPZ_POOL_TYPES),
        VersionField(f"{root}.marketplace.version", "capz-capi-offer", _CAPZ_POOL_TYPES),
    )


@dataclass(frozen=True, slots=True)
class ZoneSource:
    """Where the provider takes a pool's zones from, and what its cloud does to keep them even.

    Balanced means every zone within one instance of the others, as AWS, Azure and GCP define it.
    """

    # The infra pool's own zone fields, in the provider's order of precedence.
    fields: tuple[str, ...] = ()
    # Fields that, when set, place instances by something whose zones the pool does not name
    # (subnets): the zones are then not known here.
    placed_by: tuple[str, ...] = ()
    # Whether the MachinePool's spec.failureDomains is used when none of the fields is set.
    failure_domains: bool = False
    # How a Node's zone label names one of these zones: a key of zones.NAMINGS.
    naming: str = "as-named"
    # Where the cloud puts the instance that replaces a deleted one; None: not verified.
    replacement: str | None = None
    # Whether, and how, the cloud moves instances to even zones out; None: not verified.
    rebalance: str | None = None
    # The first of these infra pool fields that holds a boolean says whether that rebalancing
    # is suspended.
    rebalance_suspended: tuple[str, ...] = ()
    # Where the behaviour above is stated.
    source: str = ""


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
    naming="numbered",
    replacement="the VMSS adds the replacement to a zone that needs more VMs (best-effort zone "
    "balance; strict with spec.zoneBalance)",
    rebalance="nothing moves existing VMs: CAPZ sets no automatic zone rebalancing on the VMSS",
    source="Azure docs: zone balancing in Virtual Machine Scale Sets; CAPZ "
    "azure/scope/machinepool.go, azure/services/scalesets/spec.go",
)


def _aks_zones(field: str) -> ZoneSource:
    return ZoneSource(
        fields=(field,),
        naming="numbered",
        replacement="AKS spreads the pool's nodes over its zones",
        source="AKS docs: availability zones (zone-spanning node pools)",
    )


def _oci_zones(field: str) -> ZoneSource:
    # CAPOCI never reads spec.failureDomains; without a placement it uses every AD of the
    # cluster. The Node label is the AD name without its tenancy prefix (OCI CCM zones.go).
    return ZoneSource(fields=(field,), naming="numbered", source="CAPOCI exp/api/v1beta2")


_CAPD_ZONES = ZoneSource(
    failure_domains=True,
    replacement="CAPD gives each new container a random failure domain",
    rebalance="nothing evens the zones out",
    source="CAPI dockermachinepool_backend.go, the docker backend of both kinds (v1.14.0)",
)


@dataclass(frozen=True, slots=True)
class Companion:
    """An object the provider makes for each infra pool, holding what the cloud answers."""

    group: str
    kind: str
    # How it is named: "infra-pool" (the infra pool's name, as CAPZ normalises it) or
    # "embedded" (as the infra pool's spec.resources[] names an object of this kind).
    named: str
    version_fields: tuple[VersionField, ...]


_ASO_AGENT_POOL_TYPES = (
    "azure-service-operator v2/api/containerservice/v1api20250801/"
    "managed_clusters_agent_pool_types_gen.go"
)


def _aks_agent_pool(named: str) -> Companion:
    """The ASO agent pool: the version CAPZ asks AKS for (the larger of the MachinePool's and
    the control plane's auto-upgrade version, azure/services/agentpools/spec.go), and the one
    AKS runs. status.nodeImageVersion names no Kubernetes release."""
    return Companion(
        "containerservice.azure.com",
        "ManagedClustersAgentPool",
        named,
        (
            VersionField("spec.orchestratorVersion", "kubernetes", _ASO_AGENT_POOL_TYPES),
            VersionField("status.currentOrchestratorVersion", "kubernetes", _ASO_AGENT_POOL_TYPES),
        ),
    )


@dataclass(frozen=True, slots=True)
class Provider:
    """One infra pool kind, as its provider implements it."""

    group: str
    kind: str
    # The project, as tests/support/provider_kinds.yaml names it.
    project: str
    # What one pool is in the cloud.
    cloud_object: str
    # status.infrastructureMachineKind as the provider sets it; None when it sets none.
    machine_kind: str | None
    # None when the pool has no per-instance Machines.
    deletion: InstanceDeletion | None = None
    # A condition that is True while the managed service rolls the pool, even when ready.
    updating_condition: str | None = None
    # A condition of the infra pool that is False while instances run an older model.
    model_condition: str | None = None
    # The infra machine's flag (a dotted path) that says it runs the pool's latest model.
    latest_model_field: str | None = None
    # Where the infra pool says which model (launch template version) new instances get: shown
    # by rollout status (CAPA keeps no per-instance model; its status.instances[].version is
    # never filled in, pkg/cloud/scope/machinepool.go UpdateInstanceStatuses).
    model_version_field: str | None = None
    # The label the managed service puts on each Node naming the image it runs (shown by
    # rollout status as evidence, not compared: the target image is not in the pool's objects).
    node_image_label: str | None = None
    # Fields that name the Kubernetes release the pool rolls to, besides the MachinePool's.
    version_fields: tuple[VersionField, ...] = ()
    # The object the provider keeps the cloud's side in, with version fields of its own.
    companion: Companion | None = None
    # ROSA's infra pool version is OpenShift's: never compared with Kubernetes versions.
    openshift_version_field: str | None = None
    # Where the image is named, in the order the tool reads them.
    image_fields: tuple[str, ...] = ()
    # Where the pool's zones come from; None: not verified (spec.failureDomains is assumed).
    zones: ZoneSource | None = None
    # A provisioning state that can say Failed while status.ready is true.
    provisioning_state_field: str | None = None
    # What goes wrong when cluster-autoscaler scales in this pool's Machines; None: nothing
    # this tool warns about.
    autoscaler_scale_in: str | None = None


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
        "CAPZ",
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
        image_fields=("status.image", "spec.template.image"),
        provisioning_state_field="status.provisioningState",
        # CAPZ api/v1beta1/consts.go; azure/scope/machinepoolmachine.go sets the flag.
        model_condition="ScaleSetModelUpdated",
        latest_model_field="status.latestModelApplied",
        zones=_CAPZ_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "AWSMachinePool",
        "CAPA",
        "Auto Scaling Group",
        # Only with CAPA's MachinePoolMachines feature gate (default off).
        "AWSMachine",
        InstanceDeletion(
            True,
            _REPLACED + " (the ASG keeps its desired capacity)",
            False,
            "CAPA ignores the annotation: the ASG termination policy picks the instance, undrained",
        ),
        image_fields=("spec.awsLaunchTemplate.ami.id",),
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
        "CAPA",
        "EKS managed node group",
        None,
        # The EKS AMI release; CAPA sends it apart from the Kubernetes version it takes from
        # the MachinePool (pkg/cloud/services/eks/nodegroup.go reconcileNodegroupVersion).
        version_fields=(
            VersionField(
                "spec.amiVersion", "eks-release", "exp/api/v1beta2/awsmanagedmachinepool_types.go"
            ),
        ),
        image_fields=("spec.awsLaunchTemplate.ami.id", "spec.amiVersion", "spec.amiType"),
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
        "CAPA",
        "ROSA HCP node pool",
        None,
        updating_condition="RosaMachinePoolUpgrading",
        openshift_version_field="spec.version",
        zones=ZoneSource(fields=("spec.availabilityZone",), placed_by=("spec.subnet",)),
    ),
    Provider(
        INFRA_GROUP,
        "AzureManagedMachinePool",
        "CAPZ",
        "AKS agent pool",
        None,
        companion=_aks_agent_pool("infra-pool"),
        zones=_aks_zones("spec.availabilityZones"),
        node_image_label=AKS_NODE_IMAGE,
    ),
    # Its agent pool is an embedded ASO ManagedClustersAgentPool in spec.resources[]; CAPZ fails
    # the reconcile when its orchestratorVersion is not the MachinePool's
    # (pkg/mutators/azureasomanagedmachinepool.go).
    Provider(
        INFRA_GROUP,
        "AzureASOManagedMachinePool",
        "CAPZ",
        "AKS agent pool",
        None,
        version_fields=(
            VersionField(
                "spec.resources[].spec.orchestratorVersion",
                "kubernetes",
                "api/v1beta1/azureasomanagedmachinepool_types.go",
            ),
        ),
        companion=_aks_agent_pool("embedded"),
        node_image_label=AKS_NODE_IMAGE,
        zones=_aks_zones("spec.resources[].spec.availabilityZones"),
    ),
    Provider(
        INFRA_GROUP,
        "GCPMachinePool",
        "CAPG",
        "managed instance group",
        None,
        # spec.image takes precedence over spec.imageFamily; the single zone of its MIG comes
        # from the MachinePool's spec.failureDomains. Unset, the family is CAPG's default for
        # the MachinePool's minor (cloud/scope/machinepool.go InstanceImageSpec).
        version_fields=(
            VersionField(
                "spec.imageFamily", "capg-image-family", "exp/api/v1beta1/gcpmachinepool_types.go"
            ),
        ),
        image_fields=("spec.image", "spec.imageFamily"),
        # A zonal MIG: CAPG refuses more than one zone (cloud/scope/machinepool.go).
        zones=ZoneSource(failure_domains=True),
    ),
    Provider(
        INFRA_GROUP,
        "GCPManagedMachinePool",
        "CAPG",
        "GKE node pool",
        # Its own kind: core treats the pool as having Machines, but none exist.
        "GCPManagedMachinePool",
        updating_condition="GKEMachinePoolUpdating",
        image_fields=("spec.imageType",),
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
        "CAPOCI",
        "instance pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        image_fields=("spec.instanceConfiguration.instanceSourceViaImageConfig.imageId",),
        zones=_oci_zones("spec.placementDetails[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "OCIManagedMachinePool",
        "CAPOCI",
        "OKE node pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        # CAPOCI never reads the MachinePool's version (#163, filed for #7248).
        version_fields=(
            VersionField(
                "spec.version",
                "kubernetes",
                "exp/api/v1beta2/ocimanagedmachinepool_types.go",
                deployed=True,
            ),
        ),
        image_fields=("spec.nodeSourceViaImage.imageId",),
        zones=_oci_zones("spec.nodePoolNodeConfig.placementConfigs[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "OCIVirtualMachinePool",
        "CAPOCI",
        "OKE virtual node pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        zones=_oci_zones("spec.placementConfigs[].availabilityDomain"),
    ),
    Provider(
        INFRA_GROUP,
        "ScalewayManagedMachinePool",
        "Scaleway",
        "Kapsule pool",
        None,
        zones=ZoneSource(fields=("spec.zone",)),
    ),
    Provider(
        INFRA_GROUP,
        "DevMachinePool",
        "CAPI",
        "docker containers",
        "DevMachine",
        InstanceDeletion(True, _REPLACED, True, _ANNOTATED_FIRST),
        image_fields=("spec.backend.docker.customImage",),
        zones=_CAPD_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "DockerMachinePool",
        "CAPI",
        "docker containers",
        "DockerMachine",
        InstanceDeletion(True, _REPLACED, True, _ANNOTATED_FIRST),
        image_fields=("spec.template.customImage",),
        zones=_CAPD_ZONES,
    ),
    Provider(
        INFRA_GROUP,
        "KwokMachinePool",
        "kwok",
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


def field_keys(path: str) -> tuple[str, ...]:
    """The keys to dig() for a field path that crosses no list."""
    if "[]" in path:
        raise ValueError(f"{path} crosses a list")
    return tuple(path.split("."))
