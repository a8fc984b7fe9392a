"""Rollout truth (issue 28), each class with a case it must get right and a near miss: a paused
rollout is paused, not stuck; a rollout the provider visibly moves is no warning; a stuck
rollout names the instance that holds it; MP0401 claims a freeze only when the infra pool's
status.ready is false; MP2301 in a paused pool speaks of new instances, not stale ones."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import ago as minutes_ago
from support.rollouts import (
    asg_surge,
    find,
    objects_of,
    pause,
    set_condition,
    upgrade,
    vmss_surge,
)
from support.scenarios import SCENARIOS, node
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.core import Finding, Severity
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.rollout import (
    DONE,
    PAUSED,
    PROGRESSING,
    STUCK,
    UNKNOWN,
    UP_TO_DATE,
    PoolRollout,
    pool_rollout,
)
from kubectl_machinepool.model.selector import Selection

GENERATIONS = pytest.mark.parametrize("generation", ["v1beta1", "v1beta2"])
WINDOW = timedelta(minutes=10)
Obj = dict[str, Any]


def judged(objects: list[Obj]) -> tuple[PoolRollout, dict[str, Finding]]:
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    [pool] = [p for c in description.clusters for p in c.pools]
    rollout = pool_rollout(pool, snapshot, NOW, WINDOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    return rollout, {f.code: f for f in findings}


def upgrading_asg(generation: str) -> list[Obj]:
    """Three instances on the old version; the surge instance joined Ready two hours ago."""
    objects = objects_of("aws-asg", generation, healthy=True)
    upgrade(objects)
    asg_surge(objects, joined_minutes=120, recorded=True)
    return objects


def upgrading_vmss(generation: str) -> list[Obj]:
    """The example pool: one old instance, a new one NotReady for 19 minutes."""
    return objects_of("azure-vmss", generation)


PAUSED_MID_ROLLOUT = pytest.mark.parametrize("build", [upgrading_asg, upgrading_vmss])


# -- 1. paused mid-rollout -------------------------------------------------------------------


@GENERATIONS
@PAUSED_MID_ROLLOUT
@pytest.mark.parametrize("how", ["cluster", "pool", "infra"])
def test_a_paused_rollout_is_paused_however_long_nothing_moved(
    build: Any, how: str, generation: str
) -> None:
    objects = build(generation)
    pause(objects, how)
    rollout, _ = judged(objects)
    assert rollout.state == PAUSED
    assert not rollout.stuck
    assert not rollout.done
    assert rollout.paused_by is not None
    assert {"cluster": "Cluster spec.paused", "pool": "annotation", "infra": " on "}[how] in (
        rollout.paused_by
    )
    assert rollout.holding  # the instances it waits for are still named


@GENERATIONS
@PAUSED_MID_ROLLOUT
def test_the_same_rollout_unpaused_is_stuck(build: Any, generation: str) -> None:
    rollout, _ = judged(build(generation))
    assert rollout.state == STUCK


@GENERATIONS
def test_a_paused_pool_that_finished_its_rollout_is_done(generation: str) -> None:
    objects = objects_of("aws-asg", generation, healthy=True)
    pause(objects, "cluster")
    rollout, _ = judged(objects)
    assert rollout.state == DONE


# -- 2. the provider says it is rolling ------------------------------------------------------


def gke_rolling(generation: str, ready_minutes: float, updating: bool = True) -> list[Obj]:
    """GKE upgrading the pool: its Updating condition True for 33 minutes, one Node replaced
    by one on the new version that turned Ready `ready_minutes` ago."""
    objects = objects_of("gke-managed", generation)
    upgrade(objects, "v1.33.5")
    pool = find(objects, "GCPManagedMachinePool")
    if updating:
        set_condition(
            pool, "GKEMachinePoolUpdating", status="True", reason="GKEMachinePoolUpdating",
            lastTransitionTime=minutes_ago(33),
        )  # fmt: skip
    first = find(objects, "Node", "gke-prod-default-5f2a1c9e-0q1w")
    objects.remove(first)
    objects.append(
        node(
            first["metadata"]["name"], first["spec"]["providerID"], "v1.33.5-gke.1200000",
            NAMESPACE, "prod", "gke-default", since=minutes_ago(ready_minutes),
        )
    )  # fmt: skip
    return objects


@GENERATIONS
def test_mp1101_is_information_while_the_provider_rolls_and_the_rollout_moves(
    generation: str,
) -> None:
    rollout, findings = judged(gke_rolling(generation, ready_minutes=3))
    assert findings["MP1101"].severity is Severity.INFO
    assert "GKEMachinePoolUpdating=True" in findings["MP1101"].message
    assert rollout.state == PROGRESSING


@GENERATIONS
def test_mp1101_stays_a_warning_once_nothing_moved_for_the_window(generation: str) -> None:
    _, findings = judged(gke_rolling(generation, ready_minutes=40))
    assert findings["MP1101"].severity is Severity.WARNING


@GENERATIONS
def test_mp1101_stays_a_warning_without_a_provider_signal(generation: str) -> None:
    """#10059: counters claim done, nothing from the provider says it still rolls."""
    _, findings = judged(gke_rolling(generation, ready_minutes=3, updating=False))
    assert findings["MP1101"].severity is Severity.WARNING


# -- 3. a surge instance that never joined ---------------------------------------------------


@GENERATIONS
def test_a_surge_instance_only_the_infra_pool_lists_holds_the_rollout(generation: str) -> None:
    objects = objects_of("aws-asg", generation, healthy=True)
    upgrade(objects)
    pid = asg_surge(objects, joined_minutes=None, recorded=False)
    rollout, findings = judged(objects)
    assert len(rollout.instances) == 4  # every instance the provider reports
    assert rollout.state == STUCK
    [surge] = [i for i in rollout.holding if i.name == pid]
    assert surge.state == UNKNOWN
    assert surge.problems == ("no Node", "not in the MachinePool's spec.providerIDList")
    assert pid in findings["MP1102"].message
    assert findings["MP1102"].instances == (pid,)  # the cause, not the old ones waiting


@GENERATIONS
def test_a_surge_instance_that_joined_lately_is_progress(generation: str) -> None:
    objects = objects_of("aws-asg", generation, healthy=True)
    upgrade(objects)
    asg_surge(objects, joined_minutes=2, recorded=False)
    rollout, findings = judged(objects)
    assert rollout.state == PROGRESSING
    assert rollout.available == 1
    assert "MP1102" not in findings


@GENERATIONS
def test_a_surge_machine_whose_bootstrap_failed_is_named_with_the_failed_step(
    generation: str,
) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    upgrade(objects)
    name = vmss_surge(objects, generation, bootstrap_failed=True)
    rollout, findings = judged(objects)
    assert rollout.state == STUCK
    [surge] = [i for i in rollout.holding if i.name == name]
    assert surge.state == UP_TO_DATE
    assert not surge.ready
    assert surge.problems[0].startswith(
        "Machine BootstrapConfigReady False (BootstrapFailed): cloud-init: kubeadm join failed"
    )
    assert "no Node for 60m" in surge.problems
    assert findings["MP1102"].instances == (name,)
    assert "BootstrapFailed" in findings["MP1102"].message


@GENERATIONS
def test_a_surge_machine_still_starting_is_no_finding(generation: str) -> None:
    objects = objects_of("azure-vmss", generation, healthy=True)
    upgrade(objects)
    vmss_surge(objects, generation, bootstrap_failed=False)
    for obj in objects:
        if obj["metadata"]["name"] == "vmss-workers-3":
            obj["metadata"]["creationTimestamp"] = minutes_ago(4)
    rollout, findings = judged(objects)
    assert rollout.state == PROGRESSING
    assert "MP1102" not in findings


# -- 4. MP0401 and managed pools -------------------------------------------------------------


def aks_infrastructure_condition(generation: str, infra_ready: bool) -> list[Obj]:
    """The MachinePool's InfrastructureReady copies the AKS pool's Ready condition, False while
    AKS updates the agent pool; status.ready is what the controller reads."""
    objects = objects_of("aks-managed", generation)
    updating = {"status": "False", "reason": "Updating", "severity": "Info"}
    pool = find(objects, "MachinePool")
    set_condition(pool, "InfrastructureReady", **updating)
    ammp = find(objects, "AzureManagedMachinePool")
    set_condition(ammp, "Ready", **updating)
    set_condition(ammp, "AgentPoolsReady", **updating)
    ammp["status"]["ready"] = infra_ready
    if not infra_ready:
        status = pool["status"]
        if generation == "v1beta1":
            status["infrastructureReady"] = False
        else:
            status["initialization"]["infrastructureProvisioned"] = False
    return objects


@GENERATIONS
def test_mp0401_says_frozen_when_the_infra_pool_is_not_ready(generation: str) -> None:
    _, findings = judged(aks_infrastructure_condition(generation, infra_ready=False))
    assert "frozen" in findings["MP0401"].message


@GENERATIONS
def test_mp0401_is_quiet_while_the_infra_pool_s_status_ready_is_true(generation: str) -> None:
    _, findings = judged(aks_infrastructure_condition(generation, infra_ready=True))
    assert "MP0401" not in findings
    # What is true instead: the managed service is rolling the pool.
    assert "AgentPoolsReady is False (Updating)" in findings["MP2201"].message


# -- 5. MP2301 in a paused pool --------------------------------------------------------------


def aks_new_instance(generation: str) -> list[Obj]:
    """A Node of a new agent-pool instance: the AKS pool lists it, the MachinePool's copy not."""
    objects = objects_of("aks-managed", generation)
    pid = find(objects, "Node")["spec"]["providerID"].rsplit("/", 1)[0] + "/9"
    ammp = find(objects, "AzureManagedMachinePool")
    ammp["spec"]["providerIDList"] = [*ammp["spec"]["providerIDList"], pid]
    fresh = "aks-pool0-41982762-vmss000009"
    objects.append(
        node(fresh, pid, "v1.33.3", NAMESPACE, "prod", "aks-pool0", since=minutes_ago(5))
    )
    return objects


@GENERATIONS
def test_mp2301_in_a_paused_pool_speaks_of_new_instances_not_stale_ones(generation: str) -> None:
    objects = aks_new_instance(generation)
    pause(objects, "cluster")
    _, findings = judged(objects)
    message = findings["MP2301"].message
    assert "new instances the pool has not recorded because reconciliation is paused" in message
    assert "never removed" not in message


@GENERATIONS
def test_mp2301_outside_a_pause_keeps_the_stale_wording(generation: str) -> None:
    _, findings = judged(aks_new_instance(generation))
    assert "the annotations are never removed" in findings["MP2301"].message


# -- every provider ----------------------------------------------------------------------------


@GENERATIONS
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_provider_s_rollout_paused_half_way_is_paused_and_otherwise_not(
    scenario: str, generation: str
) -> None:
    objects = objects_of(scenario, generation)
    upgrade(objects)
    unpaused, _ = judged(objects)
    assert unpaused.state in (PROGRESSING, STUCK)
    pause(objects, "cluster")
    paused, _ = judged(objects)
    assert paused.state == PAUSED
    assert [i.name for i in paused.holding] == [i.name for i in unpaused.holding]
