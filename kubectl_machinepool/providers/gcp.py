"""Cluster API Provider GCP (CAPG): managed instance groups and GKE node pools. Field paths checked
against the json tags of kubernetes-sigs/cluster-api-provider-gcp 5e0bb3b249ca (v1.12.0),
exp/api/v1beta1. A GKE pool has no version field: CAPG sends the MachinePool's version, and GKE
reports its own in no field of these objects.
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.readings import CAPG_IMAGE_FAMILY
from kubectl_machinepool.providers.records import (
    INFRA_GROUP,
    CloudFields,
    Provider,
    RollingSignal,
    VersionField,
    ZoneSource,
)
from kubectl_machinepool.providers.rolls import VERSION, Effect, Rolls, Rule, When, path
from kubectl_machinepool.providers.upgrades import CAPG_FAMILY, Upgrade, UpgradeField

_GCE_DESCRIBE = ("gcloud compute instances describe {instance} --zone {zone} --project {project}",)

_TEMPLATE = "cloud/services/compute/instancegroups/instancegroups.go"
_NEW_TEMPLATE = (
    "CAPG sets a new instance template on the managed instance group, which only new instances "
    "get; the group's own rolling update replaces the others (GCE docs: rolling-action replace)"
)
_MIG_ROLLS = Rolls(
    infra=tuple(
        Rule(path(f"spec.{name}"), Effect.NEW_ONLY, _NEW_TEMPLATE, _TEMPLATE)
        for name in ("image", "imageFamily", "instanceType")
    ),
    pool=(
        Rule(
            VERSION,
            Effect.NEW_ONLY,
            "a new minor is CAPG's default image family of it: " + _NEW_TEMPLATE,
            f"cloud/scope/machinepool.go InstanceImageSpec; {_TEMPLATE}",
            when=tuple(
                When(
                    path(f"spec.{name}"),
                    Effect.ROLLS_NONE,
                    f"spec.{name} is pinned: the new version reaches no instance "
                    "(cluster-api#7248)",
                    "cloud/scope/machinepool.go InstanceImageSpec",
                )
                for name in ("image", "imageFamily")
            ),
        ),
    ),
)
_GKE_ROLLS = Rolls(
    pool=(
        Rule(
            VERSION,
            Effect.MANAGED_UPGRADE,
            "CAPG asks GKE to upgrade the node pool (surge upgrade)",
            "cloud/services/container/nodepools/reconcile.go",
        ),
    ),
    strategy_default="GKE's surge upgrade (GKE docs: node pool upgrades; docs)",
)


PROVIDERS: tuple[Provider, ...] = (
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
        cloud=CloudFields(
            "GCP",
            # cloud/scope/machinepool.go InstanceGroupManagerResourceName.
            name=("{cluster}-{metadata.name}",),
            instance_type=("{spec.instanceType}",),
            image=(("image", "{spec.image}"), ("image", "family {spec.imageFamily}")),
            inspect=_GCE_DESCRIBE,
            # The group recreates the instance from its template.
            replace=(
                "gcloud compute instance-groups managed recreate-instances {pool} "
                "--instances {instance} --zone {zone} --project {project}",
            ),
            source="exp/api/v1beta1/gcpmachinepool_types.go; cloud/scope/machinepool.go",
        ),
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.imageFamily",
                    CAPG_FAMILY,
                    "spec.imageFamily",
                    "cloud/scope/machinepool.go InstanceImageSpec",
                ),
                UpgradeField(
                    "spec.image", None, "spec.image", "cloud/scope/machinepool.go InstanceImageSpec"
                ),
            ),
        ),
        rolls=_MIG_ROLLS,
        operations=Operations(
            rolls="nothing CAPG does: it sets the new instance template on the managed instance "
            "group, which only new instances get "
            "(cloud/services/compute/instancegroups/instancegroups.go); the group's own rolling "
            "update replaces the others (GCE docs: rolling-action replace)",
            pause_caveat="a managed instance group update or autohealing already in progress "
            "goes on in GCE (GCE docs: managed instance groups; docs)",
        ),
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
        # GKE's own instance groups hold the nodes: no replace by hand here.
        cloud=CloudFields(
            "GCP",
            # cloud/scope/managedmachinepool.go NodePoolName.
            name=("{spec.nodePoolName}", "{metadata.name}"),
            # spec.instanceType wins over spec.machineType (ConvertToSdkNodePool).
            instance_type=("{spec.instanceType}", "{spec.machineType}"),
            image=(("image type", "{spec.imageType}"),),
            inspect=_GCE_DESCRIBE,
            source="exp/api/v1beta1/types_class.go GCPManagedMachinePoolClassSpec; "
            "cloud/scope/managedmachinepool.go",
        ),
        rolls=_GKE_ROLLS,
        operations=Operations(
            rolls="a new version makes CAPG ask GKE to upgrade the node pool (surge upgrade); "
            "spec.management.autoUpgrade lets GKE upgrade it on its own "
            "(cloud/services/container/nodepools/reconcile.go)",
            pause_caveat="a GKE node pool upgrade, auto-upgrade or auto-repair already in "
            "progress goes on (GKE docs: node pool upgrades; docs)",
        ),
    ),
)
