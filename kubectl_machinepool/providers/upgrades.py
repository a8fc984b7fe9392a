"""How a provider's infra pool follows a new Kubernetes version: the record types, and how each
field's new value follows from the version (kubernetes-sigs/cluster-api#7248).

Each provider module gives its pool kind an Upgrade: the spec fields upgrade writes beside the
MachinePool's version, each with how its value is derived, or what clearing it lets the provider
derive itself; whether the version the pool runs is another field altogether (ROSA's OpenShift
release); and the managed service's rule on skipping minors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubectl_machinepool.base.fields import text
from kubectl_machinepool.base.kubeversion import version
from kubectl_machinepool.base.records import record


@record
class Derivation:
    """A field's new value for a target version ("v1.34.1"), from its current value and the
    mapping that holds it; None when this value cannot be derived (an image of one's own)."""

    # How, for the plan: "the release without v".
    how: str
    value: Callable[[str, str, dict[str, Any]], str | None]


# CAPZ's reference images (azure/services/virtualmachineimages/images.go, DefaultPublicGalleryName).
_CAPZ_REFERENCE_GALLERY = "ClusterAPI-f72ceb4f"
# CAPG's default family ends in the release's minor (providers/readings.py reads it so).
_CAPG_FAMILY = re.compile(r"k8s-v[1-9][0-9]{0,3}-(?:0|[1-9][0-9]{0,3})\Z")
_KINDEST = "kindest/node:"


def _without_v(target: str, _current: str, _parent: dict[str, Any]) -> str | None:
    """The release without its v: ASO's orchestratorVersion (CAPZ fails the reconcile when it is
    not the MachinePool's, pkg/mutators/azureasomanagedmachinepool.go)."""
    return target.removeprefix("v")


def _with_v(target: str, _current: str, _parent: dict[str, Any]) -> str | None:
    """The release with its v: OKE's spec.version (CAPOCI's webhook requires it)."""
    return "v" + target.removeprefix("v")


def _reference_gallery(target: str, _current: str, parent: dict[str, Any]) -> str | None:
    """A CAPZ reference gallery image's version is the release, patch included, without v
    (virtualmachineimages/images.go); a gallery of one's own has versions of its own."""
    gallery = text(parent.get("gallery")) or ""
    return target.removeprefix("v") if gallery.startswith(_CAPZ_REFERENCE_GALLERY) else None


def _capg_family(target: str, current: str, _parent: dict[str, Any]) -> str | None:
    """A family named after the release's minor (CAPG's default capi-ubuntu-…-k8s-v1-33): the
    same family for the new minor; one named otherwise is one's own."""
    found = version(target)
    if found is None or not _CAPG_FAMILY.search(current):
        return None
    return _CAPG_FAMILY.sub(f"k8s-v{found.major}-{found.minor}", current, count=1)


def _kindest_node(target: str, current: str, _parent: dict[str, Any]) -> str | None:
    """CAPD rolls only when a container's image changes (dockermachinepool_backend.go): a pinned
    kindest/node image takes the new release's tag; another image is one's own."""
    pinned = version(current.removeprefix(_KINDEST)) if current.startswith(_KINDEST) else None
    if pinned is None or not pinned.plain or not pinned.prefixed:
        return None
    return _KINDEST + "v" + target.removeprefix("v")


WITHOUT_V = Derivation("the release without its v", _without_v)
WITH_V = Derivation("the release with its v", _with_v)
REFERENCE_GALLERY = Derivation("CAPZ's reference gallery image of the release", _reference_gallery)
CAPG_FAMILY = Derivation("CAPG's image family of the release's minor", _capg_family)
KINDEST_NODE = Derivation("the kindest/node image of the release", _kindest_node)


@record
class UpgradeField:
    """A spec field of the infra pool that names the image or release new instances get."""

    # Dotted from the object's root; `[]` crosses a list (each item holding the field).
    path: str
    # How its new value follows from the version; None: it never does (an AMI or image id).
    derive: Derivation | None
    # Cleared, the provider derives the value from the version itself: the way out when the
    # value cannot be derived here (None: clearing does not help).
    clear: str | None
    # Where the provider defines and reads it, at the commit of its module.
    source: str


@record
class Upgrade:
    """How an infra pool kind follows a new Kubernetes version."""

    fields: tuple[UpgradeField, ...] = ()
    # The version the pool runs is this field's, not the MachinePool's, and it names no
    # Kubernetes release (ROSA's OpenShift release): it must be given with --set.
    deployed: UpgradeField | None = None
    # Why the pool cannot be upgraded through Cluster API at all (OKE virtual nodes).
    unsupported: str | None = None
    # The managed service upgrades node pools one minor at a time: why.
    one_minor: str | None = None
    # The provider moves a pool one minor per cloud update itself: said in the plan.
    steps_minors: str | None = None


def settable(upgrade: Upgrade) -> tuple[str, ...]:
    """The paths --set may name for a kind: its fields, what clears them, its deployed release."""
    found = [f.path for f in upgrade.fields] + [f.clear for f in upgrade.fields if f.clear]
    if upgrade.deployed is not None:
        found.append(upgrade.deployed.path)
    return tuple(dict.fromkeys(found))
