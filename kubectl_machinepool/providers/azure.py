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
    CloudFields,
    Companion,
    InstanceDeletion,
    Provider,
    RollingSignal,
    VersionField,
    ZoneSource,
    numbered,
)
from kubectl_machinepool.providers.rolls import (
    BOOTSTRAP_REF,
    BOOTSTRAP_SECRET,
    VERSION,
    Effect,
    Rolls,
    Rule,
    When,
    bootstrap_rule,
    path,
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


def _gallery(kind: str) -> str:
    root = f"status.image.{kind}"
    return f"{{{root}.gallery}}/{{{root}.name}}/{{{root}.version}}"


_MARKETPLACE = ":".join(
    f"{{status.image.marketplace.{key}}}" for key in ("publisher", "offer", "sku", "version")
)
# A Uniform VMSS's VM, else a Flexible one's (a VM of its own). Deleted from a VMSS, CAPZ grows
# it back to spec.replicas (azure/services/scalesets); AKS's VMSS are in the node resource group
# AKS owns, where nothing is to be changed by hand (AKS docs), so AKS pools get no replace.
_VMSS_VIEW = (
    "az vmss get-instance-view --resource-group {group} --name {scale_set} "
    "--instance-id {instance}",
    "az vm get-instance-view --resource-group {group} --name {vm}",
)
# What AKS runs, in the ASO agent pool's status.
_AGENT_POOL_IMAGE = (("node image", "{status.nodeImageVersion}"),)


AKS_NODE_IMAGE = "kubernetes.azure.com/node-image-version"
# AKS docs (upgrade-aks-cluster): minor versions cannot be skipped; CAPZ sends the target as it is.
_AKS_ONE_MINOR = "AKS upgrades one minor version at a time, and CAPZ does not step"


# What rolls a VMSS: CAPZ replaces an instance only when its image is not the model's; the rest
# of the model reaches new VMs only (CAPZ#2972).
_LATEST_MODEL = "azure/scope/machinepoolmachine.go hasLatestModelApplied, azure/types.go"
_NEW_DATA = (
    "new bootstrap data goes into the VMSS model (its custom data hash), which only new VMs get: "
    "CAPZ replaces an instance only for another image"
)
_SCALE_SET = "azure/services/scalesets/spec.go existingParameters"
_VMSS_ROLLS = Rolls(
    infra=(
        Rule(
            path("spec.template.image"),
            Effect.ROLLS_ALL,
            "an instance on another image is not on the latest model: CAPZ replaces each",
            _LATEST_MODEL,
        ),
        Rule(
            path("spec.template"),
            Effect.NEW_ONLY,
            "it reaches the VMSS model at its next update, which only new VMs get: CAPZ replaces "
            "an instance only for another image (CAPZ#2972)",
            f"{_SCALE_SET}; {_LATEST_MODEL}",
        ),
        Rule(
            path("spec.additionalTags"),
            Effect.ROLLS_NONE,
            "CAPZ's tags service updates the tags in place, no model change",
            "exp/controllers/azuremachinepool_reconciler.go; azure/types.go HasModelChanges; "
            "CAPZ#5020",
            surprise="CAPZ#1763: before CAPZ#5020 a tag change rolled every instance; on such "
            "a CAPZ it still does",
        ),
        Rule(
            path("spec.strategy"),
            Effect.ROLLS_NONE,
            "it says how the next roll goes",
            "exp/api/v1beta1/azuremachinepool_types.go",
        ),
    ),
    pool=(
        Rule(
            VERSION,
            Effect.ROLLS_ALL,
            "CAPZ takes the default image of the new version, and replaces each instance on "
            "another image",
            f"azure/scope/machinepool.go GetVMImage; {_LATEST_MODEL}",
            when=(
                When(
                    path("spec.template.image"),
                    Effect.ROLLS_NONE,
                    "the image is pinned in the AzureMachinePool's spec.template.image: the new "
                    "version reaches no instance until the image changes too (cluster-api#7248)",
                    "azure/scope/machinepool.go GetVMImage",
                ),
            ),
        ),
        *(
            Rule(
                field,
                Effect.NEW_ONLY,
                _NEW_DATA,
                f"{_SCALE_SET}; {_LATEST_MODEL}",
                surprise="the new bootstrap config name that rolls a CAPA pool (cluster-api#8858) "
                "replaces no CAPZ instance: change the image, or replace the instances (rollout "
                "restart)",
            )
            for field in (BOOTSTRAP_REF, BOOTSTRAP_SECRET)
        ),
    ),
    bootstrap=bootstrap_rule(_NEW_DATA, _LATEST_MODEL),
    strategy=(path("spec.strategy"),),
    strategy_default="RollingUpdate: maxSurge 1, maxUnavailable 0, deletePolicy Oldest "
    "(exp/api/v1beta1/azuremachinepool_types.go)",
)
_AKS_UPGRADE = "azure/services/agentpools/spec.go"
_AKS_ROLLS = Rolls(
    infra=tuple(
        Rule(
            path(f"spec.{name}"),
            Effect.REFUSED,
            "the field is immutable",
            "internal/webhooks/azuremanagedmachinepool_webhook.go",
        )
        for name in (
            "name",
            "osType",
            "sku",
            "osDiskSizeGB",
            "subnetName",
            "enableFIPS",
            "enableEncryptionAtHost",
            "availabilityZones",
        )
    ),
    pool=(
        Rule(
            VERSION,
            Effect.MANAGED_UPGRADE,
            "CAPZ asks AKS to upgrade the agent pool, which replaces the nodes with surge",
            _AKS_UPGRADE,
        ),
    ),
    strategy_default="AKS's node surge for the agent pool (AKS docs: upgrade an AKS cluster)",
)


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
        cloud=CloudFields(
            "Azure",
            # The scale set its VMs are in; CAPZ names it after the AzureMachinePool, a Windows
            # one longer than 9 characters "win-" and its last 5 (azure/scope/machinepool.go Name).
            name=("{scale_set}", "{metadata.name}"),
            instance_type=("{spec.template.vmSize}",),
            # What CAPZ put in the VMSS model (the template's image, defaulted).
            image=(
                ("image", "{status.image.id}"),
                ("gallery image", _gallery("computeGallery")),
                ("shared gallery image", _gallery("sharedGallery")),
                ("marketplace image", _MARKETPLACE),
            ),
            machine_id="spec.instanceID",
            inspect=_VMSS_VIEW,
            replace=(
                "az vmss delete-instances --resource-group {group} --name {scale_set} "
                "--instance-ids {instance}",
            ),
            source="exp/api/v1beta1/azuremachinepool_types.go, azuremachinepoolmachine_types.go; "
            "api/v1beta1/types.go Image",
        ),
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
        rolls=_VMSS_ROLLS,
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
        # CAPZ names the agent pool spec.name, else after the AzureManagedMachinePool.
        cloud=CloudFields(
            "Azure",
            name=("{spec.name}", "{metadata.name}"),
            instance_type=("{spec.sku}",),
            companion_image=_AGENT_POOL_IMAGE,
            inspect=_VMSS_VIEW[:1],
            source="api/v1beta1/types_class.go AzureManagedMachinePoolClassSpec; "
            "azure/scope/managedmachinepool.go",
        ),
        node_image_label=AKS_NODE_IMAGE,
        # CAPZ marks a service's condition False/Updating while its long-running operation runs.
        rolling=(RollingSignal("AgentPoolsReady", "False", "Updating"),),
        upgrade=Upgrade(one_minor=_AKS_ONE_MINOR),
        rolls=_AKS_ROLLS,
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
        # ASO names the agent pool azureName, else after the embedded object.
        cloud=CloudFields(
            "Azure",
            name=("{spec.resources[].spec.azureName}", "{spec.resources[].metadata.name}"),
            instance_type=("{spec.resources[].spec.vmSize}",),
            companion_image=_AGENT_POOL_IMAGE,
            inspect=_VMSS_VIEW[:1],
            source="api/v1beta1/azureasomanagedmachinepool_types.go; " + _ASO_AGENT_POOL_TYPES,
        ),
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
