"""Who applies a pool from outside, one signal at a time, over pools shaped as the real writers
leave them (tests/support/ownership_pools.yaml), and over hostile objects."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.ownership import owned_pool, owned_pool_names

from kubectl_machinepool.model.ownership import (
    ARGO_CD,
    AUTOSCALER,
    FLUX_HELMRELEASE,
    FLUX_KUSTOMIZATION,
    HELM,
    KUBECTL,
    LAST_APPLIED,
    OWN_MANAGER,
    TOPOLOGY,
    OwnerRef,
    appliers,
    field_appliers,
    pool_owner_line,
)

REPLICAS = ("spec", "replicas")
VERSION = ("spec", "template", "spec", "version")


def kinds(found: tuple[Any, ...]) -> list[str]:
    return [a.kind for a in found]


def line(raw: dict[str, Any]) -> str:
    return pool_owner_line(appliers(raw), raw["metadata"].get("annotations", {}))


def test_argo_cd_server_side_sync_is_named_by_its_tracking_id() -> None:
    (argo,) = appliers(owned_pool("argo-ssa"))
    assert argo.kind == ARGO_CD
    assert argo.gitops
    assert argo.name == "platform/prod-pools"
    assert argo.ref == OwnerRef(
        "argoproj.io", "v1alpha1", "applications", "platform", "prod-pools", "Application"
    )
    assert "argocd.argoproj.io/tracking-id=" in argo.evidence
    assert "argocd-controller (Apply)" in argo.evidence
    assert not argo.last_applied


def test_a_tracking_id_without_a_namespace_is_an_application_in_argo_cds_own() -> None:
    raw = owned_pool("argo-ssa")
    raw["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = (
        "prod-pools:cluster.x-k8s.io/MachinePool:capi-prod/argo-ssa"
    )
    (argo,) = appliers(raw)
    assert argo.name == "prod-pools"
    assert argo.ref is not None
    assert argo.ref.namespace == ""


def test_argo_cd_owns_the_fields_its_server_side_apply_owns() -> None:
    raw = owned_pool("argo-ssa")
    assert kinds(field_appliers(raw, REPLICAS)) == [ARGO_CD]
    assert kinds(field_appliers(raw, VERSION)) == [ARGO_CD]
    assert field_appliers(raw, ("spec", "template", "spec", "failureDomains")) == ()


def test_argo_cd_client_side_sync_applies_what_its_last_applied_copy_holds() -> None:
    """kubectl edit took spec.replicas in managedFields, but Argo CD's copy still sets it: the
    next sync puts it back, so Argo CD still applies it."""
    raw = owned_pool("argo-csa")
    (argo,) = appliers(raw)
    assert argo.kind == ARGO_CD
    assert argo.name == "prod-pools"
    assert argo.last_applied
    assert "label app.kubernetes.io/instance=" in argo.evidence
    assert LAST_APPLIED in argo.evidence
    assert kinds(field_appliers(raw, REPLICAS)) == [ARGO_CD]
    assert field_appliers(raw, ("spec", "template", "spec", "minReadySeconds")) == ()


def test_the_instance_label_alone_in_a_dump_is_argo_cds_label_tracking() -> None:
    raw = owned_pool("argo-csa")
    del raw["metadata"]["managedFields"], raw["metadata"]["annotations"]
    (argo,) = appliers(raw)
    assert argo.kind == ARGO_CD
    assert argo.name == "prod-pools"


def test_the_instance_label_is_not_argo_cds_when_no_argo_cd_manager_wrote_the_pool() -> None:
    raw = owned_pool("argo-csa")
    del raw["metadata"]["annotations"]
    raw["metadata"]["managedFields"] = raw["metadata"]["managedFields"][1:]
    assert appliers(raw) == ()


def test_the_instance_label_of_a_helm_chart_is_helms() -> None:
    raw = owned_pool("helm-chart")
    (helm,) = appliers(raw)
    assert helm.kind == HELM
    assert helm.name == "capi-prod/workers"
    assert not helm.gitops
    assert helm.ref is None
    assert kinds(field_appliers(raw, VERSION)) == [HELM]


def test_argo_cd_rendering_a_chart_is_argo_cd_not_a_helm_release() -> None:
    """Argo CD runs `helm template`: the chart's managed-by: Helm label, no release annotations."""
    raw = owned_pool("helm-chart")
    del raw["metadata"]["annotations"]
    raw["metadata"]["annotations"] = {
        "argocd.argoproj.io/tracking-id": "workers:cluster.x-k8s.io/MachinePool:capi-prod/helm-chart"
    }
    raw["metadata"]["managedFields"][0]["manager"] = "argocd-controller"
    assert kinds(appliers(raw)) == [ARGO_CD]


def test_flux_kustomization_and_the_autoscaler_share_the_pool_field_by_field() -> None:
    raw = owned_pool("flux-ks")
    flux, autoscaler = appliers(raw)
    assert flux.kind == FLUX_KUSTOMIZATION
    assert flux.gitops
    assert flux.name == "flux-system/prod-pools"
    assert flux.ref == OwnerRef(
        "kustomize.toolkit.fluxcd.io",
        "v1",
        "kustomizations",
        "flux-system",
        "prod-pools",
        "Kustomization",
    )
    assert autoscaler.kind == AUTOSCALER
    assert not autoscaler.gitops
    assert kinds(field_appliers(raw, REPLICAS)) == [AUTOSCALER]
    assert kinds(field_appliers(raw, VERSION)) == [FLUX_KUSTOMIZATION]
    assert line(raw) == "Flux Kustomization flux-system/prod-pools, cluster-autoscaler 2..8"


def test_flux_labels_with_no_managed_fields_known_count_for_every_field() -> None:
    raw = owned_pool("flux-ks")
    del raw["metadata"]["managedFields"], raw["metadata"]["annotations"]
    assert kinds(field_appliers(raw, REPLICAS)) == [FLUX_KUSTOMIZATION]
    assert kinds(field_appliers(raw, ("spec", "anything"))) == [FLUX_KUSTOMIZATION]


def test_a_flux_helmrelease_is_one_applier_though_helm_signals_are_there_too() -> None:
    raw = owned_pool("flux-hr")
    (release,) = appliers(raw)
    assert release.kind == FLUX_HELMRELEASE
    assert release.gitops
    assert release.ref == OwnerRef(
        "helm.toolkit.fluxcd.io", "v2", "helmreleases", "flux-system", "workers", "HelmRelease"
    )
    assert kinds(field_appliers(raw, REPLICAS)) == [FLUX_HELMRELEASE]


def test_a_topology_pool_names_its_cluster_and_leaves_replicas_to_the_autoscaler() -> None:
    raw = owned_pool("topology-pool")
    topology, _autoscaler = appliers(raw)
    assert topology.kind == TOPOLOGY
    assert topology.gitops
    assert topology.ref == OwnerRef(
        "cluster.x-k8s.io", "v1beta2", "clusters", "capi-prod", "prod", "Cluster"
    )
    assert 'pool-name="workers"' in topology.evidence
    assert kinds(field_appliers(raw, VERSION)) == [TOPOLOGY]
    assert kinds(field_appliers(raw, REPLICAS)) == [AUTOSCALER]


def test_kubectl_client_side_apply_applies_what_its_copy_holds() -> None:
    raw = owned_pool("kubectl-csa")
    (kubectl,) = appliers(raw)
    assert kubectl.kind == KUBECTL
    assert kubectl.last_applied
    assert not kubectl.gitops
    assert "kubectl-client-side-apply (Update)" in kubectl.evidence
    # kubectl-patch took the version since, but the copy sets it: the next apply reverts it.
    assert kinds(field_appliers(raw, VERSION)) == [KUBECTL]


def test_kubectl_server_side_apply_and_other_appliers_by_manager_name() -> None:
    raw = owned_pool("kubectl-ssa")
    found = appliers(raw)
    # before-first-apply holds what was there before the first apply: no applier of its own.
    assert kinds(found) == [KUBECTL, "field manager platform-ci"]
    assert kinds(field_appliers(raw, REPLICAS)) == [KUBECTL]
    assert kinds(field_appliers(raw, ("metadata", "labels", "platform.example.com/tier"))) == [
        "field manager platform-ci"
    ]


def test_this_tools_own_writes_are_no_applier() -> None:
    raw = owned_pool("kubectl-ssa")
    for entry in raw["metadata"]["managedFields"]:
        entry["manager"] = OWN_MANAGER
    assert appliers(raw) == ()


def test_unusable_autoscaler_bounds_are_said_and_size_nothing() -> None:
    raw = owned_pool("topology-pool")
    raw["metadata"]["annotations"][
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
    ] = "x"
    assert "cluster-autoscaler unusable bounds" in line(raw)
    assert field_appliers(raw, REPLICAS) == ()


def test_a_pool_with_no_signal_has_no_applier() -> None:
    raw = {"metadata": {"name": "p", "namespace": "n"}, "spec": {"replicas": 1}}
    assert appliers(raw) == ()
    assert line(raw) == ""


@pytest.mark.parametrize("name", owned_pool_names())
def test_every_fixture_pool_survives_json_and_has_an_applier(name: str) -> None:
    raw = json.loads(json.dumps(owned_pool(name)))
    assert appliers(raw)


HOSTILE: list[Any] = [
    None,
    "managedFields",
    [None, 3, "x", {"manager": ["a"]}, {"manager": "argocd-controller", "fieldsV1": "f:spec"}],
    [{"manager": "argocd-controller", "operation": 7, "fieldsV1": {"f:spec": ["f:replicas"]}}],
]


@pytest.mark.parametrize("managed", HOSTILE)
def test_hostile_managed_fields_read_as_far_as_they_make_sense(managed: Any) -> None:
    raw = {"metadata": {"name": "p", "namespace": "n", "managedFields": managed}}
    found = appliers(raw)
    assert kinds(found) in ([], [ARGO_CD])
    field_appliers(raw, REPLICAS)


def test_hostile_labels_and_annotations_are_bounded_and_never_crash() -> None:
    huge = "a" * 100_000
    raw = {
        "metadata": {
            "name": "p",
            "namespace": ["n"],
            "labels": {
                "kustomize.toolkit.fluxcd.io/name": huge,
                "kustomize.toolkit.fluxcd.io/namespace": "\x1b]0;x\x07",
                "topology.cluster.x-k8s.io/owned": ["x"],
            },
            "annotations": {
                "argocd.argoproj.io/tracking-id": ":::" + huge,
                LAST_APPLIED: "[" * 200_000,
            },
        }
    }
    found = appliers(raw)
    assert kinds(found) == [ARGO_CD, FLUX_KUSTOMIZATION, KUBECTL]
    assert all(len(a.evidence) < 1000 and len(a.name) < 600 for a in found)
    assert field_appliers(raw, REPLICAS)


@pytest.mark.parametrize("copy", ["{", "[]", '"x"', "{" * 5000 + "}" * 5000, "1e999999"])
def test_a_last_applied_copy_that_is_no_object_counts_as_unknown(copy: str) -> None:
    raw = owned_pool("kubectl-csa")
    raw["metadata"]["annotations"][LAST_APPLIED] = copy
    # Unreadable, the copy says nothing: kubectl's managedFields entry still does.
    assert kinds(field_appliers(raw, REPLICAS)) == [KUBECTL]
    assert field_appliers(raw, VERSION) == ()


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [
        ("annotations", "kustomize.toolkit.fluxcd.io/reconcile", "disabled"),
        ("labels", "kustomize.toolkit.fluxcd.io/reconcile", "disabled"),
        ("annotations", "kustomize.toolkit.fluxcd.io/ssa", "IfNotPresent"),
        ("annotations", "kustomize.toolkit.fluxcd.io/ssa", "Ignore"),
        # Compared as fluxcd/pkg's ssa.AnyInMetadata does, with strings.EqualFold.
        ("annotations", "kustomize.toolkit.fluxcd.io/reconcile", "Disabled"),
        ("labels", "kustomize.toolkit.fluxcd.io/ssa", "ifnotpresent"),
    ],
)
def test_a_pool_that_opts_out_of_kustomize_controllers_applies_is_not_reverted(
    where: str, key: str, value: str
) -> None:
    raw = owned_pool("flux-ks")
    raw["metadata"][where][key] = value
    flux = appliers(raw)[0]
    assert flux.kind == FLUX_KUSTOMIZATION
    assert not flux.gitops
    assert f'{key}="{value}": no longer applied' in flux.evidence


def test_the_merge_policy_still_applies_what_the_manifest_sets() -> None:
    raw = owned_pool("flux-ks")
    raw["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/ssa"] = "Merge"
    assert appliers(raw)[0].gitops
