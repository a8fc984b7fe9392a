"""The example dumps in examples/ and the offline CLI that reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.run import run_cli
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE

from kubectl_machinepool.diagnostics.rules import BY_CODE

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {
    "aws-asg": "aws-asg.yaml",
    "azure-image-drift": "azure-image-drift.yaml",
    "azure-vmss": "azure-vmss.yaml",
    "eks-managed": "eks-managed.yaml",
}
GOLDEN = ROOT / "tests" / "golden"
NOW = "2026-11-29T15:00:00Z"


def dump(scenario: str) -> str:
    """What `kubectl get clusters,machinepools,...,nodes -o yaml` prints for the scenario."""
    header = (
        f"# {SCENARIOS[scenario].__doc__.splitlines()[0]}\n"
        f"# kubectl machinepool describe -f examples/{EXAMPLES[scenario]} --now {NOW}\n"
    )
    items = SCENARIOS[scenario]("v1beta2", NAMESPACE)
    return header + yaml.safe_dump(
        {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}},
        sort_keys=False,
    )


@pytest.mark.parametrize("scenario", sorted(EXAMPLES))
def test_examples_are_the_scenarios(scenario: str, request: pytest.FixtureRequest) -> None:
    path = ROOT / "examples" / EXAMPLES[scenario]
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(dump(scenario))
    assert path.read_text() == dump(scenario), "run pytest --update-golden"


@pytest.mark.parametrize("scenario", sorted(EXAMPLES))
def test_describe_an_example_offline(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(
        capsys, "describe", "-f", str(ROOT / "examples" / EXAMPLES[scenario]), "--now", NOW
    )
    assert (result.code, result.err) == (0, "")
    assert result.out == (GOLDEN / "describe" / f"{scenario}.txt").read_text()


def test_list_offline_reads_every_namespace(capsys: pytest.CaptureFixture[str], golden) -> None:
    files = [
        arg for name in sorted(EXAMPLES.values()) for arg in ("-f", str(ROOT / "examples" / name))
    ]
    result = run_cli(capsys, "list", *files, "--now", NOW, "-o", "wide")
    assert result.code == 0
    golden("list/examples-wide.txt", result.out)


def test_offline_selection_and_not_found(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(ROOT / "examples" / "aws-asg.yaml")
    assert run_cli(capsys, "describe", "-f", example, "asg-workers", "-o", "json").code == 0
    missing = run_cli(capsys, "describe", "-f", example, "nope", "--now", NOW)
    assert (missing.code, missing.err) == (
        1,
        'error: machinepools.cluster.x-k8s.io "nope" not found\n',
    )
    other_ns = run_cli(capsys, "describe", "-f", example, "-n", "elsewhere", "--now", NOW)
    assert (other_ns.code, other_ns.err) == (0, "No resources found in elsewhere namespace.\n")
    bad_now = run_cli(capsys, "describe", "-f", example, "--now", "yesterday")
    assert bad_now.code == 2
    assert "invalid value 'yesterday' for --now" in bad_now.err


def test_describe_reports_each_missing_name_after_printing_the_others(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(
        capsys, "describe", "asg-workers", "typo-pool", "-f", str(ROOT / "examples"), "--now", NOW
    )
    assert result.code == 1
    assert "MachinePool capi-prod/asg-workers" in result.out
    assert result.err == 'error: machinepools.cluster.x-k8s.io "typo-pool" not found\n'


def test_structured_output_even_when_nothing_matches(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    examples = str(ROOT / "examples")
    result = run_cli(capsys, "describe", "-l", "nope=1", "-f", examples, "-o", "json", "--now", NOW)
    assert (result.code, result.err) == (0, "No resources found.\n")
    assert json.loads(result.out)["clusters"] == []
    # A Cluster named that is not there is not found, as a pool would be: after the document.
    result = run_cli(
        capsys, "describe", "--cluster", "nope", "-f", examples, "-o", "json", "--now", NOW
    )
    assert (result.code, result.err) == (1, 'error: clusters.cluster.x-k8s.io "nope" not found\n')
    assert json.loads(result.out)["clusters"] == []


def test_diagnose_the_stuck_aws_pool_dump(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    result = run_cli(
        capsys,
        "diagnose",
        "-f",
        str(ROOT / "examples" / "aws-asg.yaml"),
        "--now",
        NOW,
        "-o",
        "json",
    )
    assert result.code == 0
    [finding] = [f for f in json.loads(result.out)["findings"] if f["code"] == "MP0101"]
    assert "kubernetes-sigs/cluster-api#10541" in finding["refs"]
    assert "aws:///eu-west-1c/i-000000000003a5f12" in finding["message"]


def test_diagnose_text_of_the_examples(capsys: pytest.CaptureFixture[str], golden) -> None:
    result = run_cli(capsys, "diagnose", "-f", str(ROOT / "examples"), "--now", NOW)
    assert result.code == 0
    golden("diagnose/examples.txt", result.out)
    assert (
        run_cli(
            capsys, "diagnose", "-f", str(ROOT / "examples"), "--now", NOW, "--fail-on", "warning"
        ).code
        == 4
    )


def test_explain(capsys: pytest.CaptureFixture[str], golden) -> None:
    golden("diagnose/explain-MP0501.txt", run_cli(capsys, "explain", "mp0501").out)
    assert run_cli(capsys, "explain", "R1a").out.startswith("MP0101 (R1a)")
    listing = run_cli(capsys, "explain", "--list").out.splitlines()
    assert listing[0].split() == ["CODE", "RULE", "SEVERITY", "TITLE"]
    assert len(listing) == 1 + len(BY_CODE)  # every code, under the header
    missing = run_cli(capsys, "explain", "MP9999")
    assert (missing.code, missing.err.splitlines()[0]) == (1, "error: no rule MP9999")
