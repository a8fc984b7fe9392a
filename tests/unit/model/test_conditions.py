"""Conditions read lazily: one found alone is the one the whole set holds, whatever the raw
lists hold (providers' preserve-unknown-fields objects and dumps can hold anything)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_machinepool.model.conditions import Conditions, read_conditions

KINDS = ["Ready", "Available", "1", ""]
condition = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(st.sampled_from(KINDS), st.integers(0, 2), st.none(), st.booleans()),
        "status": st.sampled_from(["True", "False", "Unknown", "true", 1, None]),
        "reason": st.one_of(st.text(max_size=3), st.integers(0, 2), st.none()),
        "message": st.one_of(st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=1)),
        "lastTransitionTime": st.sampled_from(["2026-11-01T00:00:00Z", "later", None, 5]),
        "severity": st.sampled_from(["Error", "", None]),
    },
)
raw_set = st.one_of(
    st.none(),
    st.text(max_size=3),
    st.lists(st.one_of(condition, st.integers(0, 2), st.text(max_size=2)), max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(raw_set, raw_set, st.sampled_from(KINDS))
def test_a_condition_found_alone_is_the_one_of_the_whole_set(current, legacy, kind) -> None:
    alone = Conditions(current, legacy).get(kind)
    whole = Conditions(current, legacy)
    parsed = whole.all
    assert alone == next((c for c in parsed if c.type == kind), None)
    assert whole.get(kind) == alone  # and asked again, once parsed
    assert whole == Conditions(current, legacy)
    assert hash(whole) == hash(Conditions(current, legacy))


def test_the_current_set_comes_first_and_says_which_generation_it_is() -> None:
    machine = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "status": {
            "conditions": [{"type": "Ready", "status": "False", "reason": "NotReady"}],
            "deprecated": {
                "v1beta1": {"conditions": [{"type": "Ready", "status": "True", "severity": ""}]}
            },
        },
    }
    ready = read_conditions(machine).get("Ready")
    assert ready is not None
    assert (ready.status, ready.reason, ready.generation) == ("False", "NotReady", "v1beta2")
    legacy = read_conditions(machine).legacy
    assert [(c.type, c.status, c.generation) for c in legacy] == [("Ready", "True", "v1beta1")]
