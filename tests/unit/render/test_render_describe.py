"""describe's renderers, against golden files per provider shape."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from support.documents import describe_document
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import scenario_snapshot

from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.conditions import Condition
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.glyphs import ASCII
from kubectl_machinepool.render.structured import to_json
from kubectl_machinepool.render.tree import TreeOptions, render_tree, tree_table
from kubectl_machinepool.render.treerows import RowKind, TreeRow, headline
from kubectl_machinepool.render.treeview import short_provider_id

SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)


def findings_of(snapshot, description):
    """What the CLI shows beside the model: diagnose's findings, Cluster API version unknown."""
    return tuple(diagnose(description, snapshot, capi_version(snapshot, None), Thresholds()))


def tree(scenario: str, generation: str = "v1beta2", **options: object) -> str:
    snapshot = scenario_snapshot(scenario, generation)
    description = describe(snapshot, Selection(), NOW)
    palette = Palette(bool(options.pop("color", False)))
    findings = findings_of(snapshot, description) if options.pop("with_findings", True) else ()
    opts = TreeOptions(NOW, palette, findings=findings, **options)  # type: ignore[arg-type]
    return render_tree(description, opts)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_tree(scenario: str, golden) -> None:
    golden(f"describe/{scenario}.txt", tree(scenario))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_tree_is_the_same_for_a_v1beta1_management_cluster(scenario: str) -> None:
    # Findings may differ: MP1901 is about a counter only the v1beta2 API has.
    assert tree(scenario, "v1beta1", with_findings=False) == tree(
        scenario, "v1beta2", with_findings=False
    )


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_json(scenario: str, golden) -> None:
    snapshot = scenario_snapshot(scenario)
    description = describe(snapshot, Selection(), NOW)
    document = describe_document(description, findings_of(snapshot, description))
    jsonschema.validate(document, SCHEMA)
    golden(f"describe/{scenario}.json", to_json(document))


def test_show_all_and_every_condition(golden) -> None:
    golden(
        "describe/azure-vmss-all-conditions.txt",
        tree("azure-vmss", show_all=True, show_conditions=frozenset({"all"})),
    )


def test_ascii_glyphs(golden) -> None:
    golden("describe/aks-managed-ascii.txt", tree("aks-managed", glyphs=ASCII))


def test_colour(golden) -> None:
    coloured = tree("azure-vmss", color=True)
    golden("describe/azure-vmss-color.txt", coloured)
    assert "\x1b[31m" in coloured  # problems in red


def test_without_nodes(golden) -> None:
    description = describe(scenario_snapshot("aws-asg", nodes_known=False), Selection(), NOW)
    golden(
        "describe/aws-asg-no-nodes.txt", render_tree(description, TreeOptions(NOW, Palette(False)))
    )
    jsonschema.validate(describe_document(description), SCHEMA)


def test_messages_wrap_between_words_and_keep_long_words_whole() -> None:
    word = "x" * 90
    message = f"first part of a message {word} and the rest of it after the long word"
    cond = Condition("Ready", "False", "Broken", message)
    root = TreeRow(
        RowKind.OBJECT,
        "Root",
        headline=headline(cond, NOW),
        message=message,
        children=(TreeRow(RowKind.OBJECT, "Child"),),
    )
    text = tree_table([root], TreeOptions(NOW, Palette(False)))
    lines = text.splitlines()
    assert any(line.endswith(word) for line in lines)
    column = lines[0].index("MESSAGE")
    assert [line[column:] for line in lines[1:4]] == [
        "first part of a message",
        word,
        "and the rest of it after the long word",
    ]
    assert lines[2].startswith("│")  # the tree line continues beside a wrapped message


@pytest.mark.parametrize(
    ("provider_id", "short"),
    [
        ("aws:///eu-west-1a/i-0123456789abcdef0", "aws:///eu-west-1a/i-0123456789abcdef0"),
        (
            "azure:///subscriptions/6f1f5d1c/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss/virtualMachines/7",
            "azure://…/vmss/virtualMachines/7",
        ),
        (None, "<none>"),
    ],
)
def test_long_provider_ids_keep_their_tail(provider_id, short) -> None:
    assert short_provider_id(provider_id) == short


@pytest.mark.parametrize(
    ("unread", "says"),
    [
        (True, "KubeadmConfig asg-workers (not readable)"),
        (False, "KubeadmConfig asg-workers (not found)"),
    ],
)
def test_a_bootstrap_config_missing_from_the_read_says_why(unread: bool, says: str) -> None:
    from support.snapshots import NAMESPACE

    from kubectl_machinepool.model.snapshot import Snapshot

    objects = [
        o for o in SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) if o["kind"] != "KubeadmConfig"
    ]
    kinds = [("bootstrap.cluster.x-k8s.io", "KubeadmConfig")] if unread else []
    # As the live reader leaves it: which kinds it could not list.
    snapshot = Snapshot.of([o for o in objects if o["kind"] != "Node"], unread=kinds)
    pool = describe(snapshot, Selection(), NOW).clusters[0].pools[0]
    assert pool.bootstrap is None
    assert pool.bootstrap_unread is unread
    lines = render_tree(describe(snapshot, Selection(), NOW), TreeOptions(NOW, Palette(False)))
    assert f"  Bootstrap:            {says}" in lines.splitlines()
