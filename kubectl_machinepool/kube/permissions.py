"""Whether the user may make a plan's writes, and what its run reads by a watch, asked before
anything is written: the plan shows each answer, and a refused one stops it
(SelfSubjectAccessReview)."""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.plans.writes import Access, Write

REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def allowed(kube: Kube, attributes: dict[str, str]) -> bool:
    """Whether the server lets this user do it (SelfSubjectAccessReview resourceAttributes)."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attributes},
    }
    answer = kube.request("POST", REVIEWS, body=review)
    return (answer.get("status") or {}).get("allowed") is True


def may(kube: Kube, access: Access) -> bool | None:
    """Whether the user may: None when the server could not be asked (the plan says so)."""
    try:
        return allowed(kube, access.attributes)
    except MachinePoolError:
        return None


def permissions(kube: Kube, writes: Iterable[Write]) -> dict[Access, bool | None]:
    """Each write's access: allowed or not, None when the server could not be asked."""
    return {write.access: may(kube, write.access) for write in writes}
