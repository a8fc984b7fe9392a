"""A manifest against the live object: changed fields in kubectl diff's order, what only the server
writes left out, a client-side apply's merge (last-applied removals included), and bounds."""

from __future__ import annotations

import json
from typing import Any

from kubectl_machinepool.model.manifestdiff import (
    LAST_APPLIED,
    MAX_CHANGES,
    applied,
    diff_name,
    dotted,
    leaf_paths,
    object_diff,
)

LIVE: dict[str, Any] = {
    "apiVersion": "cluster.x-k8s.io/v1beta2",
    "kind": "MachinePool",
    "metadata": {
        "name": "workers",
        "namespace": "capi-prod",
        "resourceVersion": "41",
        "generation": 3,
        "managedFields": [{"manager": "argocd-controller"}],
        "annotations": {"example.com/a.b": "1"},
    },
    "spec": {
        "replicas": 3,
        "failureDomains": ["1", "2"],
        "template": {"spec": {"version": "v1.33.4", "bootstrap": {"dataSecretName": "x"}}},
    },
    "status": {"replicas": 3},
}


def _paths(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    return [dotted(c.path) for c in object_diff(before, after).changes]


def test_fields_come_depth_first_with_keys_sorted_and_server_fields_left_out() -> None:
    after = json.loads(json.dumps(LIVE))
    after["metadata"].update(resourceVersion="42", generation=4, managedFields=[])
    after["metadata"]["annotations"]["example.com/a.b"] = "2"
    after["spec"]["template"]["spec"]["version"] = "v1.34.1"
    after["spec"]["failureDomains"] = ["1", "2", "3"]
    after["spec"]["replicas"] = 5
    after["status"] = {"replicas": 5}
    assert _paths(LIVE, after) == [
        "metadata.annotations[example.com/a.b]",
        "spec.failureDomains[2]",
        "spec.replicas",
        "spec.template.spec.version",
    ]
    [replicas] = [c for c in object_diff(LIVE, after).changes if c.path == ("spec", "replicas")]
    assert (replicas.before, replicas.after) == (3, 5)


def test_absent_null_and_empty_are_the_same_and_a_type_change_is_a_change() -> None:
    after = json.loads(json.dumps(LIVE))
    after["spec"]["template"]["metadata"] = {"labels": {}}
    after["spec"]["replicas"] = "3"
    assert _paths(LIVE, after) == ["spec.replicas"]


def test_objects_order_as_kubectl_diff_names_their_files() -> None:
    infra = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "AzureMachinePool",
             "metadata": {"name": "workers", "namespace": "capi-prod"}}  # fmt: skip
    assert diff_name(LIVE) == "cluster.x-k8s.io.v1beta2.MachinePool.capi-prod.workers"
    assert sorted([diff_name(LIVE), diff_name(infra)])[0].startswith("cluster.x-k8s.io")
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    assert diff_name(secret) == "v1.Secret..s"


def test_client_side_apply_merges_and_removes_what_the_last_apply_set() -> None:
    live = json.loads(json.dumps(LIVE))
    last = {"spec": {"replicas": 3, "failureDomains": ["1", "2"]}, "metadata": {"name": "workers"}}
    live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(last)
    manifest = {"metadata": {"name": "workers"}, "spec": {"replicas": 4, "template": None}}
    result = applied(live, manifest)
    assert result["spec"] == {"replicas": 4}  # failureDomains dropped, template nulled
    assert live["spec"]["failureDomains"] == ["1", "2"]  # the live object is untouched


def test_a_hostile_last_applied_copy_is_ignored() -> None:
    live = json.loads(json.dumps(LIVE))
    live["metadata"]["annotations"][LAST_APPLIED] = "[" * 100_000
    assert applied(live, {"spec": {"replicas": 4}})["spec"]["failureDomains"] == ["1", "2"]


def test_a_huge_list_is_cut_and_counted() -> None:
    after = json.loads(json.dumps(LIVE))
    after["spec"]["providerIDList"] = [f"aws:///i-{n}" for n in range(5000)]
    found = object_diff(LIVE, after)
    assert (len(found.changes), found.more) == (MAX_CHANGES, 5000 - MAX_CHANGES)


def test_a_deep_object_is_walked_without_recursion() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    node["leaf"] = 1
    found = object_diff({}, {"spec": deep})
    assert len(found.changes) == 1
    assert len(leaf_paths({"spec": deep})) == 1
