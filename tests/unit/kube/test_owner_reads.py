"""The owner reads over a scripted Kube (our own boundary): which objects a pool's signals name
and where they are read, a hostile name that never reaches a request path, and each failure
kept with why, for the plan's "unknown owner state"."""

from __future__ import annotations

from typing import Any

from support.ownerobjects import owner_object
from support.ownership import owned_pool

from kubectl_machinepool.base.errors import ClusterAccessError, NotFoundError
from kubectl_machinepool.kube.owners import MAX_OWNERS, owner_refs, read_owner
from kubectl_machinepool.model.ownership import OwnerRef

Obj = dict[str, Any]
APP = OwnerRef("argoproj.io", "v1alpha1", "applications", "platform", "prod-pools", "Application")


class ScriptedKube:
    timeout = None

    def __init__(self, answer: Obj | Exception) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str, float | None]] = []

    def request(self, method: str, path: str, *_: Any, timeout: float | None = None) -> Obj:
        self.asked.append((method, path, timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_owners_a_pool_names_each_once_an_application_without_namespace_in_argocd() -> None:
    csa = owned_pool("argo-csa")  # label tracking: Application prod-pools, no namespace
    refs = owner_refs([owned_pool("argo-ssa"), owned_pool("argo-ssa"), csa, owned_pool("flux-ks")])
    assert [(r.kind, r.namespace, r.name) for r in refs] == [
        ("Application", "platform", "prod-pools"),
        ("Application", "argocd", "prod-pools"),
        ("Kustomization", "flux-system", "prod-pools"),
    ]
    assert owner_refs([owned_pool("topology-pool"), owned_pool("helm-chart")]) == []
    assert MAX_OWNERS == 16


def test_one_bounded_get_of_the_object() -> None:
    app = owner_object("Application")
    kube = ScriptedKube(app)
    read = read_owner(kube, APP)  # type: ignore[arg-type]
    assert read.obj is app
    path = "/apis/argoproj.io/v1alpha1/namespaces/platform/applications/prod-pools"
    assert kube.asked == [("GET", path, 30.0)]  # no --request-timeout: OWNER_TIMEOUT


def test_a_name_that_is_no_object_name_never_reaches_a_request() -> None:
    kube = ScriptedKube(owner_object("Application"))
    hostile = OwnerRef("argoproj.io", "v1alpha1", "applications", "platform", "../../x", "App")
    read = read_owner(kube, hostile)  # type: ignore[arg-type]
    assert (read.obj, read.why) == (None, "its name or namespace is no Kubernetes object name")
    assert kube.asked == []


def test_each_failure_is_kept_with_why() -> None:
    cases = [
        (NotFoundError('applications.argoproj.io "prod-pools" not found'), "no such Application"),
        (
            NotFoundError("the server could not find the requested resource"),
            "this cluster serves no Application kind (applications.argoproj.io)",
        ),
        (ClusterAccessError("applications is forbidden"), "applications is forbidden"),
        (owner_object("Kustomization"), "the answer is no Application prod-pools"),
    ]
    for answer, why in cases:
        read = read_owner(ScriptedKube(answer), APP)  # type: ignore[arg-type]
        assert (read.obj, read.why) == (None, why)
        assert read.unread == ("argoproj.io", "Application", "platform", "prod-pools", why)
