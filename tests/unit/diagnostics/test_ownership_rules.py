"""R28 (MP2801, MP2802): a pool's live fields against what its applier from outside last
applied, on the capd scenario's pool carrying the signals of tests/support/ownership_pools.yaml."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.ownership import carrying, owned_pool
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE

from kubectl_machinepool.diagnostics.core import Severity
from kubectl_machinepool.diagnostics.rules import BY_CODE, capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.ownership import LAST_APPLIED
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes

OWN = ("MP2801", "MP2802")


def findings(signals: dict[str, Any]) -> list[Any]:
    """The capd pool carrying the fixture pool's signals, judged by every rule; only R28's
    findings kept."""
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    carrying(signals)(objects)
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    snapshot = Snapshot.of(
        [o for o in objects if o["kind"] != "Node"],
        workloads=[WorkloadNodes(None, None, nodes)],
    )
    described = describe(snapshot, Selection(), NOW)
    found = diagnose(described, snapshot, capi_version(snapshot, None), Thresholds())
    return [f for f in found if f.code in OWN]


def test_argo_cd_client_side_copy_against_a_hand_edit_is_drift() -> None:
    (finding,) = findings(owned_pool("argo-csa"))
    assert finding.code == "MP2801"
    assert finding.severity is Severity.WARNING
    assert finding.message == (
        "spec.replicas is 5 but the last-applied copy of Argo CD Application prod-pools says 3 "
        "(managedFields: written by kubectl-edit at 2026-11-29T10:00:00Z): Argo CD Application "
        "prod-pools puts it back at its next sync"
    )


def test_kubectl_apply_copy_against_a_patched_version_is_drift() -> None:
    (finding,) = findings(owned_pool("kubectl-csa"))
    assert finding.code == "MP2801"
    assert finding.message.startswith(
        'spec.template.spec.version is "v1.33.4" but the last-applied copy of kubectl apply '
        'says "v1.32.8" (managedFields: written by kubectl-patch at 2026-11-29T10:00:00Z)'
    )
    assert finding.message.endswith("the next kubectl apply of the same file puts it back")


def test_a_version_that_differs_only_by_its_v_is_no_drift() -> None:
    raw = owned_pool("kubectl-csa")
    raw["metadata"]["annotations"][LAST_APPLIED] = raw["metadata"]["annotations"][
        LAST_APPLIED
    ].replace('"v1.32.8"', '"1.33.4"')
    assert findings(raw) == []


@pytest.mark.parametrize("name", ["argo-ssa", "flux-ks", "flux-hr", "helm-chart", "kubectl-ssa"])
def test_pools_as_their_appliers_left_them_have_no_finding(name: str) -> None:
    assert findings(owned_pool(name)) == []


def hand_written(name: str, path: tuple[str, ...], manager: str, time: str) -> dict[str, Any]:
    """The pool after `manager` changed the field: server-side apply moves it to that manager."""
    raw = owned_pool(name)
    for entry in raw["metadata"]["managedFields"]:
        parent = entry["fieldsV1"]
        for key in path[:-1]:
            parent = parent.get(f"f:{key}", {})
        parent.pop(f"f:{path[-1]}", None)
    fields: dict[str, Any] = {}
    inner = fields
    for key in path:
        inner = inner.setdefault(f"f:{key}", {})
    raw["metadata"]["managedFields"].append(
        {
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
            "manager": manager,
            "operation": "Update",
            "time": time,
        }
    )
    return raw


def test_a_field_taken_from_argo_cd_after_its_last_sync_is_said() -> None:
    (finding,) = findings(owned_pool("argo-ssa-scaled"))
    assert finding.code == "MP2802"
    assert finding.severity is Severity.INFO
    assert finding.message == (
        "spec.replicas (5) was last written by kubectl-machinepool (Update at "
        "2026-11-29T11:00:00Z), after the last apply of Argo CD Application platform/prod-pools "
        "(argocd-controller at 2026-11-28T09:00:00Z), which no longer owns it: if its manifest "
        "sets the field, Argo CD Application platform/prod-pools puts it back at its next sync"
    )


def test_a_field_written_before_the_last_apply_is_one_the_manifest_leaves_out() -> None:
    raw = hand_written("argo-ssa", ("spec", "replicas"), "kubectl-edit", "2026-11-27T11:00:00Z")
    assert findings(raw) == []


def test_the_topology_version_written_by_hand_is_said() -> None:
    raw = hand_written(
        "topology-pool",
        ("spec", "template", "spec", "version"),
        "kubectl-patch",
        "2026-11-29T11:00:00Z",
    )
    (finding,) = findings(raw)
    assert finding.code == "MP2802"
    assert "after the last apply of ClusterClass topology capi-prod/prod (capi-topology" in (
        finding.message
    )


def test_replicas_of_an_autoscaled_pool_are_left_to_the_autoscaler() -> None:
    raw = hand_written("flux-ks", ("spec", "replicas"), "kubectl-edit", "2026-11-29T14:55:00Z")
    assert findings(raw) == []


def test_the_rules_explain_themselves() -> None:
    for code in OWN:
        rule = BY_CODE[code]
        assert rule.rule == "R28"
        assert rule.checks
        assert rule.why
        assert rule.action
