from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from support.docs import fenced, page, section
from support.objects import NOW, list_scenario
from support.run import run_cli

from kubectl_machinepool.app.listing import listed_pools
from kubectl_machinepool.cli.commands import listing
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.listing import (
    LABELS,
    LIST_FORMATS,
    ListView,
    label_column,
    pool_order,
    template_format,
    template_item,
)

ROOT = Path(__file__).resolve().parents[3]


def view(generation: str = "v1beta2", **kwargs: object) -> ListView:
    """Four pools of a management cluster whose workload clusters' Nodes were not read."""
    pools = listed_pools(Snapshot.of(list_scenario(generation, "capi-prod")), NOW, Selection())
    return ListView(
        pools=pools, now=NOW, palette=Palette(bool(kwargs.pop("color", False))), **kwargs
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml", "name"])
def test_list_formats(fmt: str, golden) -> None:
    golden(f"list/{fmt}.txt", LIST_FORMATS[fmt](view()))


@pytest.mark.parametrize("fmt", ["table", "wide", "name"])
def test_v1beta1_renders_like_v1beta2(fmt: str) -> None:
    assert LIST_FORMATS[fmt](view("v1beta1")) == LIST_FORMATS[fmt](view("v1beta2"))


def test_v1beta1_summaries_are_v1beta2s_apart_from_api_version() -> None:
    """The objects differ (each generation's status), what list makes of them does not."""
    v2, v1 = (json.loads(LIST_FORMATS["json"](view(g))) for g in ("v1beta2", "v1beta1"))
    for old, new in zip(v1["items"], v2["items"], strict=True):
        assert old["apiVersion"] == "cluster.x-k8s.io/v1beta1"
        assert old["summary"] == {**new["summary"], "apiVersion": "cluster.x-k8s.io/v1beta1"}


def test_all_namespaces_adds_a_namespace_column_and_no_headers_drops_headers(golden) -> None:
    golden(
        "list/wide-all-namespaces-no-headers.txt",
        LIST_FORMATS["wide"](view(all_namespaces=True, no_headers=True)),
    )


def test_colour_marks_only_phase_and_short_ready(golden) -> None:
    text = LIST_FORMATS["table"](view(color=True))
    golden("list/table-color.txt", text)
    plain = LIST_FORMATS["table"](view())
    assert "\x1b[" not in plain
    assert "\x1b[" not in LIST_FORMATS["json"](view(color=True))


def test_structured_output_is_kubectls_list_with_a_summary_per_item() -> None:
    shown = view()
    doc = json.loads(LIST_FORMATS["json"](shown))
    assert {k: v for k, v in doc.items() if k != "items"} == {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    assert yaml.safe_load(LIST_FORMATS["yaml"](shown)) == doc
    assert [i["metadata"]["name"] for i in doc["items"]] == [p.pool.name for p in shown.pools]
    asg = doc["items"][0]
    assert {k: v for k, v in asg.items() if k != "summary"} == shown.pools[0].pool.raw
    summary = asg["summary"]
    assert summary["replicas"] == {
        "desired": 3,
        "current": 3,
        "ready": 2,
        "available": 2,
        "upToDate": None,
    }
    assert summary["infrastructure"] == {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "AWSMachinePool",
        "name": "asg-workers",
        "machineKind": None,
    }
    # No Node was read: their versions are unknown, not none; ScalingUp for days is a finding
    # all the same, its cause not named.
    assert summary["kubeletVersions"] is None
    assert summary["findings"] == {"count": 1, "codes": ["MP0100"]}


def test_a_pool_whose_nodes_were_not_read_is_unknown_up_to_date() -> None:
    header, *rows = LIST_FORMATS["wide"](view()).splitlines()
    at = header.index("UP-TO-DATE")
    assert {row[at:].split()[0] for row in rows} == {"<unknown>"}
    kubelets = header.index("KUBELET VERSIONS")
    assert {row[kubelets:].split()[0] for row in rows} == {"<unknown>"}


def test_an_empty_list_renders_nothing_as_table() -> None:
    empty = ListView(pools=[], now=NOW, palette=Palette(False))
    assert LIST_FORMATS["table"](empty) == ""
    assert json.loads(LIST_FORMATS["json"](empty))["items"] == []


# -- kubectl's output conventions: label columns, templates, --sort-by --------------------------


def test_label_columns_come_after_the_others_and_labels_last(golden) -> None:
    text = LIST_FORMATS["wide"](
        view(label_columns=("cluster.x-k8s.io/cluster-name", "env"), show_labels=True)
    )
    golden("list/wide-labels.txt", text)
    header = text.splitlines()[0].split()
    assert header[-3:] == ["CLUSTER-NAME", "ENV", "LABELS"]
    assert header.index("BOOTSTRAP") < header.index("CLUSTER-NAME")


def test_labels_cell_is_every_label_sorted_or_none() -> None:
    row = view().pools[0]
    labelled = replace(row, pool=replace(row.pool, labels={"b": "2", "a": "1\x1b]0;x\x07"}))
    cell = LABELS.cell(labelled, view())
    assert cell == "a=1\\x1b]0;x\\x07,b=2"
    assert LABELS.cell(replace(row, pool=replace(row.pool, labels={})), view()) == "<none>"
    assert label_column("team").cell(row, view()) == ""


def test_templates_see_each_pool_as_read_plus_its_summary() -> None:
    shown = view()
    item = template_item(shown.pools[0])
    assert {k: v for k, v in item.items() if k != "summary"} == shown.pools[0].pool.raw
    assert item == json.loads(LIST_FORMATS["json"](shown))["items"][0]
    render = template_format("jsonpath", "{.kind}:{.items[*].summary.name}")
    assert render(shown) == "List:asg-workers gke-default pending-pool vmss-workers"


def test_custom_columns_respect_no_headers() -> None:
    render = template_format("custom-columns", "NAME:.metadata.name")
    assert render(view()) == "NAME\nasg-workers\ngke-default\npending-pool\nvmss-workers\n"
    assert render(view(no_headers=True)).splitlines() == [
        "asg-workers",
        "gke-default",
        "pending-pool",
        "vmss-workers",
    ]


def test_sort_by_orders_the_pools_for_every_format() -> None:
    ordered = pool_order("{.summary.replicas.available}")(view().pools)
    assert [row.pool.name for row in ordered] == [
        "pending-pool",
        "asg-workers",
        "vmss-workers",
        "gke-default",
    ]
    names = LIST_FORMATS["name"](replace(view(), pools=ordered)).splitlines()
    assert names[0] == "machinepool.cluster.x-k8s.io/pending-pool"


def test_every_template_format_the_cli_offers_renders() -> None:
    templates = {
        "jsonpath": "{.kind}",
        "jsonpath-file": "{.kind}",
        "custom-columns": "KIND:.kind",
        "custom-columns-file": "KIND\n.kind",
    }
    for name in listing.TEMPLATES:
        lines = template_format(name, templates[name])(view()).split()
        assert lines[-1] == "MachinePool" if name.startswith("custom") else lines == ["List"]


def test_docs_show_what_the_template_formats_print(capsys) -> None:
    """docs/list.md's templates section: each example command's output is what it prints."""
    text = section(page("list"), "## list: jsonpath")
    commands = [line.strip() for line in text.splitlines() if line.startswith("    kubectl ")]
    blocks = fenced(text)
    assert len(commands) == len(blocks) == 3
    for command, block in zip(commands, blocks, strict=True):
        argv = shlex.split(command)[2:]
        argv = [str(ROOT / arg) if arg == "examples/" else arg for arg in argv]
        result = run_cli(capsys, *argv)
        assert (result.code, result.err, result.out) == (0, "", block), command


def test_template_files_and_the_flag_pairs_kubectl_refuses(capsys, tmp_path: Path) -> None:
    examples = str(ROOT / "examples")
    at = ("--now", "2026-11-29T15:00:00Z")  # a dump without a capture time warns without it
    template = tmp_path / "names.jsonpath"
    template.write_text('{range .items[*]}{.metadata.name}{"\\n"}{end}')
    spec = tmp_path / "columns.txt"
    spec.write_text("NAME  READY\n.metadata.name  .summary.replicas.ready\n")
    names = run_cli(capsys, "list", "-f", examples, *at, "-o", f"jsonpath-file={template}")
    assert (names.code, names.out) == (0, "asg-workers\neks-default\nvmss-batch\nvmss-workers\n")
    table = run_cli(capsys, "list", "-f", examples, *at, "-o", f"custom-columns-file={spec}")
    assert table.out.splitlines()[:2] == ["NAME           READY", "asg-workers    2"]
    missing = run_cli(capsys, "list", "-f", examples, "-o", f"jsonpath-file={tmp_path}/none")
    assert missing.code == 1
    assert missing.err.startswith(f"error: error reading template {tmp_path}/none: No such file")
    for args, said in [
        (["--show-labels", "-o", "name"], "--show-labels option cannot be used with name printer"),
        (
            ["-L", "env", "-o", "custom-columns=N:.metadata.name"],
            "--label-columns option cannot be used with custom-columns printer",
        ),
    ]:
        refused = run_cli(capsys, "list", "-f", examples, *args)
        assert (refused.code, refused.out) == (2, "")
        assert refused.err.splitlines()[0] == f"error: {said}"
    ignored = run_cli(capsys, "list", "-f", examples, *at, "-L", "env", "-o", "name")
    assert (ignored.code, ignored.err) == (0, "")  # kubectl ignores -L outside tables
