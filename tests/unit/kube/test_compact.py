"""Objects as a LIST page gives them, made smaller: unused fields gone, equal parts shared."""

from __future__ import annotations

import copy
import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from kubectl_machinepool.kube.compact import INSTANCE_UNUSED, Compactor


def _machine(name: str, ready: object = "True") -> dict:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Machine",
        "metadata": {
            "name": name,
            "labels": {"cluster.x-k8s.io/pool-name": "workers"},
            "managedFields": [{"manager": "capi"}],
            "ownerReferences": [{"kind": "MachinePool", "name": "workers", "controller": True}],
        },
        "status": {
            "conditions": [{"type": "Ready", "status": ready, "observedGeneration": 1}],
            "deprecated": {"v1beta1": {"conditions": [{"type": "Ready", "status": "True"}]}},
            "nodeInfo": {"kubeletVersion": "v1.33.4"},
            "nodeRef": {"name": f"node-{name}"},
        },
    }


def test_equal_parts_are_kept_once_and_read_the_same() -> None:
    compact = Compactor(INSTANCE_UNUSED, share_after=0)
    first, second = _machine("a"), _machine("b")
    expected = [copy.deepcopy(first), copy.deepcopy(second)]
    for obj in (first, second):
        compact(obj)
    for obj in expected:
        for section, field in INSTANCE_UNUSED:
            obj[section].pop(field, None)
    assert [first, second] == expected
    assert first["metadata"]["labels"] is second["metadata"]["labels"]
    assert first["metadata"]["ownerReferences"][0] is second["metadata"]["ownerReferences"][0]
    assert first["status"]["conditions"][0] is second["status"]["conditions"][0]
    old = "deprecated", "v1beta1", "conditions"
    assert first["status"][old[0]][old[1]][old[2]][0] is second["status"][old[0]][old[1]][old[2]][0]
    assert first["status"]["nodeRef"] is not second["status"]["nodeRef"]  # not a shared part


def test_values_equal_across_types_are_not_merged() -> None:
    compact = Compactor(INSTANCE_UNUSED, share_after=0)
    objs = [_machine("a", ready=True), _machine("b", ready=1), _machine("c", ready=1.0)]
    for obj in objs:
        compact(obj)
    statuses = [obj["status"]["conditions"][0]["status"] for obj in objs]
    assert [type(s) for s in statuses] == [bool, int, float]


def test_nested_and_odd_shapes_are_left_alone() -> None:
    compact = Compactor(INSTANCE_UNUSED, share_after=0)
    node = {
        "kind": "Node",
        "metadata": {"labels": {"a": {"nested": "x"}}, "ownerReferences": "not a list"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}, "junk"]},
        "status": {"addresses": [{"type": "x"}], "conditions": None, "v1beta2": []},
    }
    before = json.dumps(node)
    compact(node)
    assert "addresses" not in node["status"]
    node["status"]["addresses"] = [{"type": "x"}]
    assert json.loads(before) == node


SMALL = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, 1.5]),
    st.text("ab", max_size=2),
)


@given(st.lists(st.dictionaries(st.text("kt", max_size=2), SMALL, max_size=3), max_size=8))
def test_a_label_set_is_shared_exactly_with_those_equal_in_value_and_type(
    label_sets: list[dict[str, object]],
) -> None:
    compact = Compactor(INSTANCE_UNUSED, share_after=0)
    objs = [{"metadata": {"labels": dict(labels)}} for labels in label_sets]
    for obj in objs:
        compact(obj)
    kept = [obj["metadata"]["labels"] for obj in objs]
    assert [json.dumps(k) for k in kept] == [json.dumps(labels) for labels in label_sets]
    for a, b in itertools.combinations(range(len(kept)), 2):
        same = [(k, v, type(v)) for k, v in label_sets[a].items()] == [
            (k, v, type(v)) for k, v in label_sets[b].items()
        ]
        assert (kept[a] is kept[b]) == same


def test_parts_are_shared_only_after_the_first_objects() -> None:
    compact = Compactor(INSTANCE_UNUSED, share_after=2)
    objs = [_machine(name) for name in "abcd"]
    for obj in objs:
        compact(obj)
    labels = [obj["metadata"]["labels"] for obj in objs]
    assert labels[0] is not labels[1]
    assert labels[1] is not labels[2]
    assert labels[2] is labels[3]
    assert all("managedFields" not in obj["metadata"] for obj in objs)  # forgotten from the first
