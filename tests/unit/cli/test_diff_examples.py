"""diff's prediction for each example change in examples/diff/, against the example dump it
changes and against an export of it: the consequence, the --exit-code, the text and JSON as
golden files, and docs/diff.md's table of the predictions."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.docs import page, section
from support.run import run_cli

from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.render.diff import facts_table

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
# Each change, the example dump it is made to, and what diff predicts: the consequence and
# the --exit-code (1: changes that do not roll, 2: changes that roll).
PREDICTIONS = {
    "aws-asg-kubeadmconfig": ("aws-asg", "rolls none", 1),
    "aws-asg-rename": ("aws-asg", "rolls every instance", 2),
    "aws-asg-tags": ("aws-asg", "rolls every instance", 2),
    "azure-image-drift-image": ("azure-image-drift", "rolls every instance", 2),
    "azure-vmss-replicas": ("azure-vmss", "scales", 1),
    "azure-vmss-size": ("azure-vmss", "changes only new instances", 1),
    "azure-vmss-tags": ("azure-vmss", "rolls none", 1),
    "eks-managed-version": ("eks-managed", "starts the managed service's upgrade", 2),
}


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths as the docs write them, relative to the checkout."""
    monkeypatch.chdir(ROOT)


def _diff(capsys: pytest.CaptureFixture[str], change: str, against: str, *extra: str):
    manifest = f"examples/diff/{change}.yaml"
    return run_cli(capsys, "diff", "-f", manifest, "--against", against, *extra)


def test_every_example_change_has_a_prediction() -> None:
    assert sorted(p.stem for p in (EXAMPLES / "diff").glob("*.yaml")) == sorted(PREDICTIONS)


@pytest.mark.parametrize("change", sorted(PREDICTIONS))
def test_each_example_change_is_predicted(change: str, capsys, golden) -> None:
    dump, consequence, code = PREDICTIONS[change]
    result = _diff(capsys, change, f"examples/{dump}.yaml", "--exit-code")
    assert (result.code, result.err) == (code, "")
    assert result.out.splitlines()[0].endswith(f": {consequence}")
    golden(f"diff/{change}.txt", result.out)
    plain = _diff(capsys, change, f"examples/{dump}.yaml")
    assert plain.code == 0  # without --exit-code a difference is no failure


def test_the_json_document(capsys, golden) -> None:
    result = _diff(capsys, "aws-asg-rename", "examples/aws-asg.yaml", "-o", "json")
    document = json.loads(result.out)
    assert document["exitCode"] == 2
    [pool] = document["pools"]
    assert (pool["effect"], pool["rolls"], pool["roll"]["instances"]) == ("RollsAll", True, 3)
    golden("diff/aws-asg-rename.json", result.out)


def _export(dump: str, target: Path) -> str:
    snapshot = load_dump([str(EXAMPLES / f"{dump}.yaml")], None)
    documents = export.documents_of(
        snapshot,
        captured=datetime(2026, 11, 29, 15, 0, tzinfo=UTC),
        scope=export.Scope("capi-prod"),
        versions=export.Versions("0.0.0", "v1.14.0", "image"),
    )
    bundlefiles.write(documents, str(target), 0)
    return str(target)


def test_against_an_export_the_fields_it_keeps_are_compared(tmp_path, capsys) -> None:
    bundle = _export("azure-image-drift", tmp_path / "bundle")
    result = _diff(capsys, "azure-image-drift-image", bundle, "--exit-code", "-o", "json")
    assert result.code == 2
    [pool] = json.loads(result.out)["pools"]
    changes = [
        (c["path"], c["before"], c["after"], c["compared"]) for c in pool["objects"][0]["changes"]
    ]
    # In kubectl diff's order; an export keeps the gallery image's version, not its name.
    assert changes == [
        ("spec.template.image.computeGallery.name", None, "capi-ubun2-2404", False),
        ("spec.template.image.computeGallery.version", "1.32.9", "1.33.4", True),
    ]


def test_against_an_export_a_field_it_drops_is_judged_as_if_it_changed(tmp_path, capsys) -> None:
    """An export keeps no tags and no location: the tag is still said to roll nothing, and
    the location, which no fact covers, leaves the pool's consequence unknown."""
    bundle = _export("azure-vmss", tmp_path / "bundle.tar.gz")
    result = _diff(capsys, "azure-vmss-tags", bundle, "--exit-code", "-o", "json")
    assert result.code == 2
    [pool] = json.loads(result.out)["pools"]
    changes = {c["path"]: c for c in pool["objects"][0]["changes"]}
    assert changes["spec.additionalTags.cost-center"]["compared"] is False
    assert changes["spec.additionalTags.cost-center"]["effect"] == "RollsNone"
    assert changes["spec.location"]["effect"] == "Unknown"
    assert "spec.template.vmSize" not in changes  # kept, and unchanged
    assert pool["effect"] == "Unknown"


def test_docs_table_holds_the_predictions() -> None:
    table = section(page("diff"), "## The examples")
    rows = re.findall(
        r"^\| `([a-z0-9-]+)\.yaml` \| `([a-z0-9-]+)\.yaml` \| ([^|]+) \| (\d) \|$", table, re.M
    )
    assert {c: (d, e.strip(), int(x)) for c, d, e, x in rows} == PREDICTIONS


def test_docs_show_what_diff_prints_and_every_fact(capsys) -> None:
    text = page("diff")
    result = _diff(capsys, "aws-asg-kubeadmconfig", "examples/aws-asg.yaml")
    assert f"```\n{result.out}```" in text
    assert facts_table() in text
