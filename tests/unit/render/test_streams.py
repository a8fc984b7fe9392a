"""JSON and YAML in chunks: the same text as the whole-document encoders, Streams or not."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from support.documents import describe_document
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import scenario_snapshot

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render import streams
from kubectl_machinepool.render.streams import Stream, materialized, write_json, write_yaml
from kubectl_machinepool.render.structured import describe_stream, to_json

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def _streamed(value: Any, choices: st.DataObject) -> Any:
    """value with some of its lists (chosen by hypothesis) made Streams."""
    if isinstance(value, dict):
        return {k: _streamed(v, choices) for k, v in value.items()}
    if isinstance(value, list):
        items = [_streamed(v, choices) for v in value]
        return Stream(items) if choices.draw(st.booleans()) else items
    return value


def _expected_yaml(value: Any) -> str:
    """What PyYAML writes for the whole document, with the emitter streams.py uses (libyaml's
    and PyYAML's own differ in corners, such as an empty key)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(value, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30)


def _written(write: Any, document: Any) -> tuple[str, list[str]]:
    pieces: list[str] = []
    write(document, pieces.append)
    return "".join(pieces), pieces


@settings(max_examples=300, deadline=None)
@given(documents, st.data())
def test_json_is_what_json_dumps_with_indent_writes(document: Any, choices: st.DataObject) -> None:
    text, _ = _written(write_json, _streamed(document, choices))
    assert text == json.dumps(document, indent=4) + "\n"


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(), documents, max_size=4), st.data())
def test_yaml_reads_back_as_the_document(document: Any, choices: st.DataObject) -> None:
    text, _ = _written(write_yaml, _streamed(document, choices))
    assert yaml.safe_load(text) == document
    assert text.isascii()
    assert all(c.isprintable() for c in text.replace("\n", ""))


@pytest.mark.parametrize(
    "value",
    [
        "",
        "null",
        "~",
        "yes",
        "No",
        "on",
        "true",
        "1",
        "-1",
        "1.5",
        ".inf",
        "0x1f",
        "1:20",
        "2026-11-29T15:00:00Z",
        "2026-11-29",
        "<<",
        "=",
        "- a",
        "? a",
        ": a",
        "a: b",
        "a #b",
        "a:",
        "#a",
        "&a",
        "*a",
        "!a",
        "|a",
        ">a",
        "'a",
        '"a',
        "%a",
        "@a",
        "`a",
        "[a",
        "{a",
        ",a",
        " a",
        "a ",
        "--- a",
        "... a",
        "a\nb",
        "tab\there",
        "\x1b[31m",
        "é",
        "\U0001f600",
        "\ud800",
        "back\\slash",
        'quo"te',
        "it's",
    ],
)
def test_a_string_that_yaml_would_read_otherwise_is_quoted(value: str) -> None:
    for document in ({"key": value}, {value: "v"}, {"list": [value]}):
        text, _ = _written(write_yaml, document)
        assert yaml.safe_load(text) == document, text


def test_yaml_looks_like_pyyaml_for_the_plain_cases() -> None:
    document = {"a": {"b": [1, {"c": "v1.33.4", "d": []}], "e": {}}, "f": [[1, 2], "x"], "g": None}
    text, _ = _written(write_yaml, document)
    assert text == _expected_yaml(document)


def test_a_lone_surrogate_is_escaped_not_an_error() -> None:
    document = {"message": "bad \ud800 text", "items": Stream([{"name": "\udfff"}])}
    text, _ = _written(write_yaml, document)
    assert yaml.safe_load(text) == materialized(
        {"message": "bad \ud800 text", "items": [{"name": "\udfff"}]}
    )


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_describe_streamed_in_chunks_is_the_document(
    scenario: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "PIECES", 64)
    description = describe(scenario_snapshot(scenario), Selection(), NOW)
    text, pieces = _written(write_json, describe_stream(description))
    assert text == to_json(describe_document(description))
    assert len(pieces) > 3
    yaml_text, _ = _written(write_yaml, describe_stream(description))
    assert yaml.safe_load(yaml_text) == describe_document(description)


def test_a_stream_is_made_only_as_it_is_written() -> None:
    made: list[int] = []

    def item(n: int) -> dict[str, int]:
        made.append(n)
        return {"n": n}

    document = {"instances": Stream(map(item, range(3)))}
    pieces: list[str] = []
    write_json(document, lambda text: pieces.append(f"{len(made)}:{text}"))
    assert made == [0, 1, 2]
    assert materialized({"a": Stream(iter([1, Stream([2])]))}) == {"a": [1, [2]]}
