"""--ignore-owner on every write command, planned from the shipped examples with their pool
tracked by an Argo CD Application that self-heals: refused (exit 3) with the owner named and its
one command, a warning the plan keeps with the flag; and completion knows the flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from support.ownerobjects import owner_object
from support.run import Result, run_cli

from kubectl_machinepool.cli.completion import main as complete

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = "2026-11-29T15:00:00Z"
TRACKING = "prod-pools:cluster.x-k8s.io/MachinePool:capi-prod/vmss-workers"
WRITES = [
    ["scale", "vmss-workers", "--replicas", "5"],
    ["upgrade", "vmss-workers", "--version", "v1.34.1", "--force"],
    ["delete-machine", "vmss-workers-1", "--scale-down"],
]
COMMANDS = [
    ["upgrade"],
    ["scale"],
    ["rollout", "pause"],
    ["rollout", "resume"],
    ["rollout", "restart"],
    ["delete-machine"],
]


@pytest.fixture
def tracked(tmp_path: Path) -> Path:
    """examples/azure-vmss.yaml, its vmss-workers applied by Argo CD Application prod-pools
    (tracked without a namespace: Argo CD's own), which the dump holds."""
    dump: dict[str, Any] = yaml.safe_load((EXAMPLES / "azure-vmss.yaml").read_text())
    for obj in dump["items"]:
        if obj["kind"] == "MachinePool" and obj["metadata"]["name"] == "vmss-workers":
            annotations = obj["metadata"].setdefault("annotations", {})
            annotations["argocd.argoproj.io/tracking-id"] = TRACKING
    app = owner_object("Application")
    app["metadata"]["namespace"] = "argocd"
    dump["items"].append(app)
    path = tmp_path / "azure-vmss.yaml"
    path.write_text(yaml.safe_dump(dump))
    return path


def planned(capsys: pytest.CaptureFixture[str], args: list[str], dump: Path) -> Result:
    source = ["-n", "capi-prod", "-f", str(dump), "--now", NOW, "--dry-run=client"]
    return run_cli(capsys, *args, *source)


@pytest.mark.parametrize("args", WRITES, ids=[w[0] for w in WRITES])
def test_a_write_a_self_healing_application_reverts_is_refused_and_ignore_owner_goes_ahead(
    args: list[str], tracked: Path, no_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = planned(capsys, args, tracked)
    assert refused.code == 3, refused.err
    said = " ".join(refused.err.split())
    assert "applied by Argo CD Application prod-pools" in said
    assert "a self-heal sync reverts this write" in said
    assert "argocd app set argocd/prod-pools --sync-policy manual" in said
    assert said.rstrip().endswith("nothing was written")
    going = planned(capsys, [*args, "--ignore-owner"], tracked)
    assert going.code == 0, going.err
    plan = " ".join(going.out.split())
    assert "(--ignore-owner: writing anyway; change it in git" in plan
    assert "(dry run)" in going.out


def test_a_pause_adds_keys_no_manifest_holds_and_is_not_refused(
    tracked: Path, no_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    done = planned(capsys, ["rollout", "pause", "vmss-workers"], tracked)
    assert done.code == 0, done.err
    assert "Argo CD" not in done.out


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_completion_knows_ignore_owner(
    command: list[str], no_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    complete([*command, "--ign"])
    assert capsys.readouterr().out.splitlines() == ["--ignore-owner\tWrite fields a GitOps owner "
        "(Argo CD, Flux) applies and may revert; the plan keeps the warning", ":4"]  # fmt: skip
