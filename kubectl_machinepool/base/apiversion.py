"""Pure rules for naming and choosing API versions, as Kubernetes and Cluster API apply them."""

from __future__ import annotations

import re
from typing import Any

from kubectl_machinepool.base.fields import dig, text

# ASCII digits, a few: int() of thousands of them raises, and Kubernetes versions are small.
_KUBE_VERSION = re.compile(r"^v([0-9]{1,9})(?:(alpha|beta)([0-9]{1,9}))?\Z")
_STABILITY = {None: 2, "beta": 1, "alpha": 0}

CAPI_GROUP = "cluster.x-k8s.io"
# Label on provider CRDs naming the API versions that implement each Cluster API contract.
CONTRACT_LABELS = ("cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1")


def version_priority(version: str) -> tuple[int, int, int]:
    """Sort key: GA > beta > alpha, then by major, then by the alpha/beta number (kube order)."""
    match = _KUBE_VERSION.match(version)
    if not match:
        return (-1, 0, 0)
    major, stability, minor = match.groups()
    return (_STABILITY[stability], int(major), int(minor or 0))


def newest(versions: list[str]) -> str | None:
    return max(versions, key=version_priority) if versions else None


def contract_versions(labels: dict[str, str]) -> list[str]:
    """API versions a provider CRD declares for the newest contract it labels.

    Cluster API reads `cluster.x-k8s.io/<contract>: v1beta1_v1beta2`, preferring the v1beta2
    contract and falling back to v1beta1 (providers such as CAPA and CAPOCI only set the latter).
    """
    for label in CONTRACT_LABELS:
        value = labels.get(label)
        if value:
            return [v for v in value.split("_") if v]
    return []


def crd_plural(kind: str) -> str:
    """Cluster API's CRD plural of a kind, e.g. KubeadmConfig → kubeadmconfigs."""
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if len(word) > 1 and word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ("" for the core group's "v1")."""
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def version_of(api_version: str) -> str:
    """The version of an apiVersion: "v1beta2" of "cluster.x-k8s.io/v1beta2"."""
    return api_version.rpartition("/")[2]


def ref_group(ref: Any) -> str:
    """The API group an object reference names: v1beta2 references carry apiGroup, v1beta1 ones
    an apiVersion."""
    return text(dig(ref, "apiGroup")) or group_of(text(dig(ref, "apiVersion")) or "")
