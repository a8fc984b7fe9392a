"""Cluster API Provider Scaleway (CAPS): Kapsule pools. Field paths checked against the json tags
of scaleway/cluster-api-provider-scaleway 453691a92b81 (v0.2.2), api/v1alpha2. No version field:
CAPS sends the MachinePool's version, and Kapsule reports its own in no field of these objects.
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.records import INFRA_GROUP, CloudFields, Provider, ZoneSource
from kubectl_machinepool.providers.rolls import VERSION, Effect, Rolls, Rule, path

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "ScalewayManagedMachinePool",
        "Kapsule pool",
        None,
        zones=ZoneSource(fields=("spec.zone",)),
        # The Kapsule pool's name is CAPS's own (its scope's ResourceName), not verified here;
        # a node's providerID names its Instance server.
        cloud=CloudFields(
            "Scaleway",
            instance_type=("{spec.nodeType}",),
            inspect=("scw instance server get {instance} zone={zone}",),
            source="api/v1alpha2/scalewaymanagedmachinepool_types.go",
        ),
        rolls=Rolls(
            pool=(
                Rule(
                    VERSION,
                    Effect.MANAGED_UPGRADE,
                    "CAPS asks Kapsule to upgrade the pool, replacing nodes as spec.upgradePolicy "
                    "allows",
                    "api/v1alpha2/scalewaymanagedmachinepool_types.go",
                ),
            ),
            strategy=(path("spec.upgradePolicy"),),
            strategy_default="Kapsule's default upgrade policy (not verified)",
        ),
        operations=Operations(
            rolls="a new version makes CAPS ask Kapsule to upgrade the pool, replacing nodes as "
            "spec.upgradePolicy (maxUnavailable, maxSurge) allows "
            "(api/v1alpha2/scalewaymanagedmachinepool_types.go)",
            pause_caveat="a Kapsule pool upgrade already started goes on, and spec.autohealing "
            "still replaces nodes (api/v1alpha2/scalewaymanagedmachinepool_types.go)",
        ),
    ),
)
