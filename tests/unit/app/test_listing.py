"""list's UP-TO-DATE, FINDINGS and kubelet versions on the shipped examples and the held-in
scenarios: the drift describe and diagnose see is in the first screen too (issue 48)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.docs import page
from support.objects import NOW as NOW_TIME
from support.run import run_cli
from support.scenarios import SCENARIOS

from kubectl_machinepool.app.listing import COVERED, listed_pools
from kubectl_machinepool.app.reading import list_kinds
from kubectl_machinepool.diagnostics.rules import BY_CODE
from kubectl_machinepool.model.listing import ListedPool
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
NOW = "2026-11-29T15:00:00Z"


def listed(*paths: Path, names: tuple[str, ...] = ()) -> dict[str, ListedPool]:
    selection = Selection(names=names)
    dump = load_dump([str(p) for p in paths], None)
    return {p.pool.name: p for p in listed_pools(list_kinds(dump, selection), NOW_TIME, selection)}


def row(text: str, name: str) -> dict[str, str]:
    """One pool's row of a table, by header (a header's words are one space apart, columns at
    least two)."""
    header, *rows = text.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
    line = next(r for r in rows if name in r.split()[:2])
    bounds = [*starts, max(len(header), len(line))]
    return {header[a:b].strip(): line[a:b].strip() for a, b in itertools.pairwise(bounds)}


def test_vmss_batch_shows_its_drift(capsys: pytest.CaptureFixture[str]) -> None:
    """Both Nodes run v1.32.9 under a v1.33.4 template whose image is still 1.32.9: READY 2,
    UP-TO-DATE 0, and the findings diagnose names (the stray Node's two included)."""
    result = run_cli(capsys, "list", "-f", str(EXAMPLES), "--now", NOW, "-o", "wide")
    assert (result.code, result.err) == (0, "")
    batch = row(result.out, "vmss-batch")
    assert (batch["READY"], batch["UP-TO-DATE"], batch["VERSION"]) == (
        "2",
        "0",
        "v1.33.4",
    )
    assert batch["FINDINGS"] == "5"
    assert batch["KUBELET VERSIONS"] == "v1.32.9(2)"
    pools = listed(EXAMPLES)
    assert pools["vmss-batch"].findings == (
        "MP0104",
        "MP0801",
        "MP1101",
        "MP1102",
        "MP1301",
    )


def test_up_to_date_counts_the_listed_nodes_at_the_desired_version() -> None:
    pools = listed(EXAMPLES)
    # vmss-workers: one of its three Nodes still on v1.32.9.
    workers = pools["vmss-workers"]
    assert workers.kubelets == (("v1.32.9", 1), ("v1.33.4", 2))
    assert workers.up_to_date == 2
    # An EKS kubelet's build suffix is the same release.
    eks = pools["eks-default"]
    assert (eks.up_to_date, eks.pool.desired, eks.findings) == (3, 3, ())
    # asg-workers: an instance with no Node is not up to date; the two Nodes are.
    asg = pools["asg-workers"]
    assert (asg.up_to_date, asg.pool.ready, asg.findings) == (2, 2, ("MP0101",))


def drifted(tmp_path: Path, kubelet: str, image: str) -> Path:
    """azure-image-drift.yaml (vmss-batch: template v1.33.4, gallery image 1.32.9, kubelets
    v1.32.9) with its pool's Nodes on kubelet and its image (spec and status) at image."""
    objects = [
        o
        for d in yaml.safe_load_all((EXAMPLES / "azure-image-drift.yaml").read_text())
        if d
        for o in d.get("items") or [d]
    ]
    for obj in objects:
        if obj["kind"] == "Node" and obj["metadata"]["name"].startswith("vmss-batch-00000"):
            obj["status"]["nodeInfo"]["kubeletVersion"] = kubelet
        if obj["kind"] == "AzureMachinePool":
            gallery = {
                **obj["spec"]["template"]["image"]["computeGallery"],
                "version": image,
            }
            obj["spec"]["template"]["image"] = obj["status"]["image"] = {"computeGallery": gallery}
    path = tmp_path / "drift.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    return path


def test_an_image_of_another_release_leaves_no_node_up_to_date(tmp_path: Path) -> None:
    """#7248: Nodes on the template's version do not run the image the infra pool asks for
    (1.32.9), so none is up to date until version and image name one release."""
    on_version = listed(drifted(tmp_path, "v1.33.4", "1.32.9"))["vmss-batch"]
    assert on_version.kubelets == (("v1.33.4", 2),)
    assert on_version.up_to_date == 0
    assert "MP1301" in on_version.findings
    agreed = listed(drifted(tmp_path, "v1.33.4", "1.33.4"))["vmss-batch"]
    assert agreed.up_to_date == 2
    assert not {"MP1101", "MP1102", "MP1301"} & set(agreed.findings)
    # Image moved, Nodes not yet: old by their version alone.
    rolling = listed(drifted(tmp_path, "v1.32.9", "1.33.4"))["vmss-batch"]
    assert rolling.up_to_date == 0
    assert "MP1301" not in rolling.findings


def test_a_dump_without_nodes_leaves_them_unknown(tmp_path: Path, capsys) -> None:
    pools = [d for d in yaml.safe_load_all((EXAMPLES / "aws-asg.yaml").read_text()) if d]
    items = [o for d in pools for o in (d.get("items") or [d]) if o.get("kind") != "Node"]
    path = tmp_path / "no-nodes.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    result = run_cli(capsys, "list", "-f", str(path), "--now", NOW, "-o", "wide")
    assert result.code == 0
    assert result.err == "warning: the input holds no Node objects, so Nodes are not shown\n"
    asg = row(result.out, "asg-workers")
    assert (asg["UP-TO-DATE"], asg["KUBELET VERSIONS"]) == ("<unknown>", "<unknown>")
    # Stuck ScalingUp is still judged, its cause left unnamed without the Nodes.
    assert asg["FINDINGS"] == "1"


def test_names_filter_and_each_missing_one_is_not_found(capsys) -> None:
    result = run_cli(
        capsys,
        "list",
        "vmss-batch",
        "nope",
        "asg-workers",
        "-f",
        str(EXAMPLES),
        "--now",
        NOW,
    )
    assert result.code == 1
    assert [line.split()[1] for line in result.out.splitlines()[1:]] == [
        "asg-workers",
        "vmss-batch",
    ]
    assert result.err.splitlines()[0] == ('error: machinepools.cluster.x-k8s.io "nope" not found')
    # A pool left out by name still holds its Nodes: none of vmss-workers' is a stray.
    assert listed(EXAMPLES, names=("vmss-batch",))["vmss-batch"].findings == (
        listed(EXAMPLES)["vmss-batch"].findings
    )


def test_json_is_kubectls_list(capsys) -> None:
    result = run_cli(capsys, "list", "-f", str(EXAMPLES), "--now", NOW, "-o", "json")
    document = json.loads(result.out)
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert [i["metadata"]["name"] for i in document["items"]] == [
        "asg-workers",
        "eks-default",
        "vmss-batch",
        "vmss-workers",
    ]
    batch = document["items"][2]["summary"]
    assert batch["replicas"]["upToDate"] == 0
    assert batch["kubeletVersions"] == [{"version": "v1.32.9", "nodes": 2}]
    assert batch["findings"]["count"] == 5


def test_the_config_files_ignores_quiet_findings_as_in_diagnose(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operator who accepted MP1301 on vmss-batch sees it left out of FINDINGS too."""
    config = tmp_path / "config.yaml"
    config.write_text("ignore:\n  - rule: MP1301\n    pool: capi-prod/vmss-batch\n")
    monkeypatch.setenv("KUBECTL_MACHINEPOOL_CONFIG", str(config))
    listing = run_cli(capsys, "list", "-f", str(EXAMPLES), "--now", NOW, "-o", "json")
    diagnosis = run_cli(
        capsys,
        "diagnose",
        "vmss-batch",
        "-f",
        str(EXAMPLES),
        "--now",
        NOW,
        "-o",
        "json",
    )
    batch = next(
        i for i in json.loads(listing.out)["items"] if i["metadata"]["name"] == "vmss-batch"
    )
    shown = [f["code"] for f in json.loads(diagnosis.out)["findings"] if f["severity"] != "info"]
    assert batch["summary"]["findings"]["codes"] == [
        "MP0104",
        "MP0801",
        "MP1101",
        "MP1102",
    ]
    assert sorted(shown) == batch["summary"]["findings"]["codes"]


# -- FINDINGS against diagnose, pool by pool ----------------------------------------------------


def sources(tmp_path: Path) -> dict[str, Path]:
    """Every example, all of them at once, and every held-in scenario in both generations."""
    found = {p.name: p for p in sorted(EXAMPLES.glob("*.yaml"))}
    found["examples/"] = EXAMPLES
    for name, scenario in SCENARIOS.items():
        for generation in ("v1beta1", "v1beta2"):
            objects: list[dict[str, Any]] = scenario(generation, f"ns-{name}-{generation}")
            path = tmp_path / f"{name}-{generation}.yaml"
            path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
            found[path.name] = path
    return found


def test_findings_count_what_diagnose_finds_with_the_covered_rules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """On every example and held-in scenario, each pool's FINDINGS are exactly the warnings and
    errors of the covered rules that `diagnose POOL` reports on the same input, though list
    reads only the pools, their infra pools and the Nodes."""
    compared = 0
    for name, path in sources(tmp_path).items():
        listing = run_cli(capsys, "list", "-A", "-f", str(path), "--now", NOW, "-o", "json")
        assert listing.code == 0, (name, listing.err)
        for item in json.loads(listing.out)["items"]:
            meta = item["metadata"]
            diagnosis = run_cli(
                capsys, "diagnose", meta["name"], "-n", meta["namespace"], "-f", str(path),
                "--now", NOW, "-o", "json",
            )  # fmt: skip
            expected = [
                f["code"]
                for f in json.loads(diagnosis.out)["findings"]
                if f["severity"] != "info" and f["code"] in COVERED
            ]
            counted = item["summary"]["findings"]
            assert sorted(counted["codes"]) == sorted(expected), (name, meta["name"])
            assert counted["count"] == len(expected)
            compared += 1
    assert compared >= 20


def test_the_covered_rules_are_rules_and_docs_list_says_which(capsys) -> None:
    assert BY_CODE.keys() >= COVERED
    documented = page("list").split("## list: FINDINGS", 1)[1].split("\n## ", 1)[0]
    named = {code for code in BY_CODE if f"`{code}`" in documented}
    assert named == COVERED
    assert "diagnose" in documented
