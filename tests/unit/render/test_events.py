"""Events of both APIs about a pool's objects, on one timeline: read, folded, shown under the tree,
in -o json and as a finding's evidence; hostile Events neither crash nor reach the terminal."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.events import event_record, folded
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.structured import describe_stream, to_json
from kubectl_machinepool.render.tree import TreeOptions, render_tree

Obj = dict[str, Any]
AT = format_time(NOW - timedelta(minutes=5))
EARLIER = format_time(NOW - timedelta(hours=2))
NOT_READY_NODE = "vmss-workers-000002"


def core_event(kind: str, name: str, reason: str, message: str, **more: Any) -> Obj:
    namespace = "" if kind == "Node" else NAMESPACE
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason}".lower(), "namespace": namespace or "default"},
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
        "type": "Warning",
        "reason": reason,
        "message": message,
        "count": 1,
        "firstTimestamp": EARLIER,
        "lastTimestamp": AT,
        "source": {"component": "kubelet"},
        **more,
    }


def new_event(kind: str, name: str, reason: str, note: str, count: int) -> Obj:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{reason}.new".lower(), "namespace": NAMESPACE},
        "regarding": {"kind": kind, "name": name, "namespace": NAMESPACE},
        "type": "Normal",
        "reason": reason,
        "note": note,
        "eventTime": EARLIER,
        "series": {"count": count, "lastObservedTime": AT},
        "reportingController": "azuremachinepool-controller",
    }


def _vmss(*events: Obj) -> list[Obj]:
    """The azure-vmss scenario with these Events instead of its own."""
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    return [*(o for o in objects if o["kind"] != "Event"), *events]


def _pool(objects: list[Obj]) -> Any:
    (cluster,) = describe(snapshot_of(objects), Selection(), NOW).clusters
    (pool,) = cluster.pools
    return pool


def test_both_apis_are_read_alike() -> None:
    old = event_record(core_event("Machine", "m", "DrainFailed", "cannot evict", count=4))
    new = event_record(new_event("AzureMachinePool", "p", "Updating", "rolling", 7))
    assert old is not None
    assert new is not None
    assert (old.kind, old.name, old.type, old.reason, old.count, old.source) == (
        "Machine", "m", "Warning", "DrainFailed", 4, "kubelet",
    )  # fmt: skip
    assert (new.kind, new.name, new.count, new.message, new.source) == (
        "AzureMachinePool", "p", 7, "rolling", "azuremachinepool-controller",
    )  # fmt: skip
    assert format_time(new.last) == AT


def test_repeats_fold_with_their_counts() -> None:
    once = core_event("Node", "n", "NodeNotReady", "Node n status is now: NodeNotReady")
    again = {**once, "count": 2, "firstTimestamp": AT}
    other = core_event("Node", "n", "Rebooted", "Node n has been rebooted")
    records = [event_record(e) for e in (once, again, other)]
    rows = folded(r for r in records if r is not None)
    assert [(r.reason, r.count) for r in rows] == [("NodeNotReady", 3), ("Rebooted", 1)]
    assert format_time(rows[0].first) == EARLIER


@pytest.mark.parametrize(
    "broken",
    [
        {"involvedObject": ["Node", "n"]},
        {"involvedObject": {"kind": "Node"}},
        {"involvedObject": {"kind": 7, "name": "n"}},
    ],
)
def test_an_event_naming_no_object_is_left_out(broken: Obj) -> None:
    assert event_record({**core_event("Node", "n", "R", "m"), **broken}) is None


def test_hostile_fields_are_bounded_and_typed() -> None:
    record = event_record(
        core_event("Node", "n", "R", "x" * 50_000, count="many", lastTimestamp=["2026"])
    )
    assert record is not None
    assert (len(record.message), record.count, format_time(record.last)) == (1000, 1, EARLIER)


def test_a_pool_gets_the_events_of_its_objects_from_both_clusters() -> None:
    pool = _pool(
        _vmss(
            core_event("Node", NOT_READY_NODE, "NodeNotReady", "kubelet stopped posting"),
            new_event("AzureMachinePool", "vmss-workers", "ScaleSetModelUpdating", "1 old", 3),
            core_event("Pod", "web-1", "BackOff", "not about a pool"),
            core_event("Machine", "someone-elses", "Deleted", "not this pool's"),
        )
    )
    assert [(e.kind, e.name, e.count) for e in pool.events] == [
        ("AzureMachinePool", "vmss-workers", 3),
        ("Node", NOT_READY_NODE, 1),
    ]


def test_describe_shows_them_under_the_tree_and_in_json() -> None:
    objects = _vmss(core_event("Node", NOT_READY_NODE, "NodeNotReady", "kubelet\x1b]0;x\x07 down"))
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    tree = render_tree(description, TreeOptions(now=NOW, palette=Palette(False)))
    section = tree[tree.index("Events of MachinePool capi-prod/vmss-workers") :].splitlines()
    assert section[1].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert section[2].split() == [
        "5m", "Warning", "NodeNotReady", f"Node/{NOT_READY_NODE}", "kubelet\\x1b]0;x\\x07", "down",
    ]  # fmt: skip
    assert "\x1b" not in tree
    document = json.loads(to_json(describe_stream(description)))
    (pool,) = document["clusters"][0]["machinePools"]
    assert pool["events"][0]["reason"] == "NodeNotReady"
    assert pool["events"][0]["message"] == "kubelet\x1b]0;x\x07 down"  # exact in JSON


def test_the_scenario_s_own_events_are_evidence_of_its_not_ready_node() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    (not_ready,) = [f for f in findings if f.code == "MP0102"]
    assert {(e.reason, e.count) for e in not_ready.events} == {("Starting", 2), ("NodeNotReady", 1)}


def test_a_finding_lists_the_events_about_what_it_names() -> None:
    objects = _vmss(
        core_event("Node", NOT_READY_NODE, "NodeNotReady", "kubelet stopped posting"),
        core_event("Node", "vmss-workers-000000", "Rebooted", "not the NotReady one"),
    )
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    (not_ready,) = [f for f in findings if f.code == "MP0102"]
    assert [(e.name, e.reason) for e in not_ready.events] == [(NOT_READY_NODE, "NodeNotReady")]


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.usefixtures("no_cluster")
def test_the_events_command_lists_a_pool_s_timeline(capsys: pytest.CaptureFixture[str]) -> None:
    dump = str(EXAMPLES / "azure-vmss.yaml")
    result = run_cli(capsys, "events", "vmss-workers", "-f", dump, "--now", "2026-11-29T15:00:00Z")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert lines[1].split()[:4] == ["19m", "Normal", "NodeNotReady", "Node/vmss-workers-000002"]
    assert lines[2].split()[:5] == ["19m", "(x2)", "Normal", "Starting", "Node/vmss-workers-000002"]
    document = json.loads(run_cli(capsys, "events", "-f", dump, "-o", "json").out)
    # Not Kubernetes' EventList, whose items are Event objects: it once called itself that.
    assert (document["apiVersion"], document["kind"]) == (
        "kubectl-machinepool/v1alpha1",
        "MachinePoolEvents",
    )
    assert [(e["reason"], e["count"]) for e in document["items"]] == [
        ("NodeNotReady", 1),
        ("Starting", 2),
    ]
    none = run_cli(
        capsys, "events", "-f", dump, "--types", "Warning", "--now", "2026-11-29T15:00:00Z"
    )
    assert (none.code, none.out, none.err) == (0, "", "No events found.\n")
