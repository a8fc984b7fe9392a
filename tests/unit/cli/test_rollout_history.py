"""`rollout history` on dumps: the table, one revision in full, the document, a pool with none,
a hostile annotation (exit 1 with the reason, never a traceback), and the revision numbers
completion offers."""

from __future__ import annotations

import json

import pytest
from support.docs import fenced, page
from support.revisions import vmss_dump
from support.run import run_cli

from kubectl_machinepool.cli.completion import main as complete

pytestmark = pytest.mark.usefixtures("no_cluster")

TABLE = """\
machinepool.cluster.x-k8s.io/vmss-workers
REVISION   CHANGE-CAUSE                CHANGES                                                                 RECORDED               TOOL
1          upgrade --version v1.33.4   version v1.32.9 -> v1.33.4; AzureMachinePool version 1.32.9 -> 1.33.4   2026-11-20T10:00:00Z   0.1.0
2          scale --replicas 3          replicas 2 -> 3                                                         2026-11-21T10:00:00Z   0.1.0
3          rollout restart             restart begun 2026-11-22T10:00:00Z                                      2026-11-22T10:00:00Z   0.1.0
"""


def test_one_row_per_revision(capsys, tmp_path) -> None:
    result = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", vmss_dump(tmp_path))
    assert (result.code, result.err, result.out) == (0, "", TABLE)


def test_the_page_shows_what_the_command_prints() -> None:
    block = fenced(page("rollout-history"))[0]
    assert block == "$ kubectl machinepool rollout history vmss-workers -n capi-prod\n" + TABLE


def test_one_revision_in_full(capsys, tmp_path) -> None:
    dump = vmss_dump(tmp_path)
    result = run_cli(capsys, "rollout", "history", "mp/vmss-workers", "-f", dump, "--revision", "1")
    assert (result.code, result.err) == (0, "")
    assert result.out == (
        "machinepool.cluster.x-k8s.io/vmss-workers with revision #1\n"
        "Cause:     upgrade --version v1.33.4\n"
        "Recorded:  2026-11-20T10:00:00Z by kubectl-machinepool 0.1.0\n"
        "Changes:\n"
        "  MachinePool vmss-workers spec.template.spec.version: v1.32.9 -> v1.33.4\n"
        "  AzureMachinePool vmss-workers spec.template.image.computeGallery.version: 1.32.9 -> "
        "1.33.4\n"
    )
    missing = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump, "--revision", "7")
    assert missing.code == 1
    assert missing.err.startswith(
        "error: revision 7 is not in the history of MachinePool capi-prod/vmss-workers: it "
        "keeps 1, 2, 3\n"
    )


def test_the_document_holds_every_value_exactly(capsys, tmp_path) -> None:
    dump = vmss_dump(tmp_path)
    result = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump, "-o", "json")
    document = json.loads(result.out)
    assert document["machinePool"] == {"namespace": "capi-prod", "name": "vmss-workers"}
    assert [r["revision"] for r in document["revisions"]] == [1, 2, 3]
    assert document["revisions"][1]["changes"] == [
        {
            "kind": "MachinePool",
            "group": "cluster.x-k8s.io",
            "name": "vmss-workers",
            "path": "spec.replicas",
            "before": 2,
            "after": 3,
        }
    ]


def test_a_pool_with_none_says_so_in_one_line(capsys) -> None:
    from support.revisions import EXAMPLES

    dump = str(EXAMPLES / "azure-vmss.yaml")
    result = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump)
    assert (result.code, result.err) == (0, "")
    assert result.out == "machinepool.cluster.x-k8s.io/vmss-workers: no revisions recorded\n"
    document = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump, "-o", "yaml")
    assert "revisions: []\n" in document.out


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("not json \x1b]0;x\x07", "it is not JSON"),
        ("x" * 40_000, "it is 40000 bytes, over the cap of 32768"),
        (
            '{"format":1,"revisions":[{"revision":-1}]}',
            "a revision is not an object of exactly at, cause, changes, revision, tool",
        ),
    ],
)
def test_a_hostile_annotation_is_no_usable_history(capsys, tmp_path, value, reason) -> None:
    dump = vmss_dump(tmp_path, value)
    result = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump)
    assert (result.code, result.out) == (1, "")
    error, hint = result.err.splitlines()
    assert error == (
        "error: MachinePool capi-prod/vmss-workers holds no usable revision history: " + reason
    )
    assert hint.startswith("hint: its kubectl-machinepool/revisions annotation is not as this")
    assert "\x1b" not in result.err


def test_one_pool_by_name(capsys, tmp_path) -> None:
    dump = vmss_dump(tmp_path)
    result = run_cli(capsys, "rollout", "history", "vmss-workers", "-f", dump, "-A")
    assert result.code == 2
    assert result.err.startswith("error: unknown shorthand flag: 'A' in -A")
    missing = run_cli(capsys, "rollout", "history", "nope", "-f", dump)
    assert (missing.code, missing.err.splitlines()[0]) == (
        1,
        'error: machinepools.cluster.x-k8s.io "nope" not found',
    )


def test_completion_offers_the_pool_s_revisions_newest_first(capsys, tmp_path) -> None:
    dump = vmss_dump(tmp_path)
    complete(["rollout", "history", "vmss-workers", "-f", dump, "--revision", ""])
    assert capsys.readouterr().out.splitlines() == [
        "3\trollout restart",
        "2\tscale --replicas 3",
        "1\tupgrade --version v1.33.4",
        ":4",
    ]
    complete(["rollout", "history", "-f", dump, "--revision", ""])
    assert capsys.readouterr().out.splitlines() == [":4"]
