"""describe's tree model: what the tree means, asked of the data rather than the drawn text."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from support.objects import NOW
from support.snapshots import scenario_snapshot

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.treerows import Health, RowKind, TreeModel, TreeRow
from kubectl_machinepool.render.treeview import build_tree


def model(scenario: str, nodes_known: bool = True, **options: object) -> TreeModel:
    snapshot = scenario_snapshot(scenario, nodes_known=nodes_known)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    return build_tree(description, NOW, findings=findings, **options)  # type: ignore[arg-type]


def pool_of(tree: TreeModel) -> TreeRow:
    [(cluster, _)] = tree.roots
    [pool] = [c for c in cluster.children if c.kind is RowKind.POOL]
    return pool


def walk(row: TreeRow) -> Iterator[TreeRow]:
    yield row
    for child in row.children:
        yield from walk(child)


def test_problems_come_first_and_healthy_machines_fold_into_one_checked_row() -> None:
    pool = pool_of(model("azure-vmss"))
    assert [(c.kind, c.label) for c in pool.children] == [
        (RowKind.OBJECT, "KubeadmConfig capi-prod/vmss-workers"),
        (RowKind.OBJECT, "AzureMachinePool capi-prod/vmss-workers"),
        (RowKind.MACHINE, "Machine capi-prod/vmss-workers-0"),
        (RowKind.MACHINE, "Machine capi-prod/vmss-workers-2"),
        (RowKind.GROUP, "1 Machine"),
    ]
    group = pool.children[-1]
    assert (group.health, group.ready, group.available) == (Health.OK, "1/1", "1/1")
    assert group.message == "See vmss-workers-1"


def test_a_row_carries_its_headline_codes_and_health() -> None:
    pool = pool_of(model("azure-vmss"))
    head = pool.headline
    assert head is not None
    assert (head.type, head.status, head.reason, head.condition_set) == (
        "Ready",
        "False",
        "WaitingForReplicasReady",
        "v1beta1",
    )
    assert head.age is not None
    assert human_duration(head.age) == "9d"
    assert pool.codes == ("MP0703", "MP1701")
    assert (pool.ready, pool.available, pool.phase) == ("2/3", "2/3", "ScalingUp")
    broken = next(c for c in pool.children if c.label == "Machine capi-prod/vmss-workers-2")
    # The instance's problems replace the condition's message and make the row an error.
    assert broken.problem
    assert broken.health is Health.ERROR
    assert broken.message.startswith("Machine not Ready (NotReady); Node not Ready")
    assert broken.codes == ("MP0102", "MP1102")
    assert [c.kind for c in broken.children] == [RowKind.OBJECT, RowKind.NODE]
    node = broken.children[1]
    assert node.headline is not None
    assert node.headline.health is Health.ERROR
    assert not node.problem
    assert node.version == "v1.33.4"


def test_show_all_lists_every_instance_problems_first() -> None:
    pool = pool_of(model("azure-vmss", show_all=True))
    machines = [c.label.rsplit("/", 1)[1] for c in pool.children if c.kind is RowKind.MACHINE]
    assert machines == ["vmss-workers-0", "vmss-workers-2", "vmss-workers-1"]
    assert not any(r.kind is RowKind.GROUP for r in walk(pool))


def test_show_conditions_adds_a_row_per_condition_of_the_kinds_asked_for() -> None:
    pool = pool_of(model("azure-vmss", show_conditions=frozenset({"machinepool"})))
    conditions = [c for c in pool.children if c.kind is RowKind.CONDITION]
    assert conditions
    assert pool.children[: len(conditions)] == tuple(conditions)
    assert all(c.headline is not None and c.label == c.headline.type for c in conditions)
    others = [r for r in walk(pool) if r is not pool and r.kind is RowKind.CONDITION]
    assert others == conditions  # Machines and Nodes were not asked for


def test_without_nodes_a_folded_group_of_provider_ids_is_not_called_healthy() -> None:
    pool = pool_of(model("aws-asg", nodes_known=False))
    [group] = [c for c in pool.children if c.kind is RowKind.GROUP]
    assert group.label.endswith("providerIDs")
    assert (group.health, group.ready, group.available) == (Health.UNKNOWN, "", "")


def test_the_model_holds_no_glyph_and_no_colour() -> None:
    tree = model("azure-vmss", show_all=True, show_conditions=frozenset({"all"}))
    texts = [t for root, _ in tree.roots for r in walk(root) for t in (r.label, r.message)]
    drawn = ("├", "└", "│", "✓", "·", "\x1b")
    assert [t for t in texts if any(mark in t for mark in drawn)] == []


def test_the_findings_listed_below_each_tree_are_its_own() -> None:
    [(_, findings)] = model("azure-vmss").roots
    assert sorted(f.code for f in findings) == ["MP0102", "MP0703", "MP1102", "MP1701"]


def test_rows_are_frozen() -> None:
    pool = pool_of(model("capd"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        pool.label = "changed"  # type: ignore[misc]
