"""One reading of a Machine's drain timeout for MP2101 and delete-machine; notes by exact kind."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.app.deleting import note_on
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.nodedrain import drain_bound
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Request, Wanted, find_target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Budget, Disruption

MACHINE = "dev-mp-0-x7q2p"
HOUR_AGO = (NOW - timedelta(hours=1)).isoformat().replace("+00:00", "Z")
BLOCKING = Disruption((Budget("shop", "web", 0, ("web-0",)),))


def _draining(generation: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The capd pool with its Machine stuck draining for an hour, its spec updated by `spec`."""
    objects = SCENARIOS["capd"](generation, NAMESPACE)
    machine = next(
        o for o in objects if o["kind"] == "Machine" and o["metadata"]["name"] == MACHINE
    )
    machine["spec"].update(spec)
    machine["metadata"]["deletionTimestamp"] = HOUR_AGO
    status = machine["status"]
    conditions = status["v1beta2"]["conditions"] if "v1beta2" in status else status["conditions"]
    stage = next(c for c in conditions if c["type"] == "Deleting")
    stage.update(status="True", reason="DrainingNode", message="Drain not completed yet")
    return objects


@pytest.mark.parametrize(
    ("generation", "spec", "seconds"),
    [
        ("v1beta1", {}, None),
        ("v1beta1", {"nodeDrainTimeout": "0s"}, None),
        ("v1beta1", {"nodeDrainTimeout": "0"}, None),
        ("v1beta1", {"nodeDrainTimeout": "-5s"}, None),
        ("v1beta1", {"nodeDrainTimeout": "10m"}, 600.0),
        ("v1beta2", {}, None),
        ("v1beta2", {"deletion": {"nodeDrainTimeoutSeconds": 0}}, None),
        ("v1beta2", {"deletion": {"nodeDrainTimeoutSeconds": 600}}, 600.0),
    ],
)  # fmt: skip
def test_mp2101_and_the_plan_agree_that_zero_is_no_limit(generation, spec, seconds) -> None:
    """Cluster API gives up draining only after a timeout above zero (nodeDrainTimeoutExceeded):
    MP2101 used to count a stored "0s" as a bound while delete-machine counted it as none."""
    objects = _draining(generation, spec)
    machine = next(
        o for o in objects if o["kind"] == "Machine" and o["metadata"]["name"] == MACHINE
    )
    assert drain_bound(machine) == seconds
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    assert ("MP2101" in {f.code for f in findings}) is (seconds is None)
    # The same Machine, not yet deleting, planned for deletion with a budget blocking the drain.
    machine["metadata"].pop("deletionTimestamp")
    snapshot = snapshot_of(objects)
    [target] = find_target(describe(snapshot, Selection(), NOW), snapshot, Wanted(MACHINE))
    request = Request(Mode.REPLACE)
    allowed = {w.access: True for w in writes_for(target, request, NOW)}
    refusals = plan_deletion(target, request, NOW, allowed, BLOCKING).refusals
    assert any("would wait forever" in r.message for r in refusals) is (seconds is None)


INFRA = "infrastructure.example.com"


def test_the_note_quoted_is_the_one_on_that_very_group_and_kind() -> None:
    """Kinds of different groups share names (and one kind's name starts another's): a note is
    picked by its exact (group, kind), never by how its text starts."""
    notes = [
        (INFRA, "Machine", "cannot read Machine objects, so infra machines are unknown: nope"),
        (CAPI_GROUP, "MachinePool", "cannot read MachinePool objects, so: forbidden"),
        (CAPI_GROUP, "Machine", "cannot read Machine objects, so instances are unknown: denied"),
    ]
    snapshot = Snapshot.of([], [n for _, _, n in notes], unread_notes=notes)
    assert note_on(snapshot, CAPI_GROUP, "Machine").endswith(": denied")
    assert note_on(snapshot, INFRA, "Machine").endswith(": nope")
    assert note_on(snapshot, INFRA, "MachinePool") == "cannot read MachinePool objects"
