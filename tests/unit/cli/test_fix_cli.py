"""fix on dumps, without a cluster: the plans of the shipped examples (golden, as text and as a
valid document), a forgotten pause of this tool planned as its resume, --rule taking only the
rules this tool's writes remedy, what -f does not take, the completion of --rule, and hostile
names kept to one shell word and escaped on a terminal."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.run import run_cli
from support.scenarios import VARIANTS
from support.snapshots import NAMESPACE

from kubectl_machinepool.app.fixsteps import RUNNERS
from kubectl_machinepool.cli.completion import main as complete
from kubectl_machinepool.diagnostics.rules import RULES

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = "2026-11-29T15:00:00Z"
Obj = dict[str, Any]
pytestmark = pytest.mark.usefixtures("no_cluster")


def _fix(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    return run_cli(capsys, "fix", *args, "--now", NOW)


def _dump(objects: list[Obj], path: Path) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    return str(path)


def test_every_remedy_is_carried_out_by_its_own_command() -> None:
    assert {rule.remedy.command for rule in RULES if rule.remedy} <= set(RUNNERS)


@pytest.mark.parametrize("output", ["table", "json"])
def test_the_examples_plan(capsys, golden, output: str) -> None:
    result = _fix(capsys, "-A", "-f", str(EXAMPLES), "-o", output)
    assert (result.code, result.err) == (0, "")
    if output == "table":
        heading = f"Planned from {EXAMPLES} as at {NOW}: a plan only, nothing is written.\n"
        assert result.out.startswith(heading)
        golden("fix/examples.txt", result.out.removeprefix(heading))
        return
    document = json.loads(result.out)
    assert document["kind"] == "MachinePoolFixPlan"
    assert document["source"] == str(EXAMPLES)
    [step] = document["steps"]
    assert step["command"] == shlex.split(step["commandLine"])
    assert step["result"] is None
    golden("fix/examples.json", result.out.replace(str(EXAMPLES), "examples"))


def test_a_forgotten_pause_is_planned_as_its_resume(capsys, tmp_path: Path) -> None:
    dump = _dump(VARIANTS["capd-paused"]("v1beta2", NAMESPACE), tmp_path / "paused.yaml")
    result = _fix(capsys, "-f", dump, "-o", "yaml")
    assert result.code == 0, result.err
    [step] = yaml.safe_load(result.out)["steps"]
    assert step["commandLine"] == f"kubectl machinepool rollout resume dev-mp-0 -n {NAMESPACE}"
    assert (step["disruptive"], step["rolls"]) == (False, False)
    only = _fix(capsys, "-f", dump, "--rule", "MP1301")
    assert only.code == 0, only.err
    assert only.out.splitlines()[1] == "Fix: no step"
    assert only.err == "Nothing to do: no finding that this tool's writes remedy is planned.\n"


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("MP9999", "error: no rule 'MP9999' for --rule"),
        ("", "error: no rule '' for --rule"),
        ("MP0101", "error: --rule MP0101: its remedy is outside this tool, fix never plans it"),
        ("R1", "error: --rule R1: its remedy is outside this tool, fix never plans it"),
    ],
)
def test_rule_takes_only_what_this_tool_remedies(capsys, rule: str, said: str) -> None:
    result = _fix(capsys, "-A", "-f", str(EXAMPLES), "--rule", rule)
    assert result.code == 2
    assert result.err.splitlines()[0] == said
    assert result.err.splitlines()[1].startswith("hint: kubectl machinepool explain ")


def test_rule_takes_a_rule_for_its_codes_in_any_case(capsys) -> None:
    result = _fix(capsys, "-A", "-f", str(EXAMPLES), "--rule", "r11b", "-o", "json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    codes = {f["code"] for s in document["steps"] for f in s["findings"]}
    codes |= {h["code"] for h in document["heldBack"]}
    assert codes == {"MP1102"}
    assert document["outside"] == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("-f", str(EXAMPLES), "--dry-run=server"), "error: --dry-run=server sends each write"),
        ((), "error: --now reads a dump as at a time: it needs -f"),
    ],
)
def test_what_fix_does_not_take(capsys, args: tuple[str, ...], said: str) -> None:
    result = _fix(capsys, "-A", *args)
    assert result.code == 2
    assert result.err.startswith(said)


def test_rule_completes_the_codes_this_tool_remedies(capsys) -> None:
    complete(["fix", "--rule", "mp1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[:-1] == [
        f"{r.code}\t{r.title}: {r.remedy.command}"
        for r in RULES
        if r.remedy and r.code.startswith("MP1")
    ]
    assert "MP1301\tVersion and image disagree: upgrade" in lines


def test_hostile_names_stay_one_word_and_are_escaped(capsys, tmp_path: Path) -> None:
    objects = VARIANTS["capd-paused"]("v1beta2", NAMESPACE)
    text = json.dumps(objects).replace("dev-mp-0", "dev mp\\u001b[2J")
    dump = _dump(json.loads(text), tmp_path / "hostile.yaml")
    shown = _fix(capsys, "-f", dump)
    assert shown.code == 0, shown.err
    assert "\x1b" not in shown.out
    assert f"rollout resume 'dev mp\\x1b[2J' -n {NAMESPACE}" in shown.out
    document = json.loads(_fix(capsys, "-f", dump, "-o", "json").out)
    assert document["steps"][0]["command"][4] == "dev mp\x1b[2J"


def test_the_page_shows_what_fix_plans_from_the_examples(capsys, monkeypatch) -> None:
    from support.docs import ROOT, fenced, page, section

    text = section(page("fix"), "## The plan")
    command = next(line.strip() for line in text.splitlines() if line.startswith("    kubectl "))
    monkeypatch.chdir(ROOT)
    result = run_cli(capsys, *shlex.split(command)[2:])
    assert (result.code, result.err) == (0, "")
    assert fenced(text)[0] == result.out
