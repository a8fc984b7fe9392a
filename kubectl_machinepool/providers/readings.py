"""How a version field's value names a Kubernetes release (kubernetes-sigs/cluster-api#7248).

Each provider's VersionField (providers/records.py) carries one of these; only values that say
which release they are for are read, so a custom image's version or an AMI id never counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubectl_machinepool.base.fields import RawObject, mapping, text
from kubectl_machinepool.base.kubeversion import release, version
from kubectl_machinepool.base.records import record

# CAPZ's reference images live in this community gallery; their versions are Kubernetes
# releases (azure/services/virtualmachineimages/images.go).
CAPZ_REFERENCE_GALLERY = "ClusterAPI-f72ceb4f"

# An EKS AMI release version for Amazon Linux: <kubernetes version>-<build date>.
_EKS_RELEASE = re.compile(r"([0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,6})-[0-9]{8}")
# CAPZ's reference images in the deprecated cncf-upstream/capi offer: 1MM.patch.date.
_CAPI_OFFER = re.compile(r"1([0-9]{2})\.([0-9]{1,6})\.[0-9]{8}")
# CAPG's default image family ends in k8s-v<major>-<minor>.
_CAPG_FAMILY = re.compile(r"k8s-v([1-9][0-9]{0,3})-(0|[1-9][0-9]{0,3})\Z")
# Amazon Linux AMI types carry release versions named after the Kubernetes release; Bottlerocket
# and Windows release versions do not. Absent, CAPA defaults the type to AL2_x86_64.
_EKS_VERSIONED_AMI_TYPES = ("AL2_", "AL2023_")


def _kubernetes(value: str, _parent: dict[str, Any], _infra: RawObject) -> str | None:
    """A release, or its minor alone (AKS takes `1.33`), read whole: major.minor[.patch]."""
    found = release(value)
    if found is None or not found.plain:
        return None
    return ".".join(str(n) for n in (found.major, found.minor, found.patch) if n is not None)


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
    found = version(value)
    return value.removeprefix("v") if found is not None and found.plain else None


def _capi_offer(value: str, parent: dict[str, Any], _infra: RawObject) -> str | None:
    if (text(parent.get("publisher")), text(parent.get("offer"))) != ("cncf-upstream", "capi"):
        return None
    match = _CAPI_OFFER.fullmatch(value)
    return f"1.{int(match.group(1))}.{match.group(2)}" if match else None


def _capg_family(value: str, _parent: dict[str, Any], _infra: RawObject) -> str | None:
    match = _CAPG_FAMILY.search(value.rpartition("/")[2])
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


@record
class Reading:
    """How a field's value names a release, and what else that reads (an export keeps it)."""

    read: Callable[[str, dict[str, Any], RawObject], str | None]
    # Keys of the mapping that holds the value.
    beside: tuple[str, ...] = ()
    # Fields of the object, dotted from its root.
    elsewhere: tuple[str, ...] = ()


KUBERNETES = Reading(_kubernetes)
EKS_RELEASE = Reading(_eks_release, elsewhere=("spec.amiType",))
CAPZ_REFERENCE_GALLERY_IMAGE = Reading(_reference_gallery, beside=("gallery",))
CAPZ_CAPI_OFFER = Reading(_capi_offer, beside=("publisher", "offer"))
CAPG_IMAGE_FAMILY = Reading(_capg_family)
