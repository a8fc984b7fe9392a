"""A LIST answer read item by item: the same objects as json.loads, however the bytes arrive."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_machinepool.kube import liststream
from kubectl_machinepool.kube.liststream import NotAList, read_list, without_managed_fields

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


# managedFields as servers write them: entries of strings and FieldsV1, a trie of objects.
awkward = st.text(alphabet=st.sampled_from('ab"\\][{},:é\n\t') | st.characters(), max_size=12)
fields_v1 = st.recursive(
    st.just({}), lambda inner: st.dictionaries(awkward, inner, max_size=3), max_leaves=8
)
entries = st.lists(
    st.fixed_dictionaries(
        {"manager": awkward, "operation": awkward, "fieldsV1": fields_v1},
        optional={"time": awkward, "subresource": awkward},
    ),
    max_size=3,
)


@st.composite
def instances(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    first = draw(st.booleans())  # managedFields as the first key: left as it is
    if first:
        meta["managedFields"] = draw(entries)
    meta["name"] = draw(awkward)
    if not first and draw(st.booleans()):
        meta["managedFields"] = draw(entries)
    meta["labels"] = draw(st.dictionaries(awkward, awkward, max_size=2))
    return {"metadata": meta, "spec": draw(values)}


def _without(item: dict[str, Any]) -> dict[str, Any]:
    meta = item["metadata"]
    if next(iter(meta)) != "managedFields":
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
    return {**item, "metadata": meta}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(instances(), max_size=6),
    st.lists(st.integers(min_value=0), max_size=40),
    st.booleans(),
    st.sampled_from([1, 7, 64, liststream.BLOCK]),
)
def test_managed_fields_are_cut_before_decoding_and_nothing_else_changes(
    items: list[dict[str, Any]], cuts: list[int], ascii_only: bool, block: int
) -> None:
    answer = {"apiVersion": "v1", "items": items, "kind": "L", "metadata": {"continue": ""}}
    data = json.dumps(answer, separators=(",", ":"), ensure_ascii=ascii_only).encode(
        errors="surrogatepass"
    )
    if not ascii_only:
        data = json.dumps(answer, separators=(",", ":")).encode()  # lone surrogates escaped
    with mock.patch.object(liststream, "BLOCK", block):
        cut = b"".join(without_managed_fields(iter(_chunked(data, cuts))))
        got: list[Any] = []
        rest = read_list(without_managed_fields(iter(_chunked(data, cuts))), got.append, 1 << 20)
    assert json.loads(cut) == {**answer, "items": [_without(i) for i in items]}
    assert got == [_without(i) for i in items]
    assert rest == {k: v for k, v in answer.items() if k != "items"}


@settings(max_examples=200, deadline=None)
@given(st.lists(values, max_size=4), st.lists(st.integers(min_value=0), max_size=20))
def test_managed_fields_holding_arrays_are_refused_or_read_never_crash(
    inside: list[Any], cuts: list[int]
) -> None:
    """Arrays inside managedFields are not what servers send: the cut may go wrong, and the
    answer is then refused as invalid JSON, never read as something it is not meant to be."""
    item = {"metadata": {"name": "x", "managedFields": inside, "uid": "u"}}
    data = json.dumps({"items": [item]}, separators=(",", ":")).encode()
    got: list[Any] = []
    with mock.patch.object(liststream, "BLOCK", 16):
        try:
            read_list(without_managed_fields(iter(_chunked(data, cuts))), got.append, 1 << 20)
        except NotAList:
            return
    assert got == [{"metadata": {"name": "x", "uid": "u"}}]
