"""--ignore and the config file on the command line, over the shipped examples: what is left out,
the line that counts it, the documents that carry the count, and --fail-on."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from support.run import Result, run_cli

EXAMPLES = str(Path(__file__).resolve().parents[3] / "examples")
NOW = "2026-11-29T15:00:00Z"
SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)
CONFIG = """\
ignore:
  - rule: MP1801                  # both pools' autoscaler notes
  - rule: MP1102
    cluster: capi-prod/batch
thresholds:
  scalingGrace: 5m
"""


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config file, where XDG puts it under a scratch HOME (shown there as ~/...)."""
    path = tmp_path / ".config" / "kubectl-machinepool" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(CONFIG)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    return run_cli(capsys, *args, "-f", EXAMPLES, "--now", NOW)


def codes(document: dict) -> list[str]:
    return [f["code"] for f in document["findings"]]


def test_diagnose_leaves_ignored_rules_out_and_counts_them(capsys) -> None:
    before = run(capsys, "diagnose", "-o", "json")
    after = run(capsys, "diagnose", "--ignore", "MP1102", "--ignore", "mp1801,MP0703")
    assert after.code == 0
    for code in ("MP1102", "MP1801", "MP0703"):
        assert code in before.out
        assert code not in after.out
    left_out = sum(c in ("MP1102", "MP1801", "MP0703") for c in codes(json.loads(before.out)))
    assert after.out.splitlines()[-1] == f"{left_out} findings ignored (--ignore)"


def test_the_config_file_is_named_in_the_count_after_ignore(capsys, config: Path) -> None:
    result = run(capsys, "diagnose", "--ignore", "MP0703")
    assert result.code == 0
    # MP1801 twice, batch's MP1102 (prod's stays), MP0703 once.
    assert result.out.splitlines()[-1] == (
        "4 findings ignored (--ignore, ~/.config/kubectl-machinepool/config.yaml)"
    )
    assert "MP1102" in result.out


def test_the_documents_carry_the_count(capsys, config: Path) -> None:
    diagnosis = json.loads(run(capsys, "diagnose", "-o", "json").out)
    assert diagnosis["ignoredFindings"] == {
        "count": 3,
        "sources": ["~/.config/kubectl-machinepool/config.yaml"],
    }
    assert "MP1801" not in codes(diagnosis)
    # The file's scalingGrace, and a flag wins over it.
    assert diagnosis["thresholdSeconds"]["scaling"] == 300
    flagged = json.loads(run(capsys, "diagnose", "-o", "json", "--scaling-grace", "1m").out)
    assert flagged["thresholdSeconds"]["scaling"] == 60
    description = json.loads(run(capsys, "describe", "-o", "json").out)
    jsonschema.validate(description, SCHEMA)
    assert description["ignoredFindings"]["count"] == 3
    assert codes(description) == codes(diagnosis)


def test_without_ignores_the_documents_say_none(capsys) -> None:
    description = json.loads(run(capsys, "describe", "-o", "json").out)
    jsonschema.validate(description, SCHEMA)
    assert description["ignoredFindings"] == {"count": 0, "sources": []}
    text = run(capsys, "diagnose")
    assert "ignored" not in text.out


def test_describe_counts_them_under_the_tree(capsys) -> None:
    result = run(capsys, "describe", "--ignore", "MP1801")
    assert result.code == 0
    assert "MP1801" not in result.out
    assert result.out.splitlines()[-1] == "2 findings ignored (--ignore)"


def test_fail_on_does_not_fail_on_ignored_findings_and_says_so(capsys) -> None:
    every = json.loads(run(capsys, "diagnose", "-o", "json").out)
    warnings = sorted({f["code"] for f in every["findings"] if f["severity"] != "info"})
    assert run(capsys, "diagnose", "--fail-on", "warning").code == 4
    result = run(capsys, "diagnose", "--fail-on", "warning", "--ignore", ",".join(warnings))
    assert result.code == 0
    count = sum(1 for f in every["findings"] if f["severity"] != "info")
    assert (
        f"{count} ignored finding(s) at or above warning do not count for --fail-on" in result.err
    )
    # Some accepted, some not: the run fails on the rest, and says what it did not count.
    result = run(capsys, "diagnose", "--fail-on", "warning", "--ignore", "MP1102")
    assert result.code == 4
    assert "2 ignored finding(s) at or above warning do not count for --fail-on" in result.err
    assert f"error: {count - 2} finding(s) at or above warning (--fail-on)" in result.err


def test_an_unknown_rule_is_a_usage_error_with_close_matches(capsys) -> None:
    result = run(capsys, "diagnose", "--ignore", "MP1103")
    assert result.code == 2
    assert result.err.splitlines()[0] == "error: no rule MP1103 for --ignore"
    assert result.err.splitlines()[1].startswith("hint: did you mean MP1102, MP1101")
    assert result.out == ""


def test_a_malformed_config_is_one_error_naming_its_line(capsys, config: Path) -> None:
    config.write_text(CONFIG.replace("cluster: capi-prod/batch", "cluster: batch"))
    for command in ("diagnose", "describe"):
        result = run(capsys, command)
        assert result.code == 1
        assert result.err.splitlines()[0] == (
            "error: ~/.config/kubectl-machinepool/config.yaml:4: ignore[1].cluster: expected "
            "namespace/name, e.g. capi-prod/prod, found 'batch'"
        )
        assert result.err.splitlines()[1].startswith("hint: fix the file, or set ")
        assert "Traceback" not in result.err


def test_the_config_can_be_turned_off(capsys, config: Path, monkeypatch) -> None:
    config.write_text("not: [valid\n")
    monkeypatch.setenv("KUBECTL_MACHINEPOOL_CONFIG", "off")
    result = run(capsys, "diagnose")
    assert result.code == 0
    assert "MP1801" in result.out


def test_rollout_status_leaves_ignored_findings_out(capsys) -> None:
    shown = run(capsys, "rollout", "status", "-w=false", "-o", "json")
    assert "MP1102" in shown.out
    quiet = run(capsys, "rollout", "status", "-w=false", "-o", "json", "--ignore", "MP1102")
    assert quiet.code == shown.code
    assert "MP1102" not in quiet.out
