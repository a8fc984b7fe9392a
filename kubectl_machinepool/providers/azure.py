"""Cluster API Provider Azure (CAPZ): VM Scale Sets and AKS agent pools. Field paths checked
against the json tags of kubernetes-sigs/cluster-api-provider-azure 69ec3a40a818 (v1.26.0):
exp/api/v1beta1/azuremachinepool_types.go; api/v1beta1 types.go, types_class.go,
azureasomanagedmachinepool_types.go; and of Azure/azure-service-operator v2.18.0 (CAPZ v1.26.0's)
v2/api/containerservice/v1api20240901/managed_clusters_agent_pool_types_gen.go (and v1api20231001,
v1api20250801). AKS pools report their version in the ASO agent pool, their companion.
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.readings import (
    CAPZ_CAPI_OFFER,
    CAPZ_REFERENCE_GALLERY_IMAGE,
    KUBERNETES,
)
from kubectl_machinepool.providers.records import (
    INFRA_GROUP,
    REPLACED,
    Companion,
    InstanceDeletion,
    Provider,
    RollingSignal,
    VersionField,
    ZoneSource,
    numbered,
)
from kubectl_machinepool.providers.upgrades import (
    REFERENCE_GALLERY,
    WITHOUT_V,
    Upgrade,
    UpgradeField,
)

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
# AKS docs (upgrade-aks-cluster): minor versions cannot be skipped; CAPZ sends the target as it is.
_AKS_ONE_MINOR = "AKS upgrades one minor version at a time, and CAPZ does not step"


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "AzureMachinePool",
        "VMSS",
        "AzureMachinePoolMachine",
        InstanceDeletion(
            True,
            REPLACED + " (the VMSS grows back to spec.replicas)",
            True,
            "CAPZ deletes the annotated AzureMachinePoolMachine first",
            annotation_deletes=True,
            sticky_when_managed="the instance is drained and deleted and the VMSS stays one "
            "smaller; CAPZ lowers spec.replicas to match (replicas-managed-by)",
            source="exp/controllers/azuremachinepoolmachine_controller.go, "
            "azure/scope/machinepool.go; CAPZ#4941",
        ),
        # The image asked for, and the one CAPZ put in the VMSS model (defaulted from the
        # MachinePool's version when none is asked for); status.version is never written.
        version_fields=(*_capz_images("spec.template.image"), *_capz_images("status.image")),
        provisioning_state_field="status.provisioningState",
        # CAPZ api/v1beta1/consts.go; azure/scope/machinepoolmachine.go sets the flag.
        rolling=(RollingSignal("ScaleSetModelUpdated", "False", updating=False),),
        latest_model_field="status.latestModelApplied",
        zones=_CAPZ_ZONES,
        upgrade=Upgrade(
            fields=(
                *(
                    UpgradeField(
                        f"spec.template.image.{kind}.version",
                        REFERENCE_GALLERY,
                        "spec.template.image",
                        "azure/services/virtualmachineimages/images.go",
                    )
                    for kind in ("computeGallery", "sharedGallery")
                ),
                # The capi offer has images up to v1.30.3 only, dated: never derived.
                UpgradeField(
                    "spec.template.image.marketplace.version",
                    None,
                    "spec.template.image",
                    "azure/services/virtualmachineimages/images.go",
                ),
                UpgradeField(
                    "spec.template.image.id",
                    None,
                    "spec.template.image",
                    "azure/scope/machinepool.go GetVMImage",
                ),
            ),
        ),
        operations=Operations(
            rolls="a new VMSS model (image, VM size, bootstrap data): CAPZ replaces the "
            "instances on an older model as spec.strategy.rollingUpdate says, each through its "
            "Machine (azure/scope/machinepool.go)",
            pause_caveat="a VMSS operation already sent to Azure (a scale, a model update, "
            "instance deletions: status.longRunningOperationStates) runs to its end "
            "(azure/scope/machinepool.go)",
        ),
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
        upgrade=Upgrade(one_minor=_AKS_ONE_MINOR),
        operations=Operations(
            rolls="a new version makes CAPZ ask AKS to upgrade the agent pool, which replaces "
            "the nodes with surge (azure/services/agentpools/spec.go); a node image upgrade is "
            "AKS's own",
            pause_caveat="an AKS agent pool upgrade or node image upgrade already running goes "
            "on in Azure, as do the cluster's auto-upgrade channels (AKS docs: upgrade an AKS "
            "cluster, auto-upgrade; docs)",
        ),
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
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.resources[].spec.orchestratorVersion",
                    WITHOUT_V,
                    None,
                    "pkg/mutators/azureasomanagedmachinepool.go",
                ),
            ),
            one_minor=_AKS_ONE_MINOR,
        ),
        operations=Operations(
            rolls="a change of the embedded agent pool (orchestratorVersion, node image) that "
            "ASO sends to AKS, which replaces the nodes as its upgradeSettings say "
            "(pkg/mutators/azureasomanagedmachinepool.go)",
            pause_caveat="an AKS agent pool upgrade or node image upgrade already running goes "
            "on in Azure, as do the cluster's auto-upgrade channels (AKS docs: upgrade an AKS "
            "cluster, auto-upgrade; docs)",
        ),
    ),
)
