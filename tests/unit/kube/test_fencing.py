"""How a write that got no answer is decided: over a scripted Kube (our own boundary).

The real server's side (a held write delivered after the tool decided) is in the fault matrix
(tests/integration/test_fault_matrix.py, faults late and late-after-read); this pins each
decision: read, fence when the version has not moved, read again after a 409 or a lost fence.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubectl_machinepool.base.errors import ClusterAccessError, ConflictError, MachinePoolError
from kubectl_machinepool.kube.fencing import FENCE_ANNOTATION, settle
from kubectl_machinepool.plans.writes import Write, object_ref

Obj = dict[str, Any]
LOST = MachinePoolError("timed out reading from the server")


def machine(version: str = "100", **annotations: str) -> Obj:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "metadata": {
            "name": "dev-mp-0-x7q2p",
            "namespace": "capi",
            "uid": "u-1",
            "resourceVersion": version,
            "annotations": dict(annotations),
        },
        "spec": {"clusterName": "dev"},
    }


PLANNED = machine()
ANNOTATE = Write(
    "patch",
    object_ref(PLANNED, "machines"),
    "annotate Machine capi/dev-mp-0-x7q2p",
    body={"metadata": {"annotations": {"cluster.x-k8s.io/delete-machine": "yes"}}},
)
DELETE = Write("delete", object_ref(PLANNED, "machines"), "delete Machine capi/dev-mp-0-x7q2p")

Step = Obj | MachinePoolError | Callable[[Obj | None], Obj]


class ScriptedKube:
    """Answers each request with the next step of the script; records what was asked."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.asked: list[tuple[str, Obj | None]] = []

    def request(self, method: str, path: str, *_: Any, **kwargs: Any) -> Obj:
        assert path == ANNOTATE.target.path()  # the fence goes to the written object itself
        body = kwargs.get("body")
        self.asked.append((method, copy.deepcopy(body)))
        step = self.steps.pop(0)
        if isinstance(step, MachinePoolError):
            raise step
        return step(body) if callable(step) else step

    @property
    def methods(self) -> list[str]:
        return [m for m, _ in self.asked]


def fenced_as_asked(body: Obj | None) -> Obj:
    """The server applying the fence patch: the token it carries, a new resourceVersion."""
    assert body is not None
    token = body["metadata"]["annotations"][FENCE_ANNOTATION]
    assert body["metadata"]["resourceVersion"] == "100"  # conditioned on the write's version
    return machine("101", **{FENCE_ANNOTATION: token})


def run(kube: ScriptedKube, write: Write = ANNOTATE) -> Any:
    return settle(kube, write, "100", PLANNED, timeout=None)  # type: ignore[arg-type]


def test_unmoved_object_is_fenced_then_unfenced_and_the_write_can_no_longer_land() -> None:
    kube = ScriptedKube(machine("100"), fenced_as_asked, machine("102"))
    settled = run(kube)
    assert (settled.effect, settled.fenced, settled.fence_left) == (False, True, False)
    assert kube.methods == ["GET", "PATCH", "PATCH"]
    assert kube.asked[2][1] == {"metadata": {"annotations": {FENCE_ANNOTATION: None}}}
    assert settled.fresh["metadata"]["resourceVersion"] == "102"


def test_write_that_landed_is_taken_as_done_without_a_fence() -> None:
    landed = machine("101", **{"cluster.x-k8s.io/delete-machine": "yes"})
    kube = ScriptedKube(landed)
    assert run(kube).effect is True
    assert kube.methods == ["GET"]


def test_moved_version_is_final_even_without_the_write() -> None:
    """Someone else's change moved the version: the write's precondition can never hold."""
    kube = ScriptedKube(machine("105"))
    settled = run(kube)
    assert (settled.effect, settled.fenced) == (False, False)
    assert kube.methods == ["GET"]


def test_write_arriving_between_the_read_and_the_fence_wins_and_counts() -> None:
    """The late write lands first: the fence meets 409, and the next read shows the write."""
    landed = machine("101", **{"cluster.x-k8s.io/delete-machine": "yes"})
    conflict = ConflictError("the object has been modified", status=409)
    kube = ScriptedKube(machine("100"), conflict, landed)
    assert run(kube).effect is True
    assert kube.methods == ["GET", "PATCH", "GET"]


def test_late_delete_arriving_before_the_fence_counts_as_done() -> None:
    conflict = ConflictError("the object has been modified", status=409)
    gone = machine("101")
    gone["metadata"]["deletionTimestamp"] = "2026-12-03T10:00:00Z"
    kube = ScriptedKube(machine("100"), conflict, gone)
    assert run(kube, DELETE).effect is True


def test_fence_whose_reply_is_lost_is_recognised_by_its_token() -> None:
    tokens: list[str] = []

    def lost_but_applied(body: Obj | None) -> Obj:
        assert body is not None
        tokens.append(body["metadata"]["annotations"][FENCE_ANNOTATION])
        raise LOST

    def read_after(_: Obj | None) -> Obj:
        return machine("101", **{FENCE_ANNOTATION: tokens[0]})

    kube = ScriptedKube(machine("100"), lost_but_applied, read_after, machine("102"))
    settled = run(kube)
    assert (settled.effect, settled.fenced) == (False, True)
    assert kube.methods == ["GET", "PATCH", "GET", "PATCH"]  # the last one removes the fence


@pytest.mark.parametrize(
    "refusal",
    [ClusterAccessError("you may not patch machines", status=403)],
    ids=["forbidden"],
)
def test_unfenceable_object_is_unknown_with_the_reason(refusal: MachinePoolError) -> None:
    kube = ScriptedKube(machine("100"), refusal)
    settled = run(kube)
    assert settled.effect is None
    assert "could not be fenced: you may not patch machines" in settled.why


def test_unreadable_object_is_unknown() -> None:
    settled = run(ScriptedKube(LOST))
    assert settled.effect is None
    assert "could not be read back" in settled.why


def test_fence_that_cannot_be_removed_is_reported() -> None:
    kube = ScriptedKube(machine("100"), fenced_as_asked, LOST)
    settled = run(kube)
    assert (settled.effect, settled.fenced, settled.fence_left) == (False, True, True)


def test_every_fence_lost_is_unknown() -> None:
    kube = ScriptedKube(*[machine("100"), LOST] * 3)
    settled = run(kube)
    assert settled.effect is None
    assert kube.methods == ["GET", "PATCH"] * 3


def test_the_fence_and_its_removal_name_the_tool_as_their_field_manager() -> None:
    kube = ScriptedKube(machine("100"), fenced_as_asked, machine("102"))
    queries: list[tuple[str, Any]] = []
    answer = kube.request

    def request(method: str, path: str, *args: Any, **kwargs: Any) -> Obj:
        queries.append((method, args[0] if args else kwargs.get("query")))
        return answer(method, path, *args, **kwargs)

    kube.request = request  # type: ignore[method-assign]
    run(kube)
    named = {"fieldManager": "kubectl-machinepool"}
    assert queries == [("GET", None), ("PATCH", named), ("PATCH", named)]
