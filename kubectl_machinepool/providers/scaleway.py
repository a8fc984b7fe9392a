"""Cluster API Provider Scaleway (CAPS): Kapsule pools. Field paths checked against the json tags
of scaleway/cluster-api-provider-scaleway 453691a92b81 (v0.2.2), api/v1alpha2. No version field:
CAPS sends the MachinePool's version, and Kapsule reports its own in no field of these objects.
"""

from __future__ import annotations

from kubectl_machinepool.providers.records import INFRA_GROUP, Provider, ZoneSource

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "ScalewayManagedMachinePool",
        "Kapsule pool",
        None,
        zones=ZoneSource(fields=("spec.zone",)),
    ),
)
