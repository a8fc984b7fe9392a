"""Wrapping by terminal columns, and the text renderers that wrap: plan, diagnosis, metadata diff."""

from __future__ import annotations

import re
import textwrap
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.propagation import SyncRules, propagation
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Request, Wanted, find_target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Disruption
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.deleteplan import render_plan
from kubectl_machinepool.render.findings import DiagnosisView, render_diagnosis
from kubectl_machinepool.render.glyphs import ASCII, UNICODE
from kubectl_machinepool.render.propagation import render_propagation
from kubectl_machinepool.render.wrap import NARROWEST, visible_width, wrap

COLOUR = re.compile("\x1b\\[[0-9;]*m")
WORDS = st.lists(
    st.sampled_from(["a", "bb", "ccc", "x" * 30, "", " ", "a-b", "-", "y" * 12]), max_size=14
)


def plain(text: str) -> str:
    return COLOUR.sub("", text)


@settings(max_examples=400, deadline=None)
@given(
    words=WORDS,
    width=st.integers(1, 40),
    first=st.sampled_from(["", " ", "  x ", "abcdefghij "]),
    rest=st.sampled_from(["", " ", "    "]),
    cut=st.booleans(),
)
def test_plain_text_wraps_exactly_as_textwrap_did(
    words: list[str], width: int, first: str, rest: str, cut: bool
) -> None:
    # Byte-identical output without a width rests on this: every golden was made by textwrap.
    if len(first) >= width or len(rest) >= width:
        return  # textwrap loops for ever on some of these (see the next test)
    text = " ".join(words)
    expected = textwrap.wrap(
        text,
        width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=cut,
        break_on_hyphens=False,
    )
    assert wrap(text, width, first, rest, break_long_words=cut) == expected


def test_an_indent_wider_than_the_width_still_ends() -> None:
    # textwrap.wrap("  x", 3, initial_indent="abcdefghij ", break_long_words=True) never returns:
    # with a terminal's width an indent can be wider than the line.
    assert wrap("  x", 3, "abcdefghij ", break_long_words=True) == ["abcdefghij x"]
    assert wrap("one two", 2, "  warning  ") == ["  warning  one", "two"]


def test_colour_codes_take_no_columns_and_wide_characters_two() -> None:
    assert visible_width("\x1b[32mok\x1b[0m") == 2
    assert visible_width("节点") == 4
    assert visible_width("e\u0301") == 1  # a combining accent
    lines = wrap("节点 没有 就绪 状态 报告", 9)
    assert lines == ["节点 没有", "就绪 状态", "报告"]
    assert all(visible_width(line) <= 9 for line in lines)
    coloured = wrap("one two three four", 14, "\x1b[31mab\x1b[0m ")
    assert [plain(line) for line in coloured] == ["ab one two", "three four"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", " ", "├", "─", "✓", "节", "\u0301", "\u200b", "é", "\x1b[31m"])
    ).map("".join)
)
def test_the_width_is_each_characters_width_summed(text: str) -> None:
    """Counting only the non-ASCII runs gives what counting every character gives."""
    import unicodedata

    def width(char: str) -> int:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            return 0
        return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1

    assert visible_width(text) == sum(width(c) for c in plain(text))


def _capd_plan() -> Any:
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    [target] = find_target(description, snapshot, Wanted(machine="dev-mp-0-x7q2p"))
    request = Request(Mode.SCALE_DOWN)
    allowed = {w.access: True for w in writes_for(target, request, NOW)}
    return plan_deletion(target, request, NOW, allowed, Disruption(()))


def test_a_coloured_plan_wraps_where_a_plain_one_does(golden) -> None:
    # Defect: the coloured "warning" label's escape codes counted as columns, so the drain
    # timeout check broke a line early (at "stalls") only when colour was on.
    p = _capd_plan()
    coloured = render_plan(p, Palette(True))
    assert "\x1b[33mwarning\x1b[0m" in coloured
    assert plain(coloured) == render_plan(p, Palette(False))
    golden("delete-machine/capd-scale-down.txt", plain(coloured))


def test_the_plan_wraps_at_the_width_given() -> None:
    p = _capd_plan()
    for width in (60, 80):
        text = render_plan(p, Palette(True), width=width)
        # Long words are cut in the plan, so no line is wider, coloured or not.
        assert max(visible_width(line) for line in text.splitlines()) <= width
        assert plain(text) == render_plan(p, Palette(False), width=width)
    assert render_plan(p, Palette(False), width=None) == render_plan(p, Palette(False))


def _diagnosis(palette: Palette) -> DiagnosisView:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE))
    description = describe(snapshot, Selection(), NOW)
    capi = capi_version(snapshot, None)
    findings = diagnose(description, snapshot, capi, Thresholds())
    return DiagnosisView(description, findings, capi, Thresholds(), palette)


def test_the_diagnosis_wraps_at_the_width_given() -> None:
    width = 60
    text = render_diagnosis(_diagnosis(Palette(True)), width=width)
    assert plain(text) == render_diagnosis(_diagnosis(Palette(False)), width=width)
    for line in plain(text).splitlines():
        # Longer only for one word that has nowhere to break: a providerID, a URL.
        assert visible_width(line) <= width or " " not in line.strip(), line
    narrow = plain(text).splitlines()
    assert len(narrow) > len(render_diagnosis(_diagnosis(Palette(False))).splitlines())


def _metadata_diff() -> Any:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    snapshot = snapshot_of(objects)
    [pool] = describe(snapshot, Selection(), NOW).clusters[0].pools
    raw = next(o for o in objects if o["kind"] == "MachinePool")
    return propagation(pool, raw, SyncRules())


def test_the_metadata_diff_uses_the_glyphs_it_is_given() -> None:
    # Defect: diff-metadata printed ✓ and · even when the output was not UTF-8.
    result = _metadata_diff()
    unicode = render_propagation([result], Palette(False))
    assert "✓" in unicode
    assert "·" in unicode
    assert render_propagation([result], Palette(False), glyphs=UNICODE) == unicode
    ascii_text = render_propagation([result], Palette(False), glyphs=ASCII)
    assert ascii_text.isascii()
    assert ascii_text == unicode.replace("✓", ASCII.ok).replace("·", ASCII.dot)


def test_the_metadata_diff_wraps_its_notes_at_the_width_given() -> None:
    result = _metadata_diff()
    text = render_propagation([result], Palette(False), width=50)
    notes = [line for line in text.splitlines() if line.startswith(("    · ", "      "))]
    assert len(notes) > 1
    assert all(visible_width(line) <= 50 for line in notes)


def test_a_width_narrower_than_the_indents_counts_as_the_narrowest() -> None:
    # Below NARROWEST every word of the plan would be cut to one character per line (and
    # textwrap, given an indent wider than the width, never returned); 0 is what some
    # terminals report.
    p = _capd_plan()
    narrowest = render_plan(p, Palette(False), width=NARROWEST)
    assert max(visible_width(line) for line in narrowest.splitlines()) <= NARROWEST
    for tiny in (0, 5):
        assert render_plan(p, Palette(False), width=tiny) == narrowest
        assert render_diagnosis(_diagnosis(Palette(False)), width=tiny) == render_diagnosis(
            _diagnosis(Palette(False)), width=NARROWEST
        )
