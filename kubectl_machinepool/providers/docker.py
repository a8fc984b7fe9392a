"""Cluster API's own test provider (CAPD): docker containers, as DockerMachinePool (v1.14.0, gone
on main) and DevMachinePool. Field paths checked against kubernetes-sigs/cluster-api ae7ff047db49
(v1.14.0), test/infrastructure/docker/api/v1beta2.
"""

from __future__ import annotations

from kubectl_machinepool.providers.records import (
    ANNOTATED_FIRST,
    INFRA_GROUP,
    REPLACED,
    InstanceDeletion,
    Provider,
    ZoneSource,
)
from kubectl_machinepool.providers.upgrades import KINDEST_NODE, Upgrade, UpgradeField

_CAPD_ZONES = ZoneSource(
    failure_domains=True,
    replacement="CAPD gives each new container a random failure domain",
    rebalance="nothing evens the zones out",
    source="CAPI dockermachinepool_backend.go, the docker backend of both kinds (v1.14.0)",
)


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "DevMachinePool",
        "docker containers",
        "DevMachine",
        InstanceDeletion(True, REPLACED, True, ANNOTATED_FIRST),
        zones=_CAPD_ZONES,
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.backend.docker.customImage",
                    KINDEST_NODE,
                    "spec.backend.docker.customImage",
                    "test/infrastructure/kind/mapper.go GetMapping",
                ),
            ),
        ),
    ),
    Provider(
        INFRA_GROUP,
        "DockerMachinePool",
        "docker containers",
        "DockerMachine",
        InstanceDeletion(True, REPLACED, True, ANNOTATED_FIRST),
        zones=_CAPD_ZONES,
        upgrade=Upgrade(
            fields=(
                UpgradeField(
                    "spec.template.customImage",
                    KINDEST_NODE,
                    "spec.template.customImage",
                    "test/infrastructure/kind/mapper.go GetMapping",
                ),
            ),
        ),
    ),
)
