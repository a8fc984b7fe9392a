"""`rollout status` on dumps: kubectl's lines and exit codes, the document, hostile text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from support import rollouts
from support.docs import fenced, page
from support.run import run_cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = "2026-11-29T15:00:00Z"


pytestmark = pytest.mark.usefixtures("no_cluster")


def test_a_rolled_out_pool_says_so_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "rollout", "status", "-f", str(EXAMPLES / "eks-managed.yaml"))
    assert result.code == 0, result.err
    assert (
        result.out.splitlines()[-1] == 'MachinePool "capi-prod/eks-default" successfully rolled out'
    )
    assert (
        "  Instances:    3 of 3 up to date and Ready; 3 up to date, 0 old, 0 unknown" in result.out
    )


def test_a_rollout_in_progress_shows_its_old_instance(capsys: pytest.CaptureFixture[str]) -> None:
    """19 minutes after the last change, with --stuck-after 1h: in progress, reported once."""
    dump = str(EXAMPLES / "azure-vmss.yaml")
    result = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW, "--stuck-after", "1h")
    assert result.code == 0, result.err
    assert (
        "    old        vmss-workers-0  kubelet v1.32.9, target v1.33.4; latestModelApplied=false"
        in result.out
    )
    assert result.out.splitlines()[-1] == (
        'Waiting for MachinePool "capi-prod/vmss-workers" rollout to finish: '
        "1 of 3 instances up to date and Ready, 1 old..."
    )


def test_a_stuck_rollout_exits_1_naming_the_findings(capsys: pytest.CaptureFixture[str]) -> None:
    dump = str(EXAMPLES / "azure-image-drift.yaml")
    result = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW)
    assert result.code == 1
    error = result.err.splitlines()[0]
    assert error.startswith(
        'error: MachinePool "capi-prod/vmss-batch" rollout is stuck: nothing moved for 9d'
    )
    assert "MP1301 (" in error  # the image and the version disagree: why it cannot finish


def test_the_document_says_how_it_ended(capsys: pytest.CaptureFixture[str]) -> None:
    dump = str(EXAMPLES / "azure-vmss.yaml")
    args = ["rollout", "status", "-f", dump, "--now", NOW, "--stuck-after", "1h", "-o", "json"]
    result = run_cli(capsys, *args)
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert (document["kind"], document["end"]) == ("RolloutStatus", "reported")
    (pool,) = document["pools"]
    assert pool["counts"] == {
        "desired": 3,
        "upToDateAndReady": 1,
        "upToDate": 2,
        "old": 1,
        "unknown": 0,
    }
    assert [i["state"] for i in pool["instances"]].count("old") == 1


def test_a_name_or_scope_is_required_live(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "rollout", "status")
    assert result.code == 2
    assert result.err.startswith("error: name at least one MachinePool")


@pytest.mark.parametrize("flag", ["-w=false", "--watch=false", "--watch=0"])
def test_kubectl_spellings_of_watch_false(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    result = run_cli(capsys, "rollout", "status", "-f", str(EXAMPLES / "eks-managed.yaml"), flag)
    assert result.code == 0, result.err


def test_hostile_text_is_escaped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all((EXAMPLES / "azure-vmss.yaml").read_text()))
    for doc in documents:
        for item in doc.get("items", [doc]):
            if item.get("kind") == "Node":
                item["status"]["nodeInfo"]["kubeletVersion"] = "v1.32.9\x1b]0;pwned\x07"
    dump = tmp_path / "hostile.yaml"
    dump.write_text(yaml.safe_dump_all(documents))
    result = run_cli(
        capsys, "rollout", "status", "-f", str(dump), "--now", NOW, "--stuck-after", "1h"
    )
    assert "\x1b" not in result.out + result.err
    assert "\\x1b]0;pwned\\x07" in result.out


def test_docs_show_what_the_command_prints(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = fenced(page("rollout-status"))
    dump = str(EXAMPLES / "azure-vmss.yaml")
    shown = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW, "--stuck-after", "1h")
    stuck = run_cli(
        capsys, "rollout", "status", "-f", str(EXAMPLES / "azure-image-drift.yaml"), "--now", NOW
    )
    assert blocks == [shown.out, stuck.err]


def test_w_takes_no_value_after_a_space(capsys: pytest.CaptureFixture[str]) -> None:
    """As pflag's booleans: `-w NAME` is the flag and a pool name, not a value for -w."""
    dump = str(EXAMPLES / "eks-managed.yaml")
    result = run_cli(capsys, "rollout", "status", "-w", "eks-default", "-f", dump)
    assert result.code == 0, result.err
    assert "eks-default" in result.out


@pytest.mark.parametrize(
    ("given", "spelled"),
    [("-w=false", "--no-watch"), ("--watch=0", "--no-watch"), ("-w=true", "--watch"), ("-w", "-w")],
)
def test_attached_values_become_the_flag_pair(given: str, spelled: str) -> None:
    from kubectl_machinepool.cli import pflag
    from kubectl_machinepool.cli.commands.rollout import status_command

    assert pflag.spelled(status_command, [given], resilient=False) == [spelled]


def test_a_value_that_is_not_a_boolean_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "rollout", "status", "x", "-w=maybe")
    assert result.code == 2
    assert result.err.startswith("error: invalid value 'maybe' for -w")


@pytest.mark.parametrize("how", ["cluster", "pool", "infra"])
def test_a_paused_rollout_reported_once_is_paused_and_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, how: str
) -> None:
    """kubectl never judges a paused rollout against its deadline: paused, not done, exit 0."""
    objects = rollouts.objects_of("azure-vmss", "v1beta2")
    rollouts.pause(objects, how)
    dump = rollouts.dump(objects, tmp_path / "paused.yaml")
    text = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW)
    assert text.code == 0, text.err
    assert "  State:        paused by " in text.out
    assert text.out.splitlines()[-1].startswith(
        'Waiting for MachinePool "capi-prod/vmss-workers" rollout: paused by '
    )
    document = json.loads(
        run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW, "-o", "json").out
    )
    [pool] = document["pools"]
    assert (document["end"], pool["state"], pool["stuck"]) == ("reported", "paused", False)
    assert pool["holding"] == ["vmss-workers-2", "vmss-workers-0"]


def test_the_same_rollout_unpaused_is_stuck_naming_what_holds_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dump = rollouts.dump(rollouts.objects_of("azure-vmss", "v1beta2"), tmp_path / "stuck.yaml")
    result = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW)
    assert result.code == 1
    assert (
        "held by vmss-workers-2 (up-to-date; Node not Ready (KubeletNotReady)), "
        "vmss-workers-0 (old)" in result.err
    )


def test_a_surge_instance_that_never_joined_is_counted_and_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    objects = rollouts.objects_of("aws-asg", "v1beta2", healthy=True)
    rollouts.upgrade(objects)
    pid = rollouts.asg_surge(objects, joined_minutes=None, recorded=False)
    dump = rollouts.dump(objects, tmp_path / "surge.yaml")
    result = run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW)
    assert result.code == 1
    assert (
        "  Instances:    0 of 3 up to date and Ready; 0 up to date, 3 old, 1 unknown" in result.out
    )
    assert f"{pid} (unknown; no Node; not in the MachinePool's spec.providerIDList)" in result.err
    assert "MP1102 (" in result.err
    document = json.loads(
        run_cli(capsys, "rollout", "status", "-f", dump, "--now", NOW, "-o", "json").out
    )
    [pool] = document["pools"]
    assert (pool["state"], pool["holding"][0]) == ("stuck", pid)
