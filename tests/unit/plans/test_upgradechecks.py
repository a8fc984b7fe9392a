"""upgrade's preflight on the scenarios' realistic objects: the skew policy table, the providers'
rules on skipping minors, topology-owned pools, and pools not at rest (--force)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of, pause
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.rollout import pool_rollout
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.upgradechecks import preflight

Obj = dict[str, Any]


def control_plane(objects: list[Obj], version: str) -> None:
    objects.append({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
        "metadata": {"name": "prod-control-plane", "namespace": NAMESPACE},
        "spec": {"version": version, "replicas": 3}, "status": {"version": version, "replicas": 3},
    })  # fmt: skip


def checks(objects: list[Obj], version: str, force: bool = False) -> tuple[Check, ...]:
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    rollout = pool_rollout(pool, snapshot, NOW, timedelta(minutes=10))
    return preflight(pool, snapshot, rollout, version, force)


def refused(found: tuple[Check, ...]) -> list[str]:
    return [c.message for c in found if c.level is Level.REFUSED]


@pytest.mark.parametrize(
    ("plane", "target", "refusal"),
    [
        ("v1.34.2", "v1.34.1", None),
        ("v1.34.2", "v1.34.3", "is newer than the control plane (KubeadmControlPlane) at v1.34.2"),
        ("v1.34.2", "v1.35.0", "is newer than the control plane"),
        ("v1.34.2", "v1.31.9", None),  # three minors older: the 1.28+ policy allows it
        ("v1.34.2", "v1.30.9", "is more than 3 minors behind"),
        ("v1.27.4", "v1.25.9", None),  # before 1.28: two
        ("v1.27.4", "v1.24.9", "is more than 2 minors behind"),
    ],
)
def test_the_skew_policy(plane: str, target: str, refusal: str | None) -> None:
    objects = objects_of("aws-asg", "v1beta2", healthy=True)
    find(objects, "MachinePool")["spec"]["template"]["spec"]["version"] = "v1.24.0"
    control_plane(objects, plane)
    found = [r for r in refused(checks(objects, target)) if "control plane" in r]
    if refusal is None:
        assert found == []
    else:
        [message] = found
        assert refusal in message
        assert "skew policy" in message


def test_no_downgrade() -> None:
    objects = objects_of("aws-asg", "v1beta2", healthy=True)
    assert refused(checks(objects, "v1.33.3")) == [
        "v1.33.3 is older than the pool's v1.33.4: Cluster API and kubeadm do not downgrade"
    ]


def test_an_unknown_control_plane_is_a_warning_not_a_refusal() -> None:
    found = checks(objects_of("aws-asg", "v1beta2", healthy=True), "v1.34.1")
    assert (
        Check(Level.WARNING, "the control plane's version is unknown: the skew is not checked")
        in found
    )


def test_aks_refuses_a_skipped_minor_and_eks_says_it_steps() -> None:
    aks = objects_of("aks-managed", "v1beta2")
    aks = [o for o in aks if not (o["kind"] == "Node" and o["metadata"]["name"].endswith("2"))]
    [skip] = [r for r in refused(checks(aks, "v1.35.0", force=True)) if "minor" in r]
    assert skip == (
        "v1.35.0 skips 1 minor version(s): AKS upgrades one minor version at a time, and CAPZ does "
        "not step; upgrade to the latest v1.34 patch first"
    )
    eks = checks(objects_of("eks-managed", "v1beta2"), "v1.35.0", force=True)
    assert any(
        c.level is Level.WARNING
        and "CAPA updates an EKS node group one minor per call" in c.message
        for c in eks
    )


@pytest.mark.parametrize("shape", ["aks-managed", "eks-managed", "aws-asg", "capd"])
def test_a_new_major_is_refused_on_every_provider(shape: str) -> None:
    """Counting minors stopped at a major: v2.0.0 (a typo of v1.20.0, say) passed where
    v1.35.0 was refused for a skipped minor, and drew no warning on EKS."""
    objects = objects_of(shape, "v1beta2")
    [major] = [r for r in refused(checks(objects, "v2.0.0", force=True)) if "major" in r]
    assert major.startswith("v2.0.0 is a new major version over the pool's v1.")


def topology_owned(objects: list[Obj]) -> None:
    pool = find(objects, "MachinePool")
    pool["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
    pool["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"] = "workers"
    cluster = find(objects, "Cluster")
    cluster["spec"]["topology"] = {
        "version": "v1.33.4",
        "workers": {"machinePools": [{"name": "workers", "class": "default",
                                       "metadata": {"annotations": {"topology.cluster.x-k8s.io/defer-upgrade": ""}}}]},
    }  # fmt: skip
    cluster["status"]["conditions"].append({
        "type": "TopologyReconciled", "status": "False", "reason": "MachinePoolsUpgradeDeferred",
        "message": "MachinePool(s) asg-workers are deferred", "lastTransitionTime": "2026-11-29T14:00:00Z",
    })  # fmt: skip


def test_a_topology_owned_pool_is_refused_with_what_drives_it() -> None:
    objects = objects_of("aws-asg", "v1beta2", healthy=True)
    topology_owned(objects)
    [message] = [r for r in refused(checks(objects, "v1.34.1")) if "topology" in r]
    assert message == (
        f"the topology controller owns this pool and would write back the version of Cluster "
        f"{NAMESPACE}/prod's spec.topology.version (v1.33.4): change that instead (no Cluster API "
        "release has a per-pool version); TopologyReconciled is False "
        "(MachinePoolsUpgradeDeferred): MachinePool(s) asg-workers are deferred; the topology "
        "holds this pool's upgrades (topology.cluster.x-k8s.io/defer-upgrade)"
    )


def test_a_pool_not_at_rest_is_refused_unless_forced() -> None:
    objects = objects_of("azure-vmss", "v1beta2")  # mid-rollout
    pause(objects, "cluster")
    stopped = refused(checks(objects, "v1.34.1"))
    assert [m.split(":")[0] for m in stopped] == [
        "reconciliation is paused (Cluster spec.paused)",
        "the pool's current rollout is paused, not done (AzureMachinePool vmss-workers "
        "ScaleSetModelUpdated=False (ScaleSetModelOutOfDate) says it is still rolling; 1 old "
        "instance left)",
    ]
    assert all(m.endswith("; --force goes ahead anyway") for m in stopped)
    forced = checks(objects, "v1.34.1", force=True)
    assert refused(forced) == []
    assert sum(c.message.endswith("(--force: going ahead)") for c in forced) == 2


def test_a_pool_at_rest_passes() -> None:
    assert refused(checks(objects_of("azure-vmss", "v1beta2", healthy=True), "v1.34.1")) == []
