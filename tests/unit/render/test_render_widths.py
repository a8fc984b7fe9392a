"""describe's tree fitted to a terminal's width, on the shipped examples (README's --now).

Goldens: tests/golden/describe/<example>.w<width>.txt; `pytest --update-golden` rewrites them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.objects import NOW

from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.conditions import Condition
from kubectl_machinepool.model.description import Description, describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.table import SEPARATOR
from kubectl_machinepool.render.tree import MESSAGE_MIN, TreeOptions, render_tree, tree_table
from kubectl_machinepool.render.treerows import RowKind, TreeRow, headline
from kubectl_machinepool.render.wrap import NARROWEST, visible_width

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))
WIDTHS = (80, 120, 200)
COLOUR = re.compile("\x1b\\[[0-9;]*m")
# What a summary field, a finding or its continuation starts with before its wrapped text.
PREFIX = re.compile(r"  (ERROR|WARNING|INFO) +MP\d{4}  |  [A-Za-z ]+: +| +")


def example(name: str) -> tuple[Description, tuple[Finding, ...]]:
    """What `describe -f examples/<name>.yaml --now 2026-11-29T15:00:00Z` reads and finds."""
    snapshot = load_dump([str(ROOT / "examples" / f"{name}.yaml")], None)
    description = describe(snapshot, Selection(), NOW)
    capi = capi_version(snapshot, None)
    return description, tuple(diagnose(description, snapshot, capi, Thresholds()))


def rendered(name: str, width: int | None, colour: bool = False) -> str:
    description, findings = example(name)
    opts = TreeOptions(NOW, Palette(colour), findings=findings, width=width)
    return render_tree(description, opts)


def test_there_are_examples() -> None:
    assert EXAMPLES == ["aws-asg", "azure-image-drift", "azure-vmss", "eks-managed"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_without_a_width_the_output_is_what_it_always_was(name: str) -> None:
    assert rendered(name, None) == (ROOT / "tests/golden/describe" / f"{name}.txt").read_text()


def check_fits(text: str, width: int) -> None:
    """Every line fits, except a word with nowhere to break, or a table row that is only a name
    wider than the terminal (names are never cut)."""
    table = False
    for line in text.splitlines():
        if line.split()[:1] == ["NAME"]:
            table = True
        elif not line:
            table = False
        if visible_width(line) <= width:
            continue
        if table:
            assert SEPARATOR not in line.strip(), (
                f"a table row is {visible_width(line)} wide: {line}"
            )
        else:
            prefix = PREFIX.match(line)
            rest = line[prefix.end() :] if prefix else line
            assert " " not in rest, f"a wrappable line is {visible_width(line)} wide: {line}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_tree_at_a_terminal_width(name: str, width: int, golden) -> None:
    text = rendered(name, width)
    golden(f"describe/{name}.w{width}.txt", text)
    check_fits(text, width)
    # Colour changes no line break and no column: codes take no room.
    assert COLOUR.sub("", rendered(name, width, colour=True)) == text


def test_the_message_column_takes_what_the_others_leave() -> None:
    lines = rendered("azure-vmss", 260).splitlines()
    header = next(line for line in lines if line.startswith("NAME "))
    table = lines[lines.index(header) : lines.index("", lines.index(header))]
    assert max(visible_width(line) for line in table) <= 260
    # 98 columns for MESSAGE, more than the 60 of piped output: fewer continuation lines.
    assert 260 - header.index("MESSAGE") == 98
    piped = rendered("azure-vmss", None).splitlines()
    assert len(table) < len(piped[piped.index(header) : piped.index("", piped.index(header))])


def test_names_are_never_cut_and_a_narrow_terminal_stacks_each_row() -> None:
    message = "word " * 20
    cond = Condition("Ready", "False", "Broken", message.strip())
    name = "Machine " + "n" * 70
    root = TreeRow(RowKind.MACHINE, name, headline=headline(cond, NOW), message=message)
    lines = tree_table([root], TreeOptions(NOW, Palette(False), width=40)).splitlines()
    # Only NAME fits (and runs over): what the other columns say follows under the row.
    assert lines[:4] == ["NAME", name, "    condition Ready; status False;", "    reason Broken"]
    assert lines[4:] == ["    word word word word word word word"] * 2 + ["    word" + " word" * 5]
    assert all(visible_width(line) <= 40 for line in lines[2:])


def test_a_narrow_terminal_keeps_the_columns_that_fit_by_importance() -> None:
    lines = rendered("aws-asg", 80).splitlines()
    header = next(line for line in lines if line.startswith("NAME "))
    assert header.split() == ["NAME", "READY", "STATUS", "SINCE"]
    pool = lines.index(next(line for line in lines if "MachinePool capi-prod/asg-workers" in line
                            and line.startswith("└─")))  # fmt: skip
    assert "phase ScalingUp" in lines[pool + 1]
    assert "reason WaitingForReplicasReady" in " ".join(lines[pool + 1 : pool + 3])
    assert MESSAGE_MIN == 30


def test_wide_characters_take_two_columns_in_the_table() -> None:
    rows = [
        TreeRow(RowKind.NODE, "Node 节点", version="v1"),
        TreeRow(RowKind.NODE, "Node abcd", version="v2"),
    ]
    lines = tree_table(rows, TreeOptions(NOW, Palette(False))).splitlines()
    # "节点" is four columns wide, like "abcd": the VERSION cells line up on screen.
    assert visible_width(lines[1].split("v1")[0]) == visible_width(lines[2].split("v2")[0])


def test_a_tiny_width_counts_as_the_narrowest() -> None:
    assert rendered("aws-asg", 0) == rendered("aws-asg", 5) == rendered("aws-asg", NARROWEST)
    check_fits(rendered("aws-asg", NARROWEST), NARROWEST)
