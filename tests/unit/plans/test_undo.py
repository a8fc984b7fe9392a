"""rollout undo's plan over the CAPD scenario with a history (upgraded to v1.34.0, scaled to 2,
restarted): the fields the undone revisions wrote put back, in upgrade's writes with the size in
the same MachinePool patch and the undo recorded as the next revision; a restart puts nothing
back; a field changed from outside, a revision not kept, a history that is not the tool's are
refused; an undo of an undo goes forward again."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.rollouts import find, objects_of
from support.snapshots import snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    REPLICAS,
    START,
    VERSION,
    Change,
    Revision,
    decode,
    encode,
)
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.undo import UndoPlan, UndoRequest, plan_undo
from kubectl_machinepool.plans.writes import Access, Write

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
IMAGE = "spec.template.customImage"
POOL = ("MachinePool", CAPI, "dev-mp-0")
DOCKER = ("DockerMachinePool", INFRA, "dev-mp-0")
HISTORY = (
    Revision(
        1,
        "upgrade --version v1.34.0",
        "2026-11-20T10:00:00Z",
        "0.1.0",
        (
            Change(*POOL, VERSION, "v1.33.4", "v1.34.0"),
            Change(*DOCKER, IMAGE, "kindest/node:v1.33.4", "kindest/node:v1.34.0"),
        ),
    ),
    Revision(
        2, "scale --replicas 2", "2026-11-21T10:00:00Z", "0.1.0", (Change(*POOL, REPLICAS, 1, 2),)
    ),
    Revision(
        3,
        "rollout restart",
        "2026-11-22T10:00:00Z",
        "0.1.0",
        (Change(*POOL, START, None, "2026-11-22T10:00:00Z"),),
    ),
)


def allowed(writes: tuple[Write, ...]) -> dict[Access, bool | None]:
    return {w.access: True for w in writes}


def scenario(history: Any = None) -> list[Obj]:
    objects = objects_of("capd", "v1beta2")
    notes = find(objects, "MachinePool")["metadata"].setdefault("annotations", {})
    notes[ANNOTATION] = encode(HISTORY) if history is None else history
    return objects


def plan(objects: list[Obj], **request: Any) -> UndoPlan:
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    return plan_undo(
        pool, snapshot, UndoRequest(**request), NOW, plural="dockermachinepools",
        permissions=allowed,
    )  # fmt: skip


def refusals(found: UndoPlan) -> list[str]:
    return [c.message for c in found.checks if c.level is Level.REFUSED]


def recorded(write: Write) -> Revision:
    return decode(write.body["metadata"]["annotations"][ANNOTATION]).revisions[-1]  # type: ignore[index]


def test_undo_of_a_restart_alone_puts_nothing_back() -> None:
    found = plan(scenario())
    assert (found.to, [r.number for r in found.undone], found.fields) == (2, [3], ())
    assert [r.number for r in found.restarts] == [3]
    assert (found.writes, refusals(found), found.nothing_to_do) == ((), [], True)


def test_back_to_a_revision_puts_every_field_after_it_back() -> None:
    found = plan(scenario(), to_revision=1)
    assert [r.number for r in found.undone] == [2, 3]
    assert [(p.change.path, p.change.before, p.change.after) for p in found.fields] == [
        (REPLICAS, 2, 1)
    ]
    [write] = found.writes  # the size and the record in one patch of the pool
    assert write.body["spec"] == {"replicas": 1}  # type: ignore[index]
    revision = recorded(write)
    assert (revision.number, revision.cause) == (4, "rollout undo --to-revision 1")
    assert revision.changes == (Change(*POOL, REPLICAS, 2, 1),)
    assert write.undo == {
        "spec": {"replicas": 2},
        "metadata": {"annotations": {ANNOTATION: encode(HISTORY)}},
    }


def test_an_upgrade_undone_is_upgrade_s_writes_back() -> None:
    found = plan(scenario(encode(HISTORY[:1])))
    assert found.to is None  # before the oldest kept
    assert [(p.change.path, p.change.after) for p in found.fields] == [
        (VERSION, "v1.33.4"),
        (IMAGE, "kindest/node:v1.33.4"),
    ]
    pause, version, image, unpause = found.writes
    assert version.body["spec"] == {"template": {"spec": {"version": "v1.33.4"}}}  # type: ignore[index]
    assert image.body == {"spec": {"template": {"customImage": "kindest/node:v1.33.4"}}}
    assert (pause.target.kind, unpause.undo) == ("DockerMachinePool", None)
    assert recorded(version).changes == (
        Change(*POOL, VERSION, "v1.34.0", "v1.33.4"),
        Change(*DOCKER, IMAGE, "kindest/node:v1.34.0", "kindest/node:v1.33.4"),
    )
    warned = [c.message for c in found.checks if c.level is Level.WARNING]
    assert (
        "v1.33.4 is older than the pool's v1.34.0: every instance is replaced by one that joins "
        "at the older version"
    ) in warned
    assert refusals(found) == []


def test_a_version_and_a_size_go_back_in_one_patch_of_the_pool() -> None:
    restart, upgrade, scale = HISTORY[2], HISTORY[0], HISTORY[1]
    history = [
        Revision(n, r.cause, r.at, r.tool, r.changes)
        for n, r in enumerate((restart, upgrade, scale), 1)
    ]
    found = plan(scenario(encode(history)), to_revision=1)
    assert [p.change.path for p in found.fields] == [VERSION, IMAGE, REPLICAS]
    _pause, pool, _image, _unpause = found.writes
    assert pool.body == {
        "spec": {"template": {"spec": {"version": "v1.33.4"}}, "replicas": 1},
        "metadata": {"annotations": {ANNOTATION: pool.body["metadata"]["annotations"][ANNOTATION]}},  # type: ignore[index]
    }
    assert [c.path for c in recorded(pool).changes] == [VERSION, IMAGE, REPLICAS]
    assert pool.undo["spec"] == {"template": {"spec": {"version": "v1.34.0"}}, "replicas": 2}  # type: ignore[index]


def merged(target: Obj, patch: Obj) -> None:
    """A JSON merge patch applied, as the API server applies one."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merged(target[key], value)
        else:
            target[key] = value


def test_an_undo_of_an_undo_goes_forward_again() -> None:
    objects = scenario(encode(HISTORY[:1]))
    for write in plan(objects).writes:  # as the server holds them once written
        merged(find(objects, write.target.kind), write.body or {})
    assert find(objects, "MachinePool")["spec"]["template"]["spec"]["version"] == "v1.33.4"
    again = plan(objects)
    assert [r.number for r in again.undone] == [2]
    assert [(p.change.path, p.change.after) for p in again.fields] == [
        (VERSION, "v1.34.0"),
        (IMAGE, "kindest/node:v1.34.0"),
    ]
    revision = recorded(again.writes[1])
    assert (revision.number, revision.cause) == (3, "rollout undo")


@pytest.mark.parametrize(
    ("history", "to", "change", "said"),
    [
        (
            HISTORY, 1,
            lambda o: find(o, "MachinePool")["spec"].update(replicas=5),
            'MachinePool dev-mp-0 spec.replicas is "5" now, not "2" as revision 2 left it: '
            "changed from outside since, and undo would write over it",
        ),
        (
            HISTORY[:1], None,
            lambda o: find(o, "DockerMachinePool")["spec"]["template"].pop("customImage"),
            "DockerMachinePool dev-mp-0 spec.template.customImage is unset now, not "
            '"kindest/node:v1.34.0" as revision 1 left it',
        ),
        (
            HISTORY[:1], None,
            lambda o: find(o, "MachinePool")["spec"]["template"]["spec"]["infrastructureRef"]
            .update(name="other"),
            "revision 1 changed DockerMachinePool dev-mp-0, which is no longer the pool's infra "
            "pool (its infrastructureRef names DockerMachinePool other)",
        ),
    ],
)  # fmt: skip
def test_a_field_changed_from_outside_is_refused_naming_it(history, to, change, said) -> None:  # type: ignore[no-untyped-def]
    objects = scenario(encode(history))
    change(objects)
    found = plan(objects, to_revision=to)
    assert any(said in r for r in refusals(found)), refusals(found)
    assert found.writes == ()


@pytest.mark.parametrize(
    ("history", "to", "said"),
    [
        ("", None, "no usable revision history: it is not JSON"),
        (
            '{"format":1,"revisions":[]}',
            None,
            "no usable revision history: it does not list 1 to 10 revisions",
        ),
        (encode(HISTORY[1:]), 1, "revision 1 is no longer kept: the pool keeps 2, 3"),
        (encode(HISTORY), 7, "revision 7 is not recorded: the pool keeps 1, 2, 3"),
    ],
)
def test_no_revision_to_go_back_to_is_refused(history: str, to: int | None, said: str) -> None:
    found = plan(scenario(history), to_revision=to)
    assert refusals(found) == [said]
    assert found.writes == ()


def test_no_history_at_all_is_refused() -> None:
    objects = objects_of("capd", "v1beta2")
    assert refusals(plan(objects)) == [
        "no revision is recorded on the pool: there is nothing to go back to"
    ]


def test_the_last_revision_is_nothing_to_go_back_to() -> None:
    found = plan(scenario(), to_revision=3)
    assert (found.undone, found.fields, found.nothing_to_do) == ((), (), True)
