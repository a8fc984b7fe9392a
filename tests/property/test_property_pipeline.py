"""Properties of the whole offline pipeline on realistic dumps broken in hostile ways.

For every example: no exception escapes load_dump → describe → diagnose → every renderer of
list, describe, diagnose and diff-metadata; JSON and YAML output parse back to exactly the
document; describe -o json matches the shipped schema; every MachinePool of the input is
described under its own, unmodified names; text output carries no raw control character.
"""

from __future__ import annotations

import json
import tracemalloc
from datetime import timedelta

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pipeline import (
    check_documents,
    check_identities,
    control_characters,
    memory_guard,
    run_pipeline,
    snapshot_from,
)
from profiles import examples
from strategies import (
    BASES,
    FORMATS,
    Dump,
    dumps,
    hostile_key,
    hostile_string,
    huge_strings,
    serialise,
)

from kubectl_machinepool.base.errors import MachinePoolError

# tracemalloc triples the cost of an example (hence its longer deadline), so it watches a share
# of them, with huge strings; memory_guard stops anything past 1 GiB everywhere.
MEMORY_LIMIT = 256 * 1024 * 1024


def _pipeline_or_refusal(dump: Dump):
    """The snapshot and outputs, or None when the reader refuses the dump with one line."""
    try:
        with memory_guard():
            snapshot = snapshot_from(dump.text)
    except MachinePoolError as err:
        assert "\n" not in err.message  # noqa: PT017 - the refusal is one line, whatever it says
        event("refused: " + err.message.replace("<stdin>", "-")[:60])
        return None
    event("read")
    with memory_guard():
        return snapshot, run_pipeline(snapshot)[1]


@settings(max_examples=examples(1000))
@given(dumps())
def test_every_output_holds_its_contract(dump: Dump) -> None:
    result = _pipeline_or_refusal(dump)
    if result is not None:
        snapshot, out = result
        check_documents(out)
        check_identities(snapshot, out)


@settings(max_examples=examples(400))
@given(dumps(mutations=st.sampled_from([hostile_string, hostile_key]), max_mutations=10))
def test_text_output_has_no_control_characters(dump: Dump) -> None:
    result = _pipeline_or_refusal(dump)
    if result is not None:
        assert control_characters(result[1]) == {}


@settings(max_examples=examples(60), deadline=timedelta(seconds=30))
@given(dumps(mutations=st.sampled_from([hostile_string, huge_strings]), max_mutations=4))
def test_memory_stays_bounded(dump: Dump) -> None:
    tracemalloc.start()
    try:
        _pipeline_or_refusal(dump)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT, f"peak {peak / 2**20:.0f} MiB"


def test_the_unbroken_bases_pass_every_check() -> None:
    """The starting points themselves: a failure here is not about hostile input."""
    for base, objects in BASES.items():
        for fmt in FORMATS:
            snapshot = snapshot_from(serialise(json.loads(objects), fmt))
            out = run_pipeline(snapshot)[1]
            check_documents(out)
            check_identities(snapshot, out)
            assert control_characters(out) == {}, (base, fmt)


def _set_field(objects: list[dict], kind: str, path: tuple[str, ...], value: str) -> None:
    target = next(o for o in objects if o["kind"] == kind)
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("MachinePool", ("spec", "template", "spec", "version")),
        ("Node", ("status", "nodeInfo", "kubeletVersion")),
    ],
)
def test_a_huge_value_keeps_text_output_in_proportion(kind: str, path: tuple[str, ...]) -> None:
    """A 50 KB version string (a Node writes its own kubeletVersion) made describe print 123 MB
    in 3835 lines, peaking at 700 MB; 200 KB took 32 s and 4.3 GB."""
    objects = json.loads(BASES["eks-managed/v1beta2"])
    _set_field(objects, kind, path, "word " * 10_000)
    content = serialise(objects, "json-list")
    with memory_guard():
        out = run_pipeline(snapshot_from(content))[1]
    largest = max(out.texts, key=lambda name: len(out.texts[name]))
    size = len(out.texts[largest])
    assert size < 20 * len(content), (
        f"{largest} prints {size >> 10} KiB for a {len(content) >> 10} KiB dump"
    )
