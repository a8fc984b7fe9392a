"""The revision record over generated histories: what the tool encodes decodes to the newest
revisions it kept, within KEPT and MAX_BYTES, oldest dropped first; and any value at all in the
annotation (hostile text, JSON of any shape, a record of the tool's with one value retyped)
decodes to a history or to a reason, never to an exception."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import any_values, hostile_text, huge_text

from kubectl_machinepool.model.revisions import (
    KEPT,
    MAX_BYTES,
    MAX_VALUE,
    REPLICAS,
    VERSION,
    Change,
    Revision,
    decode,
    encode,
    revision_problem,
)

CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
# Printable, no whitespace: what an image or id field may hold (two-byte letters make the cap
# bite with fewer revisions).
IMAGES = st.text(
    st.characters(blacklist_categories=("C", "Z"), max_codepoint=0x2FFF),
    min_size=1,
    max_size=MAX_VALUE,
)
VERSIONS = st.builds(
    lambda a, b, c: f"v{a}.{b}.{c}", st.integers(1, 2), st.integers(0, 40), st.integers(0, 30)
)
SIZES = st.one_of(st.none(), st.integers(0, 2**31 - 1))


def _pool_change(path: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Change]:
    return st.builds(
        Change,
        st.just("MachinePool"),
        st.just(CAPI),
        st.just("workers"),
        st.just(path),
        values,
        values,
    )


CHANGES = st.one_of(
    _pool_change(VERSION, st.one_of(st.none(), VERSIONS)),
    _pool_change(REPLICAS, SIZES),
    st.builds(
        Change,
        st.just("DockerMachinePool"),
        st.just(INFRA),
        st.just("workers-infra"),
        st.just("spec.template.customImage"),
        st.one_of(st.none(), IMAGES),
        st.one_of(st.none(), IMAGES),
    ),
)


@st.composite
def histories(draw: st.DrawFn, most: int = 14) -> list[Revision]:
    numbers = sorted(draw(st.sets(st.integers(1, 2**31 - 1), min_size=1, max_size=most)))
    revisions = []
    for number in numbers:
        changes = draw(st.lists(CHANGES, min_size=1, max_size=3, unique_by=lambda c: c.path))
        cause = draw(st.text(st.characters(blacklist_categories=("C",)), min_size=1, max_size=80))
        revisions.append(Revision(number, cause, "2026-11-29T15:00:00Z", "0.1.0", tuple(changes)))
    return revisions


@settings(max_examples=examples(150))
@given(histories())
def test_encoded_revisions_decode_to_the_newest_kept_within_the_cap(
    revisions: list[Revision],
) -> None:
    value = encode(revisions)
    history = decode(value, "workers")
    if all(revision_problem(r) is None for r in revisions):
        assert history.unusable is None
    if history.unusable is None:
        kept = history.revisions
        assert 1 <= len(kept) <= KEPT
        assert list(kept) == revisions[-len(kept) :]
        # Only the cap drops more than the oldest past KEPT, and only what does not fit.
        if len(kept) < min(len(revisions), KEPT):
            bigger = encode(revisions[-len(kept) - 1 :])
            assert len(bigger.encode()) > MAX_BYTES
    if len(encode(revisions[-1:]).encode()) <= MAX_BYTES:
        assert len(value.encode()) <= MAX_BYTES


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=examples(400))
@given(
    st.one_of(
        hostile_text(surrogates=True),
        huge_text(),
        JSON.map(json.dumps),
        any_values(surrogates=True),
    )
)
def test_any_annotation_decodes_to_a_history_or_a_reason(value: Any) -> None:
    history = decode(value, "workers")
    assert (history.unusable is None) or history.revisions == ()
    assert history.unusable is None or 0 < len(history.unusable) < 400


def _retyped(document: Any, path: list[Any], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy = list(document) if isinstance(document, list) else dict(document)
    copy[head] = _retyped(document[head], rest, new)
    return copy


@st.composite
def tampered(draw: st.DrawFn) -> str:
    """A record the tool wrote with one value anywhere replaced by any other."""
    document = json.loads(encode(draw(histories(most=4))))
    path: list[Any] = []
    node = document
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    return json.dumps(_retyped(document, path, draw(JSON)))


@settings(max_examples=examples(200))
@given(tampered())
def test_a_tampered_record_is_a_history_of_allowed_values_or_a_reason(value: str) -> None:
    history = decode(value, "workers")
    for revision in history.revisions:
        assert revision_problem(revision) is None
    numbers = [r.number for r in history.revisions]
    assert numbers == sorted(set(numbers))
