"""scale's sizes are spec.replicas's, an int32: above it or below 0 a usage error before anything
is read; the largest one plans at once (its zones projected a level at a time)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.run import run_cli

EXAMPLES = str(Path(__file__).resolve().parents[3] / "examples")
NOW = "2026-11-29T15:00:00Z"


@pytest.mark.parametrize("flag", ["--replicas", "--current-replicas"])
@pytest.mark.parametrize("size", ["2147483648", "-1"])
def test_a_size_spec_replicas_cannot_hold_is_a_usage_error(capsys, flag: str, size: str) -> None:
    sizes = {"--replicas": "5", flag: size}
    args = [arg for pair in sizes.items() for arg in pair]
    result = run_cli(capsys, "scale", "vmss-workers", *args, "-f", EXAMPLES, "--dry-run=client")
    assert result.code == 2
    assert result.err.splitlines() == [
        f"error: invalid value for '{flag}': {size} is not in the range 0<=x<=2147483647",
        "hint: see 'kubectl machinepool scale --help'",
    ]


def test_the_largest_size_plans(capsys) -> None:
    result = run_cli(
        capsys, "scale", "vmss-workers", "-n", "capi-prod", "--replicas", "2147483647",
        "-f", EXAMPLES, "--now", NOW, "--dry-run=client",
    )  # fmt: skip
    assert result.code == 0, result.err
    said = " ".join(result.out.split())
    assert "from 3 to 2147483647 replicas" in said
    assert "1=1 -> 715827883, 2=1 -> 715827882, 3=1 -> 715827882" in said


def test_a_refusal_among_several_pools_names_its_pool(capsys) -> None:
    result = run_cli(
        capsys, "scale", "eks-default", "asg-workers", "--replicas", "50", "-f", EXAMPLES,
        "--now", "2026-11-29T15:00:00Z", "--dry-run=client",
    )  # fmt: skip
    assert result.code == 3
    assert result.err.startswith("error: refused: MachinePool eks-default: 50 is above its maximum")
    one = run_cli(capsys, "scale", "eks-default", "--replicas", "50", "-f", EXAMPLES,
                  "--now", "2026-11-29T15:00:00Z", "--dry-run=client")  # fmt: skip
    assert one.err.startswith("error: refused: 50 is above its maximum")
