"""Whether the user may make a plan's writes, asked before anything is written: the plan shows
each answer, and a refused one stops it (SelfSubjectAccessReview)."""

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


def permissions(kube: Kube, writes: Iterable[Write]) -> dict[Access, bool | None]:
    """Each write's access: allowed or not, None when the server could not be asked."""
    answers: dict[Access, bool | None] = {}
    for write in writes:
        try:
            answers[write.access] = allowed(kube, write.access.attributes)
        except MachinePoolError:
            answers[write.access] = None  # could not ask: the plan says so
    return answers
