"""Properties of the dump reader on text no kubectl wrote: aliases, nesting, arbitrary bytes.

The reader either returns objects the rest of the pipeline can handle or refuses with one
MachinePoolError line; it never raises anything else, hangs or blows up memory.
"""

from __future__ import annotations

import io

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline import check_documents, check_identities, memory_guard, run_pipeline
from profiles import examples
from strategies import alias_bomb, aliased_yaml, nested

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.offline import dump
from kubectl_machinepool.offline.dump import ALIAS_EXPANSION, ALIAS_FLOOR, MAX_DEPTH, load_dump

LOADERS = [getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader]


def _load_or_refuse(content: str):
    try:
        with memory_guard():
            return load_dump(["-"], io.StringIO(content))
    except MachinePoolError as err:
        assert "\n" not in err.message  # noqa: PT017 - the refusal is one line, whatever it says
        return None


@settings(max_examples=examples(300))
@given(aliased_yaml(), st.sampled_from(LOADERS))
def test_aliased_yaml_is_read_or_refused_in_one_line(content: str, loader: type) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dump, "_Loader", loader)
        snapshot = _load_or_refuse(content)
    if snapshot is not None:
        with memory_guard():
            out = run_pipeline(snapshot)[1]
        check_documents(out)
        check_identities(snapshot, out)


@settings(max_examples=examples(300))
@given(
    st.one_of(st.integers(1, 450), st.sampled_from([999, 1000, 1001, 3000])),
    st.sampled_from(["json", "yaml-flow", "yaml-block"]),
    st.sampled_from(LOADERS),
)
def test_nesting_is_bounded_the_same_way_by_every_parser(
    depth: int, fmt: str, loader: type
) -> None:
    content = nested(depth, fmt)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dump, "_Loader", loader)
        try:
            load_dump(["-"], io.StringIO(content))
            refused = None
        except MachinePoolError as err:
            refused = err.message
    # The document is the MachinePool, its metadata, its labels and then the value's depth
    # containers, in every format (the flow mappings' innermost scalar is no container).
    levels = depth + 3
    if levels <= MAX_DEPTH:
        assert refused is None
    else:
        assert refused is not None
        assert "nested too deeply" in refused


@settings(max_examples=examples(300))
@given(st.integers(1, 12), st.integers(1, 12), st.sampled_from(["labels", "annotations"]))
def test_alias_expansion_is_refused_past_its_budget(levels: int, width: int, where: str) -> None:
    content = alias_bomb(levels, width, where)
    # Each "lol" is a node of 3 characters; every level adds width times the one below.
    expanded = sum(width**level for level in range(1, levels + 1)) * 4
    snapshot = _load_or_refuse(content)
    if expanded > ALIAS_EXPANSION * len(content) + ALIAS_FLOOR:
        assert snapshot is None
    elif snapshot is not None:
        with memory_guard():
            run_pipeline(snapshot)


@settings(max_examples=examples(1500))
@given(st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_any_text_is_read_or_refused_in_one_line(content: str) -> None:
    snapshot = _load_or_refuse(content)
    if snapshot is not None:
        with memory_guard():
            run_pipeline(snapshot)
