"""What the whole-pool write plans could not read, on the scenarios' realistic objects: what a
command's run reads again is refused before anything is written (plans/checks.py Rereads), and a
judgement on what was not read says so (upgrade's premise, restart's readiness, the Cluster and
infra pool a plan judges from), never a conclusion."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import NAMESPACE

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.plans.checks import (
    Check,
    Level,
    Rereads,
    access_check,
    nodes_unread,
    unread_checks,
)
from kubectl_machinepool.plans.restart import RestartRequest, plan_restart
from kubectl_machinepool.plans.upgrade import UpgradeRequest, plan_upgrade
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
INFRA = "infrastructure.cluster.x-k8s.io"
FORBIDDEN = 'secrets "dev-kubeconfig" is forbidden: User "ops" cannot get resource "secrets"'
# Live, the workload read's note is describe's warning (kube/workload.py).
NOTE = f"Nodes of Cluster {NAMESPACE}/dev are not shown: {FORBIDDEN}"
NODES = Rereads(nodes="the run judges from them")


def snapshot(
    objects: list[Obj], *, note: str | None = NOTE, unread: tuple[tuple[str, str], ...] = ()
) -> Snapshot:
    """The objects as read live: without their Nodes (note says why), or with them (None)."""
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    rest = [o for o in objects if o["kind"] != "Node" and (group(o), o["kind"]) not in unread]
    cluster = find(objects, "Cluster")["metadata"]["name"]
    workload = WorkloadNodes(NAMESPACE, cluster, None if note else nodes, note)
    return Snapshot.of(rest, workloads=[workload], unread=unread)


def group(obj: Obj) -> str:
    return str(obj["apiVersion"]).rpartition("/")[0]


def pool_of(found: Snapshot) -> PoolDescription:
    [pool] = [p for c in describe(found, Selection(), NOW).clusters for p in c.pools]
    return pool


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def messages(checks: tuple[Check, ...] | list[Check], level: Level) -> list[str]:
    return [c.message for c in checks if c.level is level]


def test_the_nodes_a_run_reads_again_are_refused_with_the_reason_they_were_not_read() -> None:
    found = snapshot(objects_of("capd", "v1beta2"))
    assert nodes_unread(found, NAMESPACE, "dev") == FORBIDDEN
    [refusal] = unread_checks(pool_of(found), found, NODES)
    assert refusal == Check(
        Level.REFUSED,
        f"the Nodes of Cluster {NAMESPACE}/dev could not be read ({FORBIDDEN}): the run judges "
        "from them",
    )
    # A command whose run reads them no more: nothing to say.
    assert unread_checks(pool_of(found), found, Rereads()) == []


def test_nodes_read_are_no_refusal_and_a_dumps_note_is_said_whole() -> None:
    objects = objects_of("capd", "v1beta2")
    read = snapshot(objects, note=None)
    assert nodes_unread(read, NAMESPACE, "dev") is None
    assert unread_checks(pool_of(read), read, NODES) == []
    dump = "the input holds no Node objects, so Nodes are not shown"
    assert nodes_unread(snapshot(objects, note=dump), NAMESPACE, "dev") == dump


@pytest.mark.parametrize("kind", ["DockerMachinePool", "DockerMachine"])
def test_the_infra_kinds_a_run_reads_again_are_refused_by_name(kind: str) -> None:
    """The infra machines' kind is the infra pool's status.infrastructureMachineKind: with the
    infra pool unread, the infra pool is what is named."""
    found = snapshot(objects_of("capd", "v1beta2"), note=None, unread=((INFRA, kind),))
    infra = Rereads(infra="each replacement is planned from them")
    assert messages(unread_checks(pool_of(found), found, infra), Level.REFUSED) == [
        f"{kind} objects could not be read: each replacement is planned from them"
    ]


@pytest.mark.parametrize("topology", [False, True])
def test_a_cluster_not_read_is_said_unknown_by_every_whole_pool_plan(topology: bool) -> None:
    objects = objects_of("capd", "v1beta2")
    if topology:
        labels = find(objects, "MachinePool")["metadata"].setdefault("labels", {})
        labels["topology.cluster.x-k8s.io/owned"] = ""
    found = snapshot(objects, note=None, unread=((CAPI_GROUP, "Cluster"),))
    [warning] = messages(unread_checks(pool_of(found), found, Rereads()), Level.WARNING)
    owned = ", and what its topology sets for this pool," if topology else ""
    assert warning == (
        f"Cluster {NAMESPACE}/dev could not be read: whether it is paused or being "
        f"deleted{owned} is unknown"
    )


def upgrade(objects: list[Obj], *, force: bool = False, plural: str = "dockermachinepools") -> Any:
    found = snapshot(objects)
    request = UpgradeRequest("v1.34.1", force=force)
    return plan_upgrade(
        pool_of(found), found, request, NOW, plural=plural, permissions=allowed
    ).checks


def test_upgrade_says_a_rollout_judged_without_its_nodes_is_unknown_not_progressing() -> None:
    """The rollout at rest, its Nodes unread: "progressing, not done (0 of 2 ... up to date and
    Ready)" was the false premise (issue 49)."""
    [refusal] = messages(upgrade(objects_of("capd", "v1beta2")), Level.REFUSED)
    assert refusal == (
        f"whether the pool's current rollout is done is unknown: the Nodes of Cluster "
        f"{NAMESPACE}/dev could not be read ({FORBIDDEN}), so no instance's version or readiness "
        "is known; --force goes ahead anyway"
    )
    [forced] = [
        m
        for m in messages(upgrade(objects_of("capd", "v1beta2"), force=True), Level.WARNING)
        if "rollout" in m
    ]
    assert forced.endswith("readiness is known (--force: going ahead)")


def test_upgrade_says_a_rollout_not_done_by_what_the_nodes_do_not_decide() -> None:
    """The provider's own signal and its per-instance model flag need no Node: not done is a
    true premise then, said beside the Nodes that could not be read."""
    objects = objects_of("azure-vmss", "v1beta2")  # mid-rollout
    refusals = messages(upgrade(objects, plural="azuremachinepools"), Level.REFUSED)
    [premise] = [m for m in refusals if "rollout" in m]
    assert premise.startswith(
        "the pool's current rollout is not done (AzureMachinePool vmss-workers "
        "ScaleSetModelUpdated=False (ScaleSetModelOutOfDate) says it is still rolling; 1 old "
        f"instance left), and the Nodes of Cluster {NAMESPACE}/prod could not be read ("
    )
    assert "of unknown version" not in premise
    assert "up to date and Ready" not in premise


def restart(objects: list[Obj], *, note: str | None, may: bool = True) -> Any:
    found = snapshot(objects, note=note)

    def permissions(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
        return {w.access: may for w in writes}

    return plan_restart(pool_of(found), found, RestartRequest(), NOW, permissions=permissions)


def test_restart_claims_no_unready_node_where_the_nodes_were_not_read() -> None:
    objects = objects_of("azure-vmss", "v1beta2")  # one instance's Node is not Ready
    said = messages(restart(objects, note=None).checks, Level.WARNING)
    assert said == [
        "1 instance(s) have no Ready Node now; a replacement starts only while fewer than 1 "
        "are unavailable"
    ]
    unread = restart(objects, note=NOTE)
    assert not [m for m in messages(unread.checks, Level.WARNING) if "Ready Node" in m]


def test_a_restart_gone_on_with_asks_now_for_the_record_removal_at_its_end() -> None:
    objects = objects_of("capd", "v1beta2")
    started = format_time(NOW)  # both instances were made before it
    find(objects, "MachinePool")["metadata"].setdefault("annotations", {})[STARTED] = started
    found = restart(objects, note=None, may=False)
    assert (found.resumed, found.writes) == (True, ())
    assert found.refusals == (
        f"you may not patch machinepools.cluster.x-k8s.io in namespace {NAMESPACE}",
    )


@pytest.mark.parametrize(
    ("allowed_", "level", "said"),
    [
        (True, Level.OK, "you may watch"),
        (False, Level.REFUSED, "you may not watch"),
        (None, Level.WARNING, "could not check whether you may watch"),
    ],
)
def test_an_access_the_run_needs_beyond_its_writes_is_checked_with_what_for(
    allowed_: bool | None, level: Level, said: str
) -> None:
    watch = Access("watch", CAPI_GROUP, "machines", "", NAMESPACE, "")
    assert access_check(watch, allowed_, "--wait follows by it") == Check(
        level, f"{said} machines.{CAPI_GROUP} in namespace {NAMESPACE}: --wait follows by it"
    )
