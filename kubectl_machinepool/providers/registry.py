"""One record per infra MachinePool kind, one module per provider: every provider fact this tool
acts on, and the lookups by kind.

Behaviour (what deleting a Machine does, conditions, who owns replicas) is that of each
provider's infra-machine and infra-pool controllers; docs/delete-machine.md's table says it for
users and a test keeps the two equal. Every field path was checked against the json tags of the
provider's Go API types at the upstream commit its module names, and is the same at the tag.

Version fields (#7248) are those whose value names a Kubernetes release. A path is dotted from
the object's root; `[]` marks a list whose every item holds the field. A zone field holds a zone,
an AD number or a list of them. None (or an empty tuple) means the infra pool has no such field,
or it was not verified.
"""

from __future__ import annotations

from typing import Protocol

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.providers import aws, azure, docker, gcp, kwok, oci, scaleway
from kubectl_machinepool.providers.records import INFRA_GROUP, InstanceDeletion, Provider

__all__ = ["INFRA_GROUP", "PROVIDERS"]

PROVIDERS: tuple[Provider, ...] = (
    *azure.PROVIDERS[:1],
    *aws.PROVIDERS,
    *azure.PROVIDERS[1:],
    *gcp.PROVIDERS,
    *oci.PROVIDERS,
    *scaleway.PROVIDERS,
    *docker.PROVIDERS,
    *kwok.PROVIDERS,
)

_BY_KIND = {(p.group, p.kind): p for p in PROVIDERS}


def infra_pool(group: str | None, kind: str | None) -> Provider | None:
    """The record of an infra pool kind; None for a kind (or group) this tool does not know."""
    return _BY_KIND.get((group or "", kind or ""))


class Typed(Protocol):
    """An object as read (the model's ObjectState): what names its kind."""

    @property
    def kind(self) -> str: ...
    @property
    def api_version(self) -> str: ...


def infra_pool_of(infra: Typed | None) -> Provider | None:
    """The record of an infra pool as read, by the group of its apiVersion and its kind."""
    return infra_pool(group_of(infra.api_version), infra.kind) if infra else None


def instance_deletion(
    group: str | None, kind: str | None, machine_kind: str | None
) -> InstanceDeletion | None:
    """What deleting one Machine does, for a pool whose infra pool names exactly that kind."""
    provider = infra_pool(group, kind)
    if provider is None or provider.machine_kind != machine_kind:
        return None
    return provider.deletion


def annotation_deletes(kind: str) -> bool:
    """Whether the delete-machine annotation alone makes this kind's provider delete the instance.

    By kind alone, whatever the group: the answer decides that a mark is never taken back, and
    keeping one that was harmless is the safe mistake.
    """
    return any(p.kind == kind and p.deletion and p.deletion.annotation_deletes for p in PROVIDERS)
