"""The Kubernetes version an infra pool's own fields target (kubernetes-sigs/cluster-api#7248).

A MachinePool keeps its Kubernetes version in spec.template.spec.version, while the image (and
for some providers a version of their own) sits in the infra pool: an upgrade is two writes, and
between them, or when only one is made, the provider rolls a combination nobody asked for. Which
fields name a version, and how, is the provider registry's (providers.VersionField); this module
reads them. Only values that say which Kubernetes release they are for count: a custom image's
version, an AMI id or an AKS node image version do not, so they are never compared.
Pure: raw objects in, targets out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.providers.registry import (
    CAPZ_REFERENCE_GALLERY,
    Companion,
    Provider,
    VersionField,
)

# ASCII digits, a few of them: int() of a 5000-digit version from a dump would raise.
_KUBERNETES = re.compile(r"v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?")
# An EKS AMI release version for Amazon Linux: <kubernetes version>-<build date>.
_EKS_RELEASE = re.compile(r"([0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,6})-[0-9]{8}")
# CAPZ's reference images in the deprecated cncf-upstream/capi offer: 1MM.patch.date.
_CAPI_OFFER = re.compile(r"1([0-9]{2})\.([0-9]{1,6})\.[0-9]{8}")
# CAPG's default image family ends in k8s-v<major>-<minor>.
_CAPG_FAMILY = re.compile(r"k8s-v([0-9]{1,4})-([0-9]{1,4})")
# Amazon Linux AMI types carry release versions named after the Kubernetes release; Bottlerocket
# and Windows release versions do not. Absent, CAPA defaults the type to AL2_x86_64.
_EKS_VERSIONED_AMI_TYPES = ("AL2_", "AL2023_")


@dataclass(frozen=True, slots=True)
class Target:
    """A field of the infra pool (or of the object it names) and the version it targets."""

    kind: str
    field: str
    value: str
    version: str  # major.minor[.patch], without a leading v
    # The provider deploys this version, not the MachinePool's.
    deployed: bool


def _kubernetes(value: str, _parent: dict[str, Any], _infra: RawObject) -> str | None:
    match = _KUBERNETES.fullmatch(value)
    return ".".join(g for g in match.groups() if g is not None) if match else None


def _eks_release(value: str, _parent: dict[str, Any], infra: RawObject) -> str | None:
    ami_type = text(mapping(infra.get("spec")).get("amiType")) or "AL2_x86_64"
    if not ami_type.startswith(_EKS_VERSIONED_AMI_TYPES):
        return None
    match = _EKS_RELEASE.fullmatch(value)
    return match.group(1) if match else None


def _reference_gallery(value: str, parent: dict[str, Any], _infra: RawObject) -> str | None:
    """A CAPZ reference gallery image's version is its Kubernetes release; a gallery of one's
    own carries arbitrary versions."""
    gallery = text(parent.get("gallery")) or ""
    if not gallery.startswith(CAPZ_REFERENCE_GALLERY):
        return None
    match = _KUBERNETES.fullmatch(value)
    return value.removeprefix("v") if match and match.group(3) is not None else None


def _capi_offer(value: str, parent: dict[str, Any], _infra: RawObject) -> str | None:
    if (text(parent.get("publisher")), text(parent.get("offer"))) != ("cncf-upstream", "capi"):
        return None
    match = _CAPI_OFFER.fullmatch(value)
    return f"1.{int(match.group(1))}.{match.group(2)}" if match else None


def _capg_family(value: str, _parent: dict[str, Any], _infra: RawObject) -> str | None:
    match = _CAPG_FAMILY.search(value.rpartition("/")[2])
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


@dataclass(frozen=True, slots=True)
class Reading:
    """How a field's value names a release, and what else that reads (an export keeps it)."""

    read: Callable[[str, dict[str, Any], RawObject], str | None]
    # Keys of the mapping that holds the value.
    beside: tuple[str, ...] = ()
    # Fields of the object, dotted from its root.
    elsewhere: tuple[str, ...] = ()


READINGS: dict[str, Reading] = {
    "kubernetes": Reading(_kubernetes),
    "eks-release": Reading(_eks_release, elsewhere=("spec.amiType",)),
    "capz-reference-gallery": Reading(_reference_gallery, beside=("gallery",)),
    "capz-capi-offer": Reading(_capi_offer, beside=("publisher", "offer")),
    "capg-image-family": Reading(_capg_family),
}


def _values(value: Any, keys: list[str]) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(parent, shown path, value) of each string the path reaches; `[]` crosses a list."""
    key, rest = keys[0], keys[1:]
    listed = key.endswith("[]")
    name = key.removesuffix("[]")
    if not isinstance(value, dict):
        return
    found = value.get(name)
    if not rest:
        if not listed and type(found) is str and found:
            yield value, name, found
        return
    for i, item in enumerate(found if listed and isinstance(found, list) else [found]):
        shown = f"{name}[{i}]" if listed else name
        for parent, path, leaf in _values(item, rest):
            yield parent, f"{shown}.{path}", leaf


def field_targets(kind: str, fields: tuple[VersionField, ...], obj: RawObject) -> list[Target]:
    """The targets of these fields of obj, in the registry's order."""
    found = []
    for field in fields:
        reading = READINGS[field.reading].read
        for parent, path, value in _values(obj, field.path.split(".")):
            version = reading(value, parent, obj)
            if version is not None:
                found.append(Target(kind, path, value, version, field.deployed))
    return found


def fields_read(fields: Iterable[VersionField]) -> tuple[str, ...]:
    """Every path field_targets reads for these fields."""
    found: list[str] = []
    for field in fields:
        reading = READINGS[field.reading]
        parent = field.path.rpartition(".")[0]
        found += [field.path, *reading.elsewhere]
        found += [f"{parent}.{key}" if parent else key for key in reading.beside]
    return tuple(found)


# Where companion_name finds an embedded companion's name.
EMBEDDED_NAME_FIELDS = ("spec.resources[].kind", "spec.resources[].metadata.name")
_NOT_IN_A_NAME = re.compile(r"[^a-z0-9-]+")


def companion_name(companion: Companion, infra: RawObject) -> str | None:
    """The name of the infra pool's companion object, as the provider names it."""
    if companion.named == "embedded":
        resources = mapping(infra.get("spec")).get("resources")
        for item in resources if isinstance(resources, list) else ():
            if isinstance(item, dict) and item.get("kind") == companion.kind:
                return text(dig(item, "metadata", "name"))
        return None
    # CAPZ's GetNormalizedKubernetesName (azure/defaults.go).
    name = text(dig(infra, "metadata", "name")) or ""
    return _NOT_IN_A_NAME.sub("-", name.lower()).strip("-") or None


def infra_targets(
    provider: Provider | None, infra: RawObject | None, companion: RawObject | None = None
) -> tuple[Target, ...]:
    """What the infra pool's version-bearing fields target, and its companion's, where they
    say."""
    if provider is None or infra is None:
        return ()
    found = field_targets(provider.kind, provider.version_fields, infra)
    if provider.companion is not None and companion is not None:
        found += field_targets(
            provider.companion.kind, provider.companion.version_fields, companion
        )
    return tuple(found)
