"""kubectl's JSONPath templates, custom columns and --sort-by over any template and any data:
text or a TemplateError, never a crash, never a hang (the profile's deadline)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import any_values, hostile_text

from kubectl_machinepool.render import columns
from kubectl_machinepool.render.jsonpath import TemplateError, parse

# The pieces templates are made of, so that most examples get past the parser.
TOKENS = [
    *("{", "}", "{.", "{@", "{$", "{range ", "{end}", " ", ".", "..", "*", "@", "$"),
    *("[", "]", "[*]", "[0]", "[-1]", "[1:]", "[::2]", "[0,1]", "['a']", "['a.b']", ","),
    *("[?(", ")]", "@.a", "==", "!=", "<", ">=", "'x'", '"x"', "1", "-2", "1.5", "true"),
    *("a", "b", "items", "metadata", "name", "\\", '"\\n"', '"\\x41"', '"\\u00e9"', "\n"),
]
# Mostly tokens: a template with hostile text in an action stops at the parser.
PIECES = st.sampled_from(TOKENS)
TEMPLATES = st.lists(
    st.one_of(PIECES, PIECES, PIECES, PIECES, hostile_text(surrogates=True)), max_size=16
).map("".join)
# Data shaped like what templates expect (maps keyed a, b, items…) as well as anything.
KEYS = st.sampled_from(["a", "b", "a.b", "items", "metadata", "name", "x", "z"])
DATA = st.recursive(
    any_values(surrogates=True),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=examples(400))
@given(TEMPLATES, DATA)
def test_a_template_prints_text_or_says_why_not(template: str, data: Any) -> None:
    said = ""
    try:
        printed = parse(template).render(data)
    except TemplateError as error:
        said = error.message
    else:
        assert isinstance(printed, str)
        return
    assert said
    assert "\n" not in said  # one line


@settings(max_examples=examples(200))
@given(st.text().filter(lambda text: "{" not in text))
def test_text_outside_actions_is_printed_as_it_is(text: str) -> None:
    assert parse(text).render({}) == text


@settings(max_examples=examples(150))
@given(st.text(), st.sampled_from(['"', "'"]))
def test_a_quoted_literal_prints_its_text(text: str, quote: str) -> None:
    """Any text, quoted with Go's escapes, comes back out (kubectl's scanner takes a quote
    after a backslash as escaped, so the text may not end with one)."""
    assume(not text.endswith("\\") and not any("\ud800" <= c <= "\udfff" for c in text))
    quoted = json.dumps(text, ensure_ascii=False)[1:-1]
    if quote == "'":
        quoted = quoted.replace('\\"', '"').replace("'", "\\'")
    assert parse("{" + quote + quoted + quote + "}").render(None) == text


@settings(max_examples=examples(150))
@given(
    st.lists(st.tuples(hostile_text(surrogates=True), TEMPLATES), min_size=1, max_size=3),
    st.lists(DATA, max_size=4),
    st.booleans(),
)
def test_custom_columns_print_one_line_per_item(
    spec: list[tuple[str, str]], items: list[Any], no_headers: bool
) -> None:
    text = ",".join(f"{header.replace(',', '')}:{path.replace(',', '')}" for header, path in spec)
    try:
        printed = columns.render(columns.from_spec(text), items, no_headers)
    except TemplateError:
        return
    assert printed.count("\n") == len(items) + (0 if no_headers else 1)


@settings(max_examples=examples(150))
@given(TEMPLATES, st.lists(DATA, max_size=6))
def test_sort_by_orders_every_item_once_or_says_why_not(path: str, items: list[Any]) -> None:
    try:
        order = columns.sorted_order(items, columns.sort_template(path))
    except TemplateError:
        return
    assert sorted(order) == list(range(len(items)))
