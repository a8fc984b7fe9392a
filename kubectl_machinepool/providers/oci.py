"""Cluster API Provider OCI (CAPOCI): instance pools, OKE node pools and OKE virtual node pools.
Field paths checked against the json tags of oracle/cluster-api-provider-oci f917d3c5c587
(v0.24.0), exp/api/v1beta2 (spec.version also in v1beta1). An instance pool or a virtual node pool
has no version field (an image OCID at most).
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.readings import KUBERNETES
from kubectl_machinepool.providers.records import (
    INFRA_GROUP,
    CloudFields,
    InstanceDeletion,
    Provider,
    VersionField,
    ZoneSource,
    numbered,
)
from kubectl_machinepool.providers.rolls import Effect, Rolls, Rule, When, path
from kubectl_machinepool.providers.upgrades import WITH_V, Upgrade, UpgradeField


def _oci_zones(field: str) -> ZoneSource:
    # CAPOCI never reads spec.failureDomains; without a placement it uses every AD of the
    # cluster. The Node label is the AD name without its tenancy prefix (OCI CCM zones.go).
    return ZoneSource(fields=(field,), naming=numbered, source="CAPOCI exp/api/v1beta2")


_OCI_NO_OP = InstanceDeletion(
    False,
    "CAPOCI only removes the OCIMachinePoolMachine finalizer: the instance keeps running and its "
    "Node is deleted, so it comes back as a new Machine",
    False,
    "the annotation is ignored",
    source="exp/controllers/ocimachinepoolmachine_controller.go",
)


_INSTANCE_GET = ("oci compute instance get --instance-id {instance}",)
# CAPOCI names every pool after its infra pool (cloud/scope/machine_pool.go,
# managed_machine_pool.go, virtual_machine_pool.go); an instance's OCID is its
# OCIMachinePoolMachine's spec.ocid.
_NAMED = ("{metadata.name}",)


_OKE = "cloud/scope/managed_machine_pool.go"
_OCI_ROLLS = Rolls(
    infra=(
        Rule(
            path("spec.instanceConfiguration"),
            Effect.NEW_ONLY,
            "a new instance configuration reaches only new instances; replace the others in OCI",
            "cloud/scope/machine_pool.go",
        ),
    ),
)
_OKE_ROLLS = Rolls(
    infra=(
        Rule(
            path("spec.version"),
            Effect.NEW_ONLY,
            "OKE updates the node pool, whose existing nodes stay as they are without node cycling",
            _OKE,
            when=(
                When(
                    path("spec.nodePoolCyclingDetails.isNodeCyclingEnabled"),
                    Effect.MANAGED_UPGRADE,
                    "OKE updates the node pool and cycles its nodes",
                    _OKE,
                    value=True,
                ),
            ),
        ),
        Rule(
            path("spec.nodePoolCyclingDetails"),
            Effect.ROLLS_NONE,
            "it says how the next node cycling goes",
            _OKE,
        ),
    ),
    strategy=(path("spec.nodePoolCyclingDetails"),),
    strategy_default="no node cycling: existing nodes are not replaced (OKE docs: node pool "
    "cycling; docs)",
)


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "OCIMachinePool",
        "instance pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        zones=_oci_zones("spec.placementDetails[].availabilityDomain"),
        cloud=CloudFields(
            "OCI",
            name=_NAMED,
            pool_id=("{spec.ocid}",),
            instance_type=("{spec.instanceConfiguration.shape}",),
            image=(("image", "{spec.instanceConfiguration.instanceSourceViaImageConfig.imageId}"),),
            machine_id="spec.ocid",
            inspect=_INSTANCE_GET,
            # Not decrementing its size, the pool provisions a replacement (OCI CLI:
            # compute-management instance-pool-instance detach).
            replace=(
                "oci compute-management instance-pool-instance detach --instance-pool-id {pool_id} "
                "--instance-id {instance} --is-auto-terminate true --is-decrement-size false",
            ),
            source="exp/api/v1beta2/ocimachinepool_types.go, ocimachinepool_machine_types.go",
        ),
        # CAPOCI looks no image up for an instance pool: the MachinePool's version reaches only
        # the bootstrap data.
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.instanceConfiguration.instanceSourceViaImageConfig.imageId",
                    None,
                    None,
                    "cloud/scope/machine_pool.go",
                ),
            ),
        ),
        rolls=_OCI_ROLLS,
        operations=Operations(
            rolls="nothing CAPOCI does: a new instance configuration reaches only new instances "
            "(cloud/scope/machine_pool.go); replace the others in OCI",
            pause_caveat="the instance pool keeps its size in OCI, replacing an instance that "
            "ends (OCI docs: instance pools; docs)",
        ),
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
        cloud=CloudFields(
            "OCI",
            name=_NAMED,
            pool_id=("{spec.id}",),
            instance_type=("{spec.nodeShape}",),
            image=(("image", "{spec.nodeSourceViaImage.imageId}"),),
            machine_id="spec.ocid",
            inspect=_INSTANCE_GET,
            # Not decrementing its size, OKE creates a replacement (OKE API: DeleteNode).
            replace=(
                "oci ce node-pool delete-node --node-pool-id {pool_id} --node-id {instance} "
                "--is-decrement-size false",
            ),
            source="exp/api/v1beta2/ocimanagedmachinepool_types.go, "
            "ocimachinepool_machine_types.go",
        ),
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.version", WITH_V, None, "exp/api/v1beta2/ocimanagedmachinepool_webhook.go"
                ),
                # CAPOCI pins the image it looked up; cleared, it looks one up for the version.
                UpgradeField(
                    "spec.nodeSourceViaImage.imageId",
                    None,
                    "spec.nodeSourceViaImage.imageId",
                    "cloud/scope/managed_machine_pool.go setNodepoolImageId",
                ),
            ),
        ),
        rolls=_OKE_ROLLS,
        operations=Operations(
            rolls="a new spec.version or image makes OKE update the node pool; existing nodes "
            "are replaced only with spec.nodePoolCyclingDetails.isNodeCyclingEnabled "
            "(cloud/scope/managed_machine_pool.go)",
            pause_caveat="an OKE node pool update or node cycling already started goes on "
            "(OKE docs: node pool cycling; docs)",
        ),
    ),
    Provider(
        INFRA_GROUP,
        "OCIVirtualMachinePool",
        "OKE virtual node pool",
        "OCIMachinePoolMachine",
        _OCI_NO_OP,
        zones=_oci_zones("spec.placementConfigs[].availabilityDomain"),
        # Virtual nodes are no compute instances of the tenancy.
        cloud=CloudFields(
            "OCI",
            name=_NAMED,
            pool_id=("{spec.id}",),
            machine_id="spec.ocid",
            source="exp/api/v1beta2/ocivirtualmachinepool_types.go",
        ),
        upgrade=Upgrade(
            unsupported="OKE versions virtual nodes itself: CAPOCI sends no version "
            "(cloud/scope/virtual_machine_pool.go)"
        ),
        operations=Operations(
            rolls="nothing in the pool's objects: OKE manages virtual nodes itself "
            "(cloud/scope/virtual_machine_pool.go)",
            pause_caveat="OKE keeps managing the virtual nodes (OKE docs: virtual nodes; docs)",
        ),
    ),
)
