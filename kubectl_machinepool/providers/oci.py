"""Cluster API Provider OCI (CAPOCI): instance pools, OKE node pools and OKE virtual node pools.
Field paths checked against the json tags of oracle/cluster-api-provider-oci f917d3c5c587
(v0.24.0), exp/api/v1beta2 (spec.version also in v1beta1). An instance pool or a virtual node pool
has no version field (an image OCID at most).
"""

from __future__ import annotations

from kubectl_machinepool.providers.readings import KUBERNETES
from kubectl_machinepool.providers.records import (
    INFRA_GROUP,
    InstanceDeletion,
    Provider,
    VersionField,
    ZoneSource,
    numbered,
)


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
)


PROVIDERS: tuple[Provider, ...] = (
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
)
