"""Cluster API's own test provider (CAPD): docker containers, as DockerMachinePool (v1.14.0, gone
on main) and DevMachinePool. Field paths checked against kubernetes-sigs/cluster-api ae7ff047db49
(v1.14.0), test/infrastructure/docker/api/v1beta2.
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.records import (
    ANNOTATED_FIRST,
    INFRA_GROUP,
    REPLACED,
    CloudFields,
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


def _capd_cloud(image_field: str) -> CloudFields:
    """A container per instance, named as its providerID's last part (docker:////NAME)."""
    return CloudFields(
        "Docker",
        image=(("image", f"{{{image_field}}}"),),
        inspect=("docker logs {instance}",),
        source="test/infrastructure/docker/api/v1beta2",
    )


_CAPD_DELETION = InstanceDeletion(
    True, REPLACED, True, ANNOTATED_FIRST, source="dockermachinepool_backend.go"
)
_CAPD_OPERATIONS = Operations(
    rolls="a new version or image: CAPD creates containers of the new one, then deletes the "
    "outdated ones through their Machines (dockermachinepool_backend.go)",
    pause_caveat="nothing: CAPD acts only while it reconciles, so the pause stops it "
    "(dockermachinepool_backend.go)",
)


PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "DevMachinePool",
        "docker containers",
        "DevMachine",
        _CAPD_DELETION,
        zones=_CAPD_ZONES,
        cloud=_capd_cloud("spec.backend.docker.customImage"),
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
        operations=_CAPD_OPERATIONS,
    ),
    Provider(
        INFRA_GROUP,
        "DockerMachinePool",
        "docker containers",
        "DockerMachine",
        _CAPD_DELETION,
        zones=_CAPD_ZONES,
        cloud=_capd_cloud("spec.template.customImage"),
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
        operations=_CAPD_OPERATIONS,
    ),
)
