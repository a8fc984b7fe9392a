"""A LIST answer read item by item: the same objects as json.loads, however the bytes arrive."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_machinepool.liststream import NotAList, read_list

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
answers = st.fixed_dictionaries(
    {"items": st.lists(values, max_size=8)},
    optional={"kind": st.text(), "metadata": values, "apiVersion": st.text()},
)


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in [*points, len(data)]:
        pieces.append(data[last:point])
        last = point
    return [p for p in pieces if p]


def _read(data: bytes, cuts: list[int], largest: int = 1 << 20) -> tuple[list[Any], dict]:
    got: list[Any] = []
    rest = read_list(iter(_chunked(data, cuts)), got.append, largest)
    return got, rest


@settings(max_examples=400, deadline=None)
@given(answers, st.lists(st.integers(min_value=0), max_size=30), st.booleans(), st.booleans())
def test_items_and_the_rest_are_what_json_loads_makes(
    answer: dict[str, Any], cuts: list[int], spaced: bool, ascii_only: bool
) -> None:
    text = json.dumps(answer, indent=2 if spaced else None, ensure_ascii=ascii_only)
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: a server sends it escaped
        data = json.dumps(answer, indent=2 if spaced else None).encode()
    got, rest = _read(data, cuts)
    assert got == answer["items"]
    assert rest == {k: v for k, v in answer.items() if k != "items"}


def test_metadata_after_items_as_custom_resources_send_it() -> None:
    data = (
        b'{"apiVersion":"v1","items":[{"a":1},{"b":[2,3]}],"kind":"L","metadata":{"continue":"x"}}'
    )
    got, rest = _read(data, [5, 17, 33])
    assert got == [{"a": 1}, {"b": [2, 3]}]
    assert rest == {"apiVersion": "v1", "kind": "L", "metadata": {"continue": "x"}}


def test_a_number_cut_at_a_chunk_end_is_read_whole() -> None:
    got, rest = _read(b'{"items":[1234567],"n":98765}', [12, 26])
    assert (got, rest) == ([1234567], {"n": 98765})
    got, _ = _read(b'{"items":[100.0,2e10]}', [15, 19])  # "100." and "2e" end a chunk
    assert got == [100.0, 2e10]


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b"<html>login</html>", b'{"items":[{"a":1}', b'{"items":[1,]}', b'{"items":[1]} x',
     b'{"items":[1] "k":2}', b"\xff\xfe", b'{"items":' + b"[" * 100000 + b"]" * 100000 + b"}"],
)  # fmt: skip
def test_what_is_not_a_list_answer_is_refused(data: bytes) -> None:
    with pytest.raises(NotAList):
        _read(data, [3, 7])


def test_one_value_past_the_bound_is_refused() -> None:
    data = json.dumps({"items": [{"big": "x" * 5000}]}).encode()
    with pytest.raises(NotAList, match="larger than"):
        _read(data, list(range(0, len(data), 100)), largest=4096)
    got, _ = _read(data, list(range(0, len(data), 100)), largest=8192)
    assert got[0]["big"] == "x" * 5000
