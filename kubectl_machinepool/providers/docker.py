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
from kubectl_machinepool.providers.rolls import (
    BOOTSTRAP_REF,
    BOOTSTRAP_SECRET,
    VERSION,
    Effect,
    Path,
    Rolls,
    Rule,
    When,
    bootstrap_rule,
    path,
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


# Where each kind's controller compares a container with the spec (v1.14.0).
_DEV = "backends/docker/dockermachinepool_backend.go isMachineMatchingInfrastructureSpec"
_DOCKER = "dockermachinepool_controller_phases.go isMachineMatchingInfrastructureSpec"
_NEW_DATA = (
    "new containers start with the new bootstrap data; CAPD replaces a container only for "
    "another image"
)


def _capd_rolls(template: Path, source: str) -> Rolls:
    """CAPD compares each container's image with the kind image of the MachinePool's version,
    or with the custom image when one is set (kind.GetMapping)."""
    image = (*template, "customImage")
    return Rolls(
        infra=(
            Rule(
                image,
                Effect.ROLLS_ALL,
                "a container on another image is outdated: CAPD replaces each",
                source,
            ),
            *(
                Rule(
                    (*template, name),
                    Effect.NEW_ONLY,
                    "only new containers get it: CAPD replaces a container only for another image",
                    source,
                )
                for name in ("extraMounts", "preLoadImages")
            ),
        ),
        pool=(
            Rule(
                VERSION,
                Effect.ROLLS_ALL,
                "a container not on the kind image of the new version is outdated: CAPD "
                "replaces each",
                f"{source}; test/infrastructure/kind/mapper.go GetMapping",
                when=(
                    When(
                        image,
                        Effect.ROLLS_NONE,
                        "the custom image is pinned: CAPD compares containers with it, and the "
                        "new version reaches none until it changes too (cluster-api#7248)",
                        "test/infrastructure/kind/mapper.go GetMapping",
                    ),
                ),
            ),
            *(
                Rule(field, Effect.NEW_ONLY, _NEW_DATA, source)
                for field in (BOOTSTRAP_REF, BOOTSTRAP_SECRET)
            ),
        ),
        bootstrap=bootstrap_rule(_NEW_DATA, source),
        strategy_default="CAPD creates containers of the new image up to spec.replicas beside "
        "the old ones, then deletes the outdated ones through their Machines "
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
        rolls=_capd_rolls(path("spec.backend.docker"), _DEV),
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
        rolls=_capd_rolls(path("spec.template"), _DOCKER),
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
