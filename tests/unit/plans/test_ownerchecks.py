"""The owner check of every write plan, over pools as their appliers leave them
(support/ownership_pools.yaml) and owner objects as their controllers' examples write them
(support/owner_objects.yaml): refused where a GitOps owner reverts the write or its state is
unknown, a warning where it will not (saying when it would) and with --ignore-owner."""

from __future__ import annotations

from typing import Any

import pytest
from support.ownerobjects import owner_object
from support.ownership import owned_pool

from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.ownerchecks import dotted, owner_checks, written_fields
from kubectl_machinepool.plans.scale import scale_write
from kubectl_machinepool.plans.writes import Write, object_ref

Obj = dict[str, Any]
VERSION = {"spec": {"template": {"spec": {"version": "v1.34.1"}}}}
ARGO_SUSPEND = "argocd app set platform/prod-pools --sync-policy manual"


def pool(name: str) -> Obj:
    raw = owned_pool(name)
    raw["metadata"].update(uid=f"uid-{name}", resourceVersion="7")
    return raw


def upgrade(raw: Obj) -> Write:
    ref = object_ref(raw, "machinepools")
    return Write("patch", ref, f"set the version of {ref.display}", VERSION)


def checks(
    raw: Obj, *owners: Obj, scale: bool = False, ignore: bool = False, **snap: Any
) -> list[Check]:
    write = scale_write(raw, 3, 5) if scale else upgrade(raw)
    snapshot = Snapshot.of([raw, *owners], **snap)
    return owner_checks((write,), snapshot, ignore_owner=ignore)


def one(found: list[Check]) -> Check:
    assert len(found) == 1, found
    return found[0]


def test_argo_cd_self_heal_refuses_naming_field_application_evidence_and_the_one_command() -> None:
    check = one(checks(pool("argo-ssa"), owner_object("Application")))
    assert check.level is Level.REFUSED
    assert check.message.startswith(
        "spec.template.spec.version of MachinePool capi-prod/argo-ssa is applied by Argo CD "
        "Application platform/prod-pools (annotation argocd.argoproj.io/tracking-id="
    )
    assert "managedFields manager argocd-controller (Apply)" in check.message
    assert "a self-heal sync reverts this write" in check.message
    assert f"change it in git, or suspend the owner first: {ARGO_SUSPEND}" in check.message
    assert check.message.endswith("(--ignore-owner writes anyway)")


def test_ignore_owner_turns_the_refusal_into_a_warning_the_plan_keeps() -> None:
    check = one(checks(pool("argo-ssa"), owner_object("Application"), ignore=True))
    assert check.level is Level.WARNING
    assert "a self-heal sync reverts this write" in check.message
    assert "(--ignore-owner: writing anyway; change it in git" in check.message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda a: a["spec"]["syncPolicy"]["automated"].pop("selfHeal"), "without self-heal"),
        (lambda a: a["spec"]["syncPolicy"]["automated"].update(selfHeal=False), "without self"),
        (lambda a: a["spec"]["syncPolicy"].pop("automated"), "auto-sync is off (no spec.sync"),
        (
            lambda a: a["spec"]["syncPolicy"]["automated"].update(enabled=False),
            "auto-sync is off (automated.enabled false)",
        ),
        (
            lambda a: a["metadata"].update(
                annotations={"argocd.argoproj.io/skip-reconcile": "true"}
            ),
            "Argo CD skips this Application",
        ),
    ],
    ids=["no-self-heal", "self-heal-false", "manual", "disabled", "skip-reconcile"],
)
def test_an_application_that_will_not_revert_is_a_warning_saying_when_it_would(
    change: Any, says: str
) -> None:
    app = owner_object("Application")
    change(app)
    check = one(checks(pool("argo-ssa"), app))
    assert check.level is Level.WARNING
    assert says in check.message
    assert check.message.endswith("; change it in git too")


def test_an_applicationset_that_writes_the_application_back_is_said() -> None:
    app = owner_object("Application")
    app["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "ApplicationSet",
            "name": "pools",
            "uid": "u",
        }
    ]
    check = one(checks(pool("argo-ssa"), app))
    assert "ApplicationSet pools generates this Application" in check.message


def test_an_application_tracked_without_a_namespace_is_read_in_argo_cds_own() -> None:
    raw = pool("argo-csa")
    app = owner_object("Application")
    app["metadata"]["namespace"] = "argocd"
    check = one(checks(raw, app, scale=True))
    assert check.level is Level.REFUSED
    assert "argocd app set argocd/prod-pools --sync-policy manual" in check.message


@pytest.mark.parametrize(
    ("snap", "says"),
    [
        ({}, "Application platform/prod-pools was not read"),
        (
            {
                "unread_objects": [
                    (
                        "argoproj.io",
                        "Application",
                        "platform",
                        "prod-pools",
                        'applications.argoproj.io "prod-pools" is forbidden',
                    )
                ]
            },
            "Application platform/prod-pools could not be read: applications.argoproj.io "
            '"prod-pools" is forbidden',
        ),
    ],
    ids=["not-read", "forbidden"],
)
def test_an_unreadable_application_is_unknown_owner_state_and_refused(
    snap: dict[str, Any], says: str
) -> None:
    check = one(checks(pool("argo-ssa"), **snap))
    assert check.level is Level.REFUSED
    assert "unknown owner state: " + says in check.message
    assert ARGO_SUSPEND in check.message


def test_a_malformed_application_is_unknown_owner_state() -> None:
    app = owner_object("Application")
    app["spec"]["syncPolicy"]["automated"]["selfHeal"] = "yes"
    check = one(checks(pool("argo-ssa"), app))
    assert check.level is Level.REFUSED
    assert "unknown owner state: Application platform/prod-pools is malformed" in check.message
    assert "selfHeal is 'yes', not bool" in check.message


def test_argo_cd_ignore_differences_spares_the_field_it_names_and_not_the_others() -> None:
    app = owner_object("Application")
    app["spec"]["ignoreDifferences"] = [
        {"group": "cluster.x-k8s.io", "kind": "MachinePool", "jsonPointers": ["/spec/replicas"]}
    ]
    raw = pool("argo-ssa")
    replicas = one(checks(raw, app, scale=True))
    assert replicas.level is Level.WARNING
    assert "ignores differences in it (spec.ignoreDifferences[0] jsonPointers /spec/replicas)" in (
        replicas.message
    )
    assert "the next sync applies git's value again" in replicas.message
    app["spec"]["syncPolicy"]["syncOptions"].append("RespectIgnoreDifferences=true")
    assert "keeps the live value" in one(checks(raw, app, scale=True)).message
    assert one(checks(raw, app)).level is Level.REFUSED  # the version is not ignored


def test_argo_cd_ignoring_this_tools_field_manager_spares_every_field() -> None:
    app = owner_object("Application")
    app["spec"]["ignoreDifferences"] = [
        {"group": "*", "kind": "MachinePool", "managedFieldsManagers": ["kubectl-machinepool"]}
    ]
    assert one(checks(pool("argo-ssa"), app)).level is Level.WARNING


def test_flux_kustomization_reapplies_every_interval_with_force() -> None:
    check = one(checks(pool("flux-ks"), owner_object("Kustomization")))
    assert check.level is Level.REFUSED
    assert "applied by Flux Kustomization flux-system/prod-pools" in check.message
    assert "kustomize-controller applies it again every 10m (spec.interval), forcing" in (
        check.message
    )
    assert "flux suspend kustomization prod-pools -n flux-system" in check.message


def test_a_suspended_kustomization_is_a_warning() -> None:
    ks = owner_object("Kustomization")
    ks["spec"]["suspend"] = True
    check = one(checks(pool("flux-ks"), ks))
    assert check.level is Level.WARNING
    assert "suspended (spec.suspend true)" in check.message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("kustomize.toolkit.fluxcd.io/reconcile", "disabled"),
        ("kustomize.toolkit.fluxcd.io/ssa", "Ignore"),
        ("kustomize.toolkit.fluxcd.io/ssa", "IfNotPresent"),
    ],
)
def test_a_pool_flux_is_told_to_skip_is_a_warning(key: str, value: str) -> None:
    raw = pool("flux-ks")
    raw["metadata"]["annotations"][key] = value
    check = one(checks(raw, owner_object("Kustomization")))
    assert check.level is Level.WARNING
    assert f'{key}="{value}": no longer applied' in check.message
    assert check.message.endswith("it no longer applies this object, so nothing reverts the write")


def test_flux_ignore_rules_spare_the_fields_they_target() -> None:
    ks = owner_object("Kustomization")
    ks["spec"]["ignore"] = [{"paths": ["/spec/template"], "target": {"kind": "Machine.*"}}]
    check = one(checks(pool("flux-ks"), ks))
    assert check.level is Level.WARNING
    assert "(spec.ignore[0] /spec/template)" in check.message
    ks["spec"]["ignore"][0]["target"]["kind"] = "(a+)+$"  # never run: matches nothing
    assert one(checks(pool("flux-ks"), ks)).level is Level.REFUSED


def test_a_scale_of_a_flux_pool_the_autoscaler_sizes_is_left_to_the_scale_checks() -> None:
    assert checks(pool("flux-ks"), owner_object("Kustomization"), scale=True) == []


@pytest.mark.parametrize(
    ("drift", "level", "says"),
    [
        ({"mode": "enabled"}, Level.REFUSED, "helm-controller corrects drift every 15m"),
        ({"mode": "warn"}, Level.WARNING, "does not correct drift (spec.driftDetection.mode warn)"),
        (None, Level.WARNING, "does not correct drift (spec.driftDetection.mode disabled)"),
        (
            {"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"]}]},
            Level.WARNING,
            "drift detection ignores it (spec.driftDetection.ignore[0] /spec/replicas)",
        ),
        ({"mode": "on"}, Level.REFUSED, "unknown owner state: HelmRelease flux-system/workers is"),
    ],
    ids=["enabled", "warn", "unset", "ignored", "malformed"],
)
def test_a_helmrelease_reverts_only_with_drift_detection_enabled(
    drift: Obj | None, level: Level, says: str
) -> None:
    release = owner_object("HelmRelease")
    release["spec"].pop("driftDetection")
    if drift is not None:
        release["spec"]["driftDetection"] = drift
    check = one(checks(pool("flux-hr"), release, scale=True))
    assert (check.level, says in check.message) == (level, True), check.message
    assert "flux suspend helmrelease workers -n flux-system" in check.message or (
        level is Level.WARNING
    )


def test_appliers_that_apply_only_when_run_are_warnings() -> None:
    helm = one(checks(pool("helm-chart")))
    assert helm.level is Level.WARNING
    assert helm.message.endswith(
        "the next helm upgrade of the release applies the chart's value again"
    )
    kubectl = one(checks(pool("kubectl-csa"), scale=True))
    assert kubectl.level is Level.WARNING
    assert "the next kubectl apply of its manifest" in kubectl.message


def test_the_topology_is_left_to_the_commands_own_checks() -> None:
    assert checks(pool("topology-pool")) == []


def test_an_owner_not_in_a_dump_is_said_so() -> None:
    write = upgrade(raw := pool("argo-ssa"))
    snapshot = Snapshot([raw], offline=True)  # type: ignore[arg-type]
    check = one(owner_checks((write,), snapshot, ignore_owner=False))
    assert "unknown owner state: Application platform/prod-pools is not in the dump" in (
        check.message
    )


def test_the_fields_a_write_changes() -> None:
    raw = pool("argo-ssa")
    ref = object_ref(raw, "machinepools")
    paused = Write(
        "patch",
        ref,
        "pause",
        {"metadata": {"resourceVersion": "7", "annotations": {"cluster.x-k8s.io/paused": "true"}}},
    )
    assert written_fields(paused) == [("metadata", "annotations", "cluster.x-k8s.io/paused")]
    assert dotted(written_fields(paused)[0]) == 'metadata.annotations["cluster.x-k8s.io/paused"]'
    assert written_fields(scale_write(raw, 3, 4)) == [("spec", "replicas")]
    assert written_fields(Write("delete", ref, "delete")) == []
    lists = Write("patch", ref, "x", {"spec": {"resources": [{"a": 1}], "gone": None}})
    assert written_fields(lists) == [("spec", "resources"), ("spec", "gone")]
