"""A pool named that is not there: kubectl's not found, exit 1, and a hint to the nearest names
among the pools the read listed in that namespace (no request more), on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.run import run_cli

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = ("--now", "2026-11-29T15:00:00Z")


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (
            ["describe", "vmss-workrs", "-n", "capi-prod"],
            [
                'error: machinepools.cluster.x-k8s.io "vmss-workrs" not found in namespace "capi-prod"',
                "hint: did you mean vmss-workers?",
            ],
        ),
        (
            ["diagnose", "asg-wrkers"],
            [
                'error: machinepools.cluster.x-k8s.io "asg-wrkers" not found',
                "hint: did you mean asg-workers?",
            ],
        ),
        (
            ["list", "vmss"],  # the pools it begins, as kubectl offers commands
            [
                'error: machinepools.cluster.x-k8s.io "vmss" not found',
                "hint: did you mean vmss-batch or vmss-workers?",
            ],
        ),
        (
            ["events", "eks-default", "ek-default", "vmss-workrs"],
            [
                'error: machinepools.cluster.x-k8s.io "ek-default", "vmss-workrs" not found',
                "hint: did you mean eks-default or vmss-workers?",
            ],
        ),
        (  # the write commands, planned from the dump: nothing was written
            ["scale", "vmss-workrs", "--replicas", "4", "--dry-run=client"],
            [
                'error: machinepools.cluster.x-k8s.io "vmss-workrs" not found; nothing was written',
                "hint: did you mean vmss-workers?",
            ],
        ),
        (
            ["delete-machine", "--pool", "asg-wrkers", "i-0abc", "--dry-run=client"],
            [
                'error: machinepools.cluster.x-k8s.io "asg-wrkers" not found; nothing was written',
                "hint: did you mean asg-workers?",
            ],
        ),
        (
            ["diff-metadata", "nothing-like-it"],
            ['error: machinepools.cluster.x-k8s.io "nothing-like-it" not found'],
        ),
    ],
)
def test_the_nearest_pool_names_are_offered(
    capsys: pytest.CaptureFixture[str], args: list[str], err: list[str]
) -> None:
    result = run_cli(capsys, *args, "-f", str(EXAMPLES), *NOW)
    assert result.code == 1
    assert result.err.splitlines()[-len(err) :] == err


def test_only_pools_of_the_namespace_asked_are_offered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    documents = yaml.safe_load((EXAMPLES / "azure-vmss.yaml").read_text())
    for item in documents["items"]:
        if item["kind"] == "MachinePool":
            item["metadata"]["namespace"] = "capi-staging"
    dump = tmp_path / "two-namespaces.yaml"
    dump.write_text(yaml.safe_dump(documents))
    args = ["describe", "vmss-w", "-f", str(dump), "-f", str(EXAMPLES / "aws-asg.yaml"), *NOW]
    asked = run_cli(capsys, *args, "-n", "capi-prod")
    assert (
        asked.err.splitlines()[-1]
        == 'error: machinepools.cluster.x-k8s.io "vmss-w" not found in namespace "capi-prod"'
    )
    everywhere = run_cli(capsys, *args)
    assert everywhere.err.splitlines()[-1] == "hint: did you mean vmss-workers?"
