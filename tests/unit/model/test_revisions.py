"""The revision record on a MachinePool: what the tool writes reads back as it was written, the
last KEPT within MAX_BYTES; anything else in the annotation (huge, not JSON, wrong types,
numbers out of order, a field the tool never writes, another pool's) is no usable history,
with the reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    KEPT,
    MAX_BYTES,
    MAX_VALUE,
    REPLICAS,
    START,
    VERSION,
    Change,
    History,
    Revision,
    decode,
    encode,
    read_history,
    recorded,
    revision_problem,
)

CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"


def upgrade(number: int, before: str = "v1.33.0", after: str = "v1.34.1") -> Revision:
    return Revision(
        number,
        f"upgrade --version {after}",
        "2026-11-29T15:00:00Z",
        "0.1.0",
        (
            Change("MachinePool", CAPI, "workers", VERSION, before, after),
            Change(
                "DockerMachinePool",
                INFRA,
                "workers",
                "spec.template.customImage",
                f"kindest/node:{before}",
                f"kindest/node:{after}",
            ),
        ),
    )


def scale(number: int, before: int | None, after: int) -> Revision:
    change = Change("MachinePool", CAPI, "workers", REPLICAS, before, after)
    return Revision(number, f"scale --replicas {after}", "2026-11-29T15:05:00Z", "0.1.0", (change,))


def pool(value: Any, name: str = "workers") -> dict[str, Any]:
    return {"metadata": {"name": name, "annotations": {ANNOTATION: value}}}


def document(*revisions: dict[str, Any]) -> str:
    return json.dumps({"format": 1, "revisions": list(revisions)})


def raw(number: Any = 1, **changed: Any) -> dict[str, Any]:
    revision = {
        "revision": number,
        "cause": "scale --replicas 3",
        "at": "2026-11-29T15:00:00Z",
        "tool": "0.1.0",
        "changes": [
            {
                "kind": "MachinePool",
                "group": CAPI,
                "name": "workers",
                "path": REPLICAS,
                "before": 2,
                "after": 3,
            }
        ],
    }
    return {**revision, **changed}


def change(**changed: Any) -> dict[str, Any]:
    return raw(changes=[{**raw()["changes"][0], **changed}])


def test_what_the_tool_writes_reads_back_as_written() -> None:
    revisions = (upgrade(1), scale(2, 3, 5), scale(3, 5, None or 0))
    history = read_history(pool(encode(revisions)))
    assert history == History(revisions, value=encode(revisions))
    assert (history.last, history.next_number, history.find(2)) == (revisions[2], 4, revisions[1])


def test_no_annotation_is_an_empty_history() -> None:
    history = read_history({"metadata": {"name": "workers"}})
    assert (history.revisions, history.unusable, history.next_number) == ((), None, 1)


def test_a_restart_records_its_start() -> None:
    start = Change("MachinePool", CAPI, "workers", START, None, "2026-11-29T15:00:00Z")
    revision = Revision(4, "rollout restart", "2026-11-29T15:00:00Z", "0.1.0", (start,))
    assert f"metadata.annotations.{STARTED}" == START
    assert read_history(pool(encode([revision]))).revisions == (revision,)


def test_the_last_kept_are_kept() -> None:
    revisions = [scale(n, n, n + 1) for n in range(1, 15)]
    kept = read_history(pool(encode(revisions))).revisions
    assert [r.number for r in kept] == list(range(15 - KEPT, 15))


def test_fewer_are_kept_when_they_would_pass_the_cap() -> None:
    # Ten revisions each near the largest a field allows (in two-byte characters): the
    # oldest go.
    image = "registry.example/" + "\u00e9" * (MAX_VALUE - 30)
    revisions = [upgrade(n, "v1.33.0", "v1.34.1") for n in range(1, 11)]
    big = [
        Revision(r.number, r.cause, r.at, r.tool, (r.changes[0], _image(r.changes[1], image)))
        for r in revisions
    ]
    value = encode(big)
    assert len(value.encode()) <= MAX_BYTES
    kept = read_history(pool(value)).revisions
    assert 1 <= len(kept) < KEPT
    assert kept[-1].number == 10


def _image(change: Change, image: str) -> Change:
    return Change(change.kind, change.group, change.name, change.path, image, image + "x")


def test_a_revision_with_a_value_too_long_is_not_recorded() -> None:
    long = upgrade(1, after="v1.34.1")
    long = Revision(1, "x", long.at, "0.1.0", (_image(long.changes[1], "i" * (MAX_VALUE + 1)),))
    assert "over 1024" in (revision_problem(long) or "")
    assert revision_problem(upgrade(1)) is None
    assert recorded(History(), upgrade(1)) == encode([upgrade(1)])


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (12, "it is not text"),
        ({"format": 1}, "it is not text"),
        ("", "it is not JSON"),
        ("{", "it is not JSON"),
        ("[" * 100_000, "bytes, over the cap of 32768"),
        ("[" * 20_000 + "]" * 20_000, "bytes, over the cap"),
        ("[" * 15_000 + "]" * 15_000, "it is not JSON"),  # too deep to parse
        ('{"format": 1, "revisions": [' + "9" * 5000 + "]}", "it is not JSON"),
        ("[]", "exactly format and revisions"),
        (json.dumps({"format": 2, "revisions": []}), "its format is not 1"),
        (json.dumps({"format": True, "revisions": [raw()]}), "its format is not 1"),
        (json.dumps({"format": 1, "revisions": [], "x": 1}), "exactly format and revisions"),
        (document(), "does not list 1 to 10 revisions"),
        (document(*(raw(n) for n in range(1, 12))), "does not list 1 to 10"),
        (document(raw(0)), "revision number is not a whole number"),
        (document(raw(-3)), "revision number is not a whole number"),
        (document(raw(2**31)), "revision number is not a whole number"),
        (document(raw(1.0)), "revision number is not a whole number"),
        (document(raw(True)), "revision number is not a whole number"),
        (document(raw("1")), "revision number is not a whole number"),
        (document(raw(2), raw(1)), "not in ascending order"),
        (document(raw(1), raw(1)), "not in ascending order"),
        (document(raw(extra=1)), "a revision is not an object of exactly"),
        (document([1]), "a revision is not an object"),  # type: ignore[arg-type]
        (document(raw(at="yesterday")), "revision 1's time is not an RFC 3339 time"),
        (document(raw(cause="x\x1b[2J")), "revision 1's cause is not printable"),
        (document(raw(cause="c" * 600)), "revision 1's cause is not printable"),
        (document(raw(tool=["0.1"])), "tool version is not printable"),
        (document(raw(changes=[])), "revision 1 lists no changes"),
        (document(raw(changes={"a": 1})), "revision 1 lists no changes"),
        (document(raw(changes=[raw()["changes"][0]] * 2)), "names a field twice"),
        (document(change(path="spec.providerIDList")), "is no field the tool writes"),
        (document(change(path="metadata.ownerReferences")), "is no field the tool writes"),
        (document(change(kind="Deployment", group="apps")), "is no field the tool writes"),
        (document(change(kind="Unknown", group=INFRA)), "is no field the tool writes"),
        (document(change(name="Not_A_Name")), "is no object name"),
        (document(change(name=7)), "kind, group, name or path is not text"),
        (document(change(before=-1)), "value before is not a size"),
        (document(change(after=2**31)), "value after is not a size"),
        (document(change(after="3")), "value after is not a size"),
        (document(change(after=True)), "value after is not a size"),
        (document(change(after=3.0)), "value after is not a size"),
        (document(change(path=VERSION, before=None, after="latest")), "not a semantic version"),
        (document(change(path=VERSION, before="v1.33.0", after=["v1"])), "not text"),
        (document(change(path=START, before=None, after="tomorrow")), "not an RFC 3339 time"),
        (document(change(extra=1)), "a change is not an object of exactly"),
        (document(change(name="other")), "changed MachinePool other, not this one"),
    ],
)
def test_anything_else_is_no_usable_history(value: Any, reason: str) -> None:
    history = read_history(pool(value))
    assert history.revisions == ()
    assert reason in (history.unusable or "")


def test_an_infra_field_outside_its_kinds_list_is_refused() -> None:
    wrong = change(kind="DockerMachinePool", group=INFRA, path="spec.template.preLoadImages")
    assert "no field the tool writes" in (decode(document(wrong)).unusable or "")
    image = change(
        kind="DockerMachinePool",
        group=INFRA,
        path="spec.template.customImage",
        before=None,
        after="a b",
    )
    assert "whitespace" in (decode(document(image)).unusable or "")


def test_a_cleared_image_object_is_recorded_whole() -> None:
    image = {"computeGallery": {"gallery": "g", "name": "n", "version": "1.33.0"}, "x": True}
    cleared = change(kind="AzureMachinePool", group=INFRA, path="spec.template.image")
    ok = decode(
        document(
            {**cleared, "changes": [{**cleared["changes"][0], "before": image, "after": None}]}
        )
    )
    assert ok.unusable is None
    assert ok.revisions[0].changes[0].before == image
    deep: dict[str, Any] = {"a": {"b": {"c": {"d": {"e": "f"}}}}}
    too_deep = {**cleared, "changes": [{**cleared["changes"][0], "before": deep, "after": None}]}
    assert "nested too deep" in (decode(document(too_deep)).unusable or "")
