"""Each whole-pool write records its revision with its change (plans/recording.py): in the
MachinePool write the plan makes (upgrade's version, restart's start), else in a patch of its
own before the first write that cannot be taken back (scale's /scale, upgrade's unpause of an
image-only change); numbered one above the last, the oldest dropped past 10; refused on a
history that is not the tool's or a value that cannot be recorded."""

from __future__ import annotations

from typing import Any

from support.objects import NOW, infra_pool, machine_pool
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool import __version__
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    REPLICAS,
    VERSION,
    Change,
    Revision,
    decode,
    encode,
)
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.scale import ScaleRequest, plan_scale
from kubectl_machinepool.plans.upgrade import UpgradeRequest, plan_upgrade
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
IMAGE = "spec.template.customImage"


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def capd(version: str = "v1.33.1", history: Any = None) -> tuple[PoolDescription, list[Obj]]:
    pool = machine_pool(
        "v1beta2", "workers", NAMESPACE, "prod", infra_kind="DockerMachinePool", version=version
    )
    if history is not None:
        pool["metadata"].setdefault("annotations", {})[ANNOTATION] = history
    spec = {"template": {"customImage": "kindest/node:v1.33.1"}}
    objects = [pool, infra_pool("DockerMachinePool", "workers", NAMESPACE, "prod", spec=spec)]
    [found] = [
        p for c in describe(snapshot_of(objects), Selection(), NOW).clusters for p in c.pools
    ]
    return found, objects


def upgrade(objects: tuple[PoolDescription, list[Obj]], **request: Any):  # type: ignore[no-untyped-def]
    pool, found = objects
    return plan_upgrade(
        pool, snapshot_of(found), UpgradeRequest("v1.34.1", **request), NOW,
        plural="dockermachinepools", permissions=allowed,
    )  # fmt: skip


def recorded(write: Write) -> tuple[Revision, ...]:
    history = decode(write.body["metadata"]["annotations"][ANNOTATION], "workers")  # type: ignore[index]
    assert history.unusable is None
    return history.revisions


def test_upgrade_records_its_revision_in_the_version_write() -> None:
    plan = upgrade(capd())
    pause, version, image, unpause = plan.writes
    assert version.target.kind == "MachinePool"
    assert version.summary.endswith(", and record revision 1 (kubectl-machinepool/revisions)")
    [revision] = recorded(version)
    assert revision == Revision(
        1,
        "upgrade --version v1.34.1",
        format_time(NOW),
        __version__,
        (
            Change("MachinePool", CAPI, "workers", VERSION, "v1.33.1", "v1.34.1"),
            Change(
                "DockerMachinePool", INFRA, "workers", IMAGE,
                "kindest/node:v1.33.1", "kindest/node:v1.34.1",
            ),
        ),
    )  # fmt: skip
    # Taken back with the version if a later write fails: the pool had no history.
    assert version.undo == {
        "spec": {"template": {"spec": {"version": "v1.33.1"}}},
        "metadata": {"annotations": {ANNOTATION: None}},
    }
    assert ANNOTATION not in str(pause.body) + str(image.body) + str(unpause.body)


def test_an_image_alone_is_recorded_before_the_write_that_cannot_be_taken_back() -> None:
    plan = upgrade(capd(version="v1.34.1"))
    kinds = [(w.target.kind, w.undo is not None) for w in plan.writes]
    assert kinds == [
        ("DockerMachinePool", True),
        ("DockerMachinePool", True),
        ("MachinePool", True),
        ("DockerMachinePool", False),
    ]
    [revision] = recorded(plan.writes[2])
    assert [c.path for c in revision.changes] == [IMAGE]


def test_the_next_number_follows_the_last_and_the_oldest_go() -> None:
    old = [
        Revision(n, "scale --replicas 2", "2026-11-01T00:00:00Z", "0.1.0",
                 (Change("MachinePool", CAPI, "workers", REPLICAS, 1, 2),))
        for n in range(5, 15)
    ]  # fmt: skip
    pool, objects = capd(history=encode(old))
    plan = plan_scale(pool, snapshot_of(objects), ScaleRequest(7), NOW, permissions=allowed)
    record, scale = plan.writes
    assert (record.verb, scale.subresource) == ("patch", "scale")
    revisions = recorded(record)
    assert [r.number for r in revisions] == list(range(6, 16))
    assert revisions[-1].changes == (Change("MachinePool", CAPI, "workers", REPLICAS, 3, 7),)
    assert record.undo == {"metadata": {"annotations": {ANNOTATION: encode(old)}}}


def test_a_history_not_the_tool_s_is_refused() -> None:
    plan = upgrade(capd(history='{"format":1,"revisions":[{"revision":"1"}]}'))
    [refusal] = [c.message for c in plan.checks if "revision" in c.message]
    assert refusal.startswith(
        f"MachinePool {NAMESPACE}/workers's kubectl-machinepool/revisions annotation is no "
        "revision history this tool wrote (a revision is not an object of exactly"
    )
    assert refusal.endswith(
        f"remove it to begin afresh (kubectl annotate machinepool workers -n {NAMESPACE} "
        "kubectl-machinepool/revisions-)"
    )


def test_a_value_that_cannot_be_recorded_is_refused() -> None:
    pool, objects = capd()
    objects[1]["spec"]["template"]["customImage"] = "kindest/node:v1.33.1 \x1b[2J"
    plan = upgrade((pool, objects), sets=(("spec.template.customImage", "kindest/node:v9"),))
    refusals = [c.message for c in plan.checks if c.level is Level.REFUSED]
    assert [r for r in refusals if "revision" in r] == [
        "the revision cannot be recorded on MachinePool capi-prod/workers: DockerMachinePool "
        "workers spec.template.customImage's value before holds whitespace or a control "
        "character"
    ]


def test_a_long_command_is_recorded_cut() -> None:
    image = "kindest/node:v1.34.1@sha256:" + "a" * 600
    plan = upgrade(capd(), sets=((IMAGE, image),))
    [revision] = recorded(plan.writes[1])
    assert len(revision.cause) == 512
    assert revision.cause.startswith("upgrade --version v1.34.1 --set spec.template.customImage=")
    assert revision.cause.endswith("…")
    assert revision.changes[1].after == image
