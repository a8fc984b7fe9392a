"""describe's text, describe's JSON and diagnose agree on the findings, each under its own Cluster
(issue 48): a finding repeated under another Cluster's tree, or left out of a pool's view, reads
as a different truth depending on the output asked for."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.run import run_cli
from support.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[3]
NOW = "2026-11-29T15:00:00Z"
FINDING = re.compile(r"^  (?:ERROR|WARNING|INFO) +(MP[0-9]{4}) ", re.MULTILINE)

EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.yaml"))


def held_in(tmp_path: Path) -> dict[str, Path]:
    """Every scenario of tests/support in both generations, one file each, and all of them in
    one dump (several Clusters, each in its own namespace)."""
    files: dict[str, Path] = {}
    every: list[dict[str, Any]] = []
    for name, scenario in SCENARIOS.items():
        for generation in ("v1beta1", "v1beta2"):
            objects = scenario(generation, f"ns-{name}-{generation}")
            path = tmp_path / f"{name}-{generation}.yaml"
            path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
            files[f"{name}-{generation}"] = path
            every += objects
    (tmp_path / "every").mkdir()
    (tmp_path / "every" / "all.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": every})
    )
    files["every"] = tmp_path / "every"
    return files


def per_cluster_text(text: str) -> Counter[tuple[str, str]]:
    """(Cluster, code) of each finding line of describe's text, by the tree it follows."""
    found: Counter[tuple[str, str]] = Counter()
    cluster = ""
    for line in text.splitlines():
        head = re.match(r"^Cluster (\S+)", line)
        if head:
            cluster = head.group(1)
        code = FINDING.match(line + " ")
        if code:
            found[(cluster, code.group(1))] += 1
    return found


def agree(capsys: pytest.CaptureFixture[str], *source: str) -> None:
    text = run_cli(capsys, "describe", *source, "--now", NOW, "-A")
    document = run_cli(capsys, "describe", *source, "--now", NOW, "-A", "-o", "json")
    diagnosis = run_cli(capsys, "diagnose", *source, "--now", NOW, "-A", "-o", "json")
    assert (text.code, document.code, diagnosis.code) == (0, 0, 0), text.err
    described = json.loads(document.out)["findings"]
    diagnosed = json.loads(diagnosis.out)["findings"]
    from_json = Counter((f"{f['namespace']}/{f['cluster']}", f["code"]) for f in described)
    assert per_cluster_text(text.out) == from_json
    assert sorted(from_json.elements()) == sorted(
        (f"{f['namespace']}/{f['cluster']}", f["code"]) for f in diagnosed
    )


@pytest.mark.parametrize("example", [*EXAMPLES, "."])
def test_text_and_json_agree_on_every_example(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    agree(capsys, "-f", str(ROOT / "examples" / example))


def test_text_and_json_agree_on_every_held_in_fixture(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for name, path in held_in(tmp_path).items():
        try:
            agree(capsys, "-f", str(path))
        except AssertionError as failed:
            raise AssertionError(f"{name}: {failed}") from failed


def test_a_pools_view_holds_the_findings_about_its_stray_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = ("-f", str(ROOT / "examples"), "--now", NOW, "-n", "capi-prod")
    describe = run_cli(capsys, "describe", "vmss-batch", *source)
    diagnose = run_cli(capsys, "diagnose", "vmss-batch", *source, "-o", "json")
    status = run_cli(capsys, "rollout", "status", "vmss-batch", *source, "-o", "json")
    assert "vmss-batch-000002" in describe.out
    assert {"MP0104", "MP0801"} <= set(FINDING.findall(describe.out))
    assert {"MP0104", "MP0801"} <= {f["code"] for f in json.loads(diagnose.out)["findings"]}
    [pool] = json.loads(status.out)["pools"]
    assert pool["unlistedNodes"] == ["vmss-batch-000002"]
    assert {"MP0104", "MP0801"} <= set(pool["findings"])
    # Another pool's view of the same namespace holds none of it.
    other = run_cli(capsys, "describe", "vmss-workers", *source)
    assert "vmss-batch-000002" not in other.out
