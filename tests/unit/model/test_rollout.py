"""A pool's rollout judged from what its instances run, on the scenarios' realistic objects."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.rollout import OLD, UNKNOWN, UP_TO_DATE, PoolRollout, pool_rollout
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.rollout import block

GENERATIONS = pytest.mark.parametrize("generation", ["v1beta1", "v1beta2"])
TEN_MINUTES = timedelta(minutes=10)
Obj = dict[str, Any]


def _objects(name: str, generation: str, **kwargs: Any) -> list[Obj]:
    return SCENARIOS[name](generation, NAMESPACE, **kwargs)


def _rollouts(objects: list[Obj], now: Any = NOW, stuck_after: timedelta = TEN_MINUTES) -> dict:
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), now)
    return {
        p.pool.name: pool_rollout(p, snapshot, now, stuck_after)
        for c in description.clusters
        for p in c.pools
    }


def _of(objects: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind]


def _states(rollout: PoolRollout) -> dict[str, str]:
    return {i.name: i.state for i in rollout.instances}


@GENERATIONS
def test_mid_upgrade_the_old_instance_and_the_provider_signal_hold_it(generation: str) -> None:
    rollout = _rollouts(_objects("azure-vmss", generation))["vmss-workers"]
    assert not rollout.done
    assert _states(rollout) == {
        "vmss-workers-0": OLD,
        "vmss-workers-1": UP_TO_DATE,
        "vmss-workers-2": UP_TO_DATE,
    }
    old = next(i for i in rollout.instances if i.state == OLD)
    assert old.evidence == ("kubelet v1.32.9, target v1.33.4", "latestModelApplied=false")
    assert rollout.available == 1  # vmss-workers-2 is up to date but its Node is NotReady
    assert rollout.waiting_for == (
        "AzureMachinePool vmss-workers ScaleSetModelUpdated=False (ScaleSetModelOutOfDate) "
        "says it is still rolling",
        "1 old instance left",
        "1 of 3 desired instances up to date and Ready",
    )


@GENERATIONS
def test_the_same_pool_after_the_upgrade_is_rolled_out(generation: str) -> None:
    rollout = _rollouts(_objects("azure-vmss", generation, healthy=True))["vmss-workers"]
    assert rollout.done, rollout.waiting_for
    assert rollout.count(UP_TO_DATE) == rollout.available == 3
    assert not rollout.stuck


@GENERATIONS
def test_a_new_model_not_yet_applied_is_old_even_on_the_right_kubelet(generation: str) -> None:
    """An image-only change (same Kubernetes version): only the provider's flag tells."""
    objects = _objects("azure-vmss", generation, healthy=True)
    ampm = _of(objects, "AzureMachinePoolMachine")[1]
    ampm["status"]["latestModelApplied"] = False
    rollout = _rollouts(objects)["vmss-workers"]
    assert _states(rollout)[ampm["metadata"]["name"]] == OLD
    assert "1 old instance left" in rollout.waiting_for


@GENERATIONS
def test_a_generation_not_yet_observed_is_not_done(generation: str) -> None:
    objects = _objects("azure-vmss", generation, healthy=True)
    pool = _of(objects, "MachinePool")[0]
    pool["metadata"]["generation"] = 4
    pool["status"]["observedGeneration"] = 3
    rollout = _rollouts(objects)["vmss-workers"]
    assert rollout.waiting_for == ("MachinePool generation 4 not yet observed (observed 3)",)


@GENERATIONS
def test_an_infra_pool_list_not_yet_copied_is_not_done(generation: str) -> None:
    """The provider lists a new instance that has joined; the MachinePool controller has not
    copied the list yet: it still has that write to make (a generation to observe after it)."""
    objects = _objects("aws-asg", generation, healthy=True)
    asg = _of(objects, "AWSMachinePool")[0]
    before = _rollouts(objects)["asg-workers"]
    assert before.done, before.waiting_for
    asg["spec"]["providerIDList"] = asg["spec"]["providerIDList"][1:]
    rollout = _rollouts(objects)["asg-workers"]
    assert rollout.waiting_for == (
        "the MachinePool's spec.providerIDList to take up AWSMachinePool's (0 to add, 1 to drop)",
    )
    asg["spec"]["providerIDList"] = []  # the provider lists none: nothing to compare
    assert _rollouts(objects)["asg-workers"].done


@GENERATIONS
def test_a_deleting_instance_does_not_count_towards_the_desired(generation: str) -> None:
    objects = _objects("azure-vmss", generation, healthy=True)
    machine = _of(objects, "Machine")[0]
    machine["metadata"]["deletionTimestamp"] = "2026-11-29T14:59:00Z"
    rollout = _rollouts(objects)["vmss-workers"]
    leaving = next(i for i in rollout.instances if i.name == machine["metadata"]["name"])
    assert (leaving.state, leaving.deleting, leaving.evidence[-1]) == (UP_TO_DATE, True, "deleting")
    assert rollout.waiting_for == ("2 of 3 desired instances up to date and Ready",)


@GENERATIONS
def test_without_a_node_the_machine_version_is_the_evidence(generation: str) -> None:
    objects = _objects("azure-vmss", generation, healthy=True)
    gone = _of(objects, "Node")[0]
    objects.remove(gone)
    rollout = _rollouts(objects)["vmss-workers"]
    evidence = {i.name: i.evidence for i in rollout.instances}
    assert any(e[0].startswith("Machine version (no Node) v1.33.4") for e in evidence.values())


@GENERATIONS
def test_an_instance_with_nothing_to_tell_is_unknown(generation: str) -> None:
    rollout = _rollouts(_objects("aws-asg", generation))["asg-workers"]
    assert sorted(_states(rollout).values()) == [UNKNOWN, UP_TO_DATE, UP_TO_DATE]
    assert "1 instance of unknown version" in rollout.waiting_for


@GENERATIONS
def test_stuck_only_once_nothing_moved_for_the_threshold(generation: str) -> None:
    objects = _objects("azure-vmss", generation)
    last = _rollouts(objects)["vmss-workers"].last_change
    assert last is not None
    before = _rollouts(objects, now=last + TEN_MINUTES - timedelta(seconds=1))["vmss-workers"]
    after = _rollouts(objects, now=last + TEN_MINUTES + timedelta(seconds=1))["vmss-workers"]
    assert (before.stuck, after.stuck) == (False, True)


@GENERATIONS
def test_a_template_version_write_is_movement(generation: str) -> None:
    """The managedFields time of the write that set the template's version starts the clock."""
    objects = _objects("azure-vmss", generation)
    pool = _of(objects, "MachinePool")[0]
    now = parse_time("2026-12-01T12:00:00Z")
    assert now is not None
    assert _rollouts(objects, now=now)["vmss-workers"].stuck
    pool["metadata"]["managedFields"] = [
        {
            "manager": "kubectl-edit",
            "operation": "Update",
            "time": "2026-12-01T11:58:00Z",
            "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:version": {}}}}},
        }
    ]
    rollout = _rollouts(objects, now=now)["vmss-workers"]
    assert not rollout.stuck
    assert rollout.last_change == parse_time("2026-12-01T11:58:00Z")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@GENERATIONS
def test_every_scenario_adds_up(name: str, generation: str) -> None:
    """Done exactly when nothing is waited for; every instance judged, with evidence."""
    objects = copy.deepcopy(_objects(name, generation))
    for rollout in _rollouts(objects).values():
        assert rollout.done == (not rollout.waiting_for)
        assert sum(rollout.count(s) for s in (UP_TO_DATE, OLD, UNKNOWN)) == len(rollout.instances)
        assert all(i.evidence for i in rollout.instances)
        assert not (rollout.done and rollout.stuck)


@GENERATIONS
def test_a_managed_node_s_image_label_is_evidence(generation: str) -> None:
    objects = _objects("eks-managed", generation)
    for node in _of(objects, "Node"):
        node["metadata"]["labels"]["eks.amazonaws.com/nodegroup-image"] = "ami-0123456789abcdef0"
    rollout = _rollouts(objects)["eks-default"]
    assert all(i.evidence[-1] == "image ami-0123456789abcdef0" for i in rollout.instances)
    assert rollout.done  # shown, not judged: the target image is not in the pool's objects


def test_status_versions_are_shown_as_counted_never_judged() -> None:
    objects = _objects("azure-vmss", "v1beta2", healthy=True)
    pool = _of(objects, "MachinePool")[0]
    pool["status"]["versions"] = [{"version": "v1.32.9", "replicas": 3}]  # stale
    rollout = _rollouts(objects)["vmss-workers"]
    assert rollout.target.counted == (("v1.32.9", 3),)
    assert rollout.done  # the Nodes say v1.33.4
    text = block(Report((rollout,), (), NOW))
    assert "Counted:      v1.32.9 (3), as Cluster API last counted them (status.versions)" in text


@GENERATIONS
def test_an_asg_s_launch_template_version_is_part_of_the_target(generation: str) -> None:
    objects = _objects("aws-asg", generation)
    infra = next(o for o in objects if o["kind"] == "AWSMachinePool")
    infra["status"]["launchTemplateVersion"] = "7"
    rollout = _rollouts(objects)["asg-workers"]
    assert "AWSMachinePool status.launchTemplateVersion=7" in rollout.target.infra_fields


@GENERATIONS
def test_a_recorded_restart_holds_the_rollout_until_no_instance_is_older_than_it(
    generation: str,
) -> None:
    objects = _objects("azure-vmss", generation, healthy=True)
    pool = _of(objects, "MachinePool")[0]
    pool["metadata"].setdefault("annotations", {})[STARTED] = "2026-11-29T14:00:00Z"
    rollout = _rollouts(objects, stuck_after=timedelta(days=30))["vmss-workers"]
    assert rollout.state == "progressing"
    assert rollout.waiting_for == (
        "the restart begun at 2026-11-29T14:00:00Z: 3 instances made before it left",
    )
    for machine in _of(objects, "Machine"):
        machine["metadata"]["creationTimestamp"] = "2026-11-29T14:30:00Z"
    assert _rollouts(objects)["vmss-workers"].done  # the record alone holds nothing
