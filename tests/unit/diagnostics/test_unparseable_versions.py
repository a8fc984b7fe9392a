"""A version that is not exactly a semantic version is unparseable everywhere (issue 49, item 7):
MP1202 in diagnose, a rollout never done (nor stuck) on it, a refusal in upgrade; never read as
the version it begins with. Build metadata (v1.33.4+k3s1) stays a valid version."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.core import Finding, Severity
from kubectl_machinepool.diagnostics.rules import BY_CODE, capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.rollout import DONE, PROGRESSING, UNKNOWN, PoolRollout, pool_rollout
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.upgradechecks import preflight

Obj = dict[str, Any]
HOSTILE = ["v1.33.4;$(id)", "v1.33.4\x1b[2J", "v1.33", "1.33.4-", "1" * 40]
# Long enough ago that a rollout judged by its clock alone would be stuck.
LATER = NOW + timedelta(days=3)


def judged(objects: list[Obj], now: Any = NOW) -> tuple[PoolRollout, list[Finding], Any]:
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), now)
    [pool] = [p for c in description.clusters for p in c.pools]
    rollout = pool_rollout(pool, snapshot, now, timedelta(minutes=10))
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    return rollout, findings, (pool, snapshot)


def healthy(version: str, generation: str = "v1beta2") -> list[Obj]:
    """The AWS pool, rolled out and Ready, its version then set to this."""
    objects = objects_of("aws-asg", generation, healthy=True)
    find(objects, "MachinePool")["spec"]["template"]["spec"]["version"] = version
    return objects


def control_plane(objects: list[Obj], version: str) -> None:
    """An EKS control plane, which may name a release by its minor alone."""
    kind = "AWSManagedControlPlane"
    find(objects, "Cluster")["spec"]["controlPlaneRef"]["kind"] = kind
    objects.append({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": kind,
        "metadata": {"name": "prod-control-plane", "namespace": NAMESPACE},
        "spec": {"version": version}, "status": {"version": version, "ready": True},
    })  # fmt: skip


def mp1202(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.code == "MP1202"]


@pytest.mark.parametrize("generation", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize("version", HOSTILE)
def test_a_pool_version_that_is_none_is_an_error_and_its_rollout_never_done(
    version: str, generation: str
) -> None:
    rollout, findings, _ = judged(healthy(version, generation), LATER)
    [finding] = mp1202(findings)
    assert finding.severity is Severity.ERROR
    assert finding.message.startswith('spec.template.spec.version is "')
    assert "\x1b" not in finding.message
    # Not read as v1.33.4, which every kubelet runs: the rollout is neither done nor stuck.
    assert rollout.state == PROGRESSING
    assert rollout.waiting_for[0].startswith("the pool's version to be a semantic version")
    assert {i.state for i in rollout.instances} == {UNKNOWN}
    assert not {f.code for f in findings} & {"MP1101", "MP1102", "MP1201"}


def test_the_escape_byte_is_shown_not_obeyed() -> None:
    _, findings, _ = judged(healthy("v1.33.4\x1b[2J"))
    assert mp1202(findings)[0].message.startswith('spec.template.spec.version is "v1.33.4\\x1b[2J"')


@pytest.mark.parametrize("version", ["v1.33.4", "1.33.4", "v1.33.4+k3s1", "v1.33.4-eks-1234"])
def test_a_version_with_build_metadata_is_a_version(version: str) -> None:
    rollout, findings, _ = judged(healthy(version))
    assert mp1202(findings) == []
    assert rollout.state == DONE


def test_a_kubelet_version_that_is_none_is_named_and_its_instance_unknown() -> None:
    objects = healthy("v1.33.4")
    first = next(o for o in objects if o["kind"] == "Node")
    first["status"]["nodeInfo"]["kubeletVersion"] = "v1.33.4;$(id)"
    rollout, findings, _ = judged(objects)
    [finding] = mp1202(findings)
    assert finding.severity is Severity.WARNING
    assert finding.instances == (first["metadata"]["name"],)
    assert rollout.state != DONE
    assert [i.state for i in rollout.instances].count(UNKNOWN) == 1


def test_a_control_plane_version_that_is_none_is_said_a_minor_alone_is_not() -> None:
    objects = healthy("v1.33.4")
    control_plane(objects, "v1.33.4;$(id)")
    [finding] = mp1202(judged(objects)[1])
    assert "the control plane (AWSManagedControlPlane) reports version" in finding.message
    eks = healthy("v1.33.4")
    control_plane(eks, "1.33")
    assert mp1202(judged(eks)[1]) == []


def test_explain_describes_it() -> None:
    rule = BY_CODE["MP1202"]
    assert (rule.rule, rule.title) == ("R12b", "Version is not a semantic version")
    assert "v1.34.0;$(id)" in rule.checks
    assert "+k3s1" in rule.checks


@pytest.mark.parametrize("version", HOSTILE)
def test_upgrade_refuses_a_pool_whose_version_is_none(version: str) -> None:
    objects = healthy(version)
    control_plane(objects, "v1.34.2")
    _, _, (pool, snapshot) = judged(objects)
    rollout = pool_rollout(pool, snapshot, NOW, timedelta(minutes=10))
    checks = preflight(pool, snapshot, rollout, "v1.34.1", force=True)
    refused = [c.message for c in checks if c.level is Level.REFUSED]
    assert refused[0].startswith(
        f"MachinePool {NAMESPACE}/asg-workers: spec.template.spec.version is"
    )
    assert "not a semantic version (MP1202)" in refused[0]
    # --force goes past a rollout not done, never past a version nothing can be compared with.
    assert all("\x1b" not in c.message for c in checks)


def test_a_control_plane_named_by_its_minor_is_not_newer_than_its_patches() -> None:
    objects = healthy("v1.33.4")
    control_plane(objects, "1.34")
    _, _, (pool, snapshot) = judged(objects)
    rollout = pool_rollout(pool, snapshot, NOW, timedelta(minutes=10))
    levels = {c.message: c.level for c in preflight(pool, snapshot, rollout, "v1.34.1", False)}
    assert [m for m, level in levels.items() if level is Level.REFUSED] == []
    assert any(m.startswith("v1.34.1 is within the skew") for m in levels)


def test_the_version_an_infra_pool_deploys_is_read_whole_too() -> None:
    """OKE deploys its node pool's spec.version, not the MachinePool's (#7248)."""
    objects = objects_of("eks-managed", "v1beta2")
    infra = find(objects, "AWSManagedMachinePool")
    infra["kind"], infra["spec"]["version"] = "OCIManagedMachinePool", "v1.33.5;$(id)"
    ref = find(objects, "MachinePool")["spec"]["template"]["spec"]["infrastructureRef"]
    ref["kind"] = "OCIManagedMachinePool"
    rollout, findings, _ = judged(objects)
    [finding] = mp1202(findings)
    assert finding.message.startswith(
        f'OCIManagedMachinePool {NAMESPACE}/eks-default spec.version is "v1.33.5;$(id)"'
    )
    assert rollout.state != DONE
