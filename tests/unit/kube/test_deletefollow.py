"""The follow loop over a scripted watch (our own boundary, Kube.watch): what it reports.

The real server's watches are in tests/integration/test_watch.py; this pins what a re-list
after 410 Gone means for the follow: a Machine missing from it is gone, a new one is the
replacement.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.deletefollow import follow
from kubectl_machinepool.model.changes import LISTED
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Request, Wanted, find_target
from kubectl_machinepool.plans.disruption import Disruption

Obj = dict[str, Any]
MACHINE = "dev-mp-0-x7q2p"


def machines_and_plan() -> tuple[list[Obj], Plan]:
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of(objects)
    [target] = find_target(describe(snapshot, Selection(), NOW), snapshot, Wanted(MACHINE))
    plan = plan_deletion(target, Request(Mode.REPLACE), NOW, {}, Disruption(()))
    return [o for o in objects if o["kind"] == "Machine"], plan


class ScriptedWatch:
    """Kube.watch as a list of events; the watch's timeout passing ends the list."""

    def __init__(self, events: list[tuple[str, Obj]]) -> None:
        self.events = events

    def watch(self, *_args: Any, **_kwargs: Any) -> Iterator[tuple[str, Obj]]:
        yield from self.events


def deleting(machine: Obj) -> Obj:
    stage = {"type": "Deleting", "status": "True", "reason": "DrainingNode", "message": "waiting"}
    changed = copy.deepcopy(machine)
    changed["status"] = {"conditions": [stage]}
    return changed


def replacement_of(machine: Obj) -> Obj:
    new = copy.deepcopy(machine)
    new["metadata"].update(name="dev-mp-0-r2d2q", uid="uid-of-the-replacement")
    new["spec"]["providerID"] = "docker:////dev-dev-mp-0-r2d2q"
    return new


def test_a_relist_without_the_machine_means_it_is_gone() -> None:
    machines, plan = machines_and_plan()
    ours = next(m for m in machines if m["metadata"]["name"] == MACHINE)
    others = [m for m in machines if m is not ours]
    events = [
        (LISTED, {"items": machines}),
        ("MODIFIED", deleting(ours)),
        # The watch expired (410) meanwhile: the list shows the end and the replacement.
        (LISTED, {"items": [*others, replacement_of(ours)]}),
    ]
    lines: list[str] = []
    kube: Any = ScriptedWatch(events)
    follow(kube, None, plan, timeout=10, report=lines.append, warn=lines.append)
    assert lines == [
        f"Machine {NAMESPACE}/{MACHINE}: DrainingNode: waiting",
        f"replacement Machine {NAMESPACE}/dev-mp-0-r2d2q appeared (docker:////dev-dev-mp-0-r2d2q)",
    ]


def test_a_machine_of_the_same_name_is_not_ours() -> None:
    """Only the uid the plan saw is the Machine being deleted: a new one by that name is not."""
    machines, plan = machines_and_plan()
    ours = next(m for m in machines if m["metadata"]["name"] == MACHINE)
    again = copy.deepcopy(ours)
    again["metadata"]["uid"] = "another-uid"
    others = [m for m in machines if m is not ours]
    events = [(LISTED, {"items": machines}), (LISTED, {"items": [*others, again]})]
    lines: list[str] = []
    kube: Any = ScriptedWatch(events)
    follow(kube, None, plan, timeout=10, report=lines.append, warn=lines.append)  # no timeout
    assert lines == []


def test_the_timeout_passing_first_is_an_error_naming_the_last_stage() -> None:
    machines, plan = machines_and_plan()
    ours = next(m for m in machines if m["metadata"]["name"] == MACHINE)
    kube: Any = ScriptedWatch([(LISTED, {"items": machines}), ("MODIFIED", deleting(ours))])
    with pytest.raises(MachinePoolError, match=r"last stage: DrainingNode: waiting\)"):
        follow(kube, None, plan, timeout=10, report=[].append, warn=[].append)
