"""diff-metadata's rules: what reaches Machines and Nodes, and why not."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS, core_manager
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.propagation import SyncRules, propagation, sync_rules
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.propagation import propagation_document, render_propagation

DEFAULT_RULES = SyncRules()


def diff(objects: list[dict[str, Any]], rules: SyncRules = DEFAULT_RULES):
    snapshot = snapshot_of(objects)
    [pool] = describe(snapshot, Selection(), NOW).clusters[0].pools
    raw = next(o for o in objects if o["kind"] == "MachinePool")
    return propagation(pool, raw, rules)


def keyed(result) -> dict[str, Any]:
    return {k.key: k for k in result.keys}


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_node_role_label_reaches_every_node_of_a_pool_with_machines(generation: str) -> None:
    result = diff(SCENARIOS["azure-vmss"](generation, NAMESPACE))
    role = keyed(result)["node-role.kubernetes.io/worker"]
    assert role.never_reason is None
    assert [a.state for a in role.machines] == ["present"] * 3
    assert [a.state for a in role.nodes] == ["present"] * 3
    team = keyed(result)["team"]
    assert [a.state for a in team.machines] == ["present"] * 3
    assert "outside the synced domains" in (team.never_reason or "")
    assert result.summary == "2 keys propagated everywhere, 2 will never reach Nodes"


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_the_same_label_never_reaches_nodes_of_a_pool_without_machines(generation: str) -> None:
    result = diff(SCENARIOS["aws-asg"](generation, NAMESPACE))
    role = keyed(result)["node-role.kubernetes.io/worker"]
    assert role.machines == ()
    assert role.never_reason == (
        "the pool has no MachinePool Machines: Cluster API copies no template metadata to its Nodes"
    )
    assert {a.state for a in role.nodes} == {"never"}


def test_missing_and_different_values_on_nodes() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    nodes = [o for o in objects if o["kind"] == "Node"]
    del nodes[2]["metadata"]["labels"]["node-role.kubernetes.io/worker"]
    nodes[1]["metadata"]["annotations"]["node.cluster.x-k8s.io/gpu-driver"] = "535"
    result = diff(objects)
    assert [(a.target, a.state) for a in keyed(result)["node-role.kubernetes.io/worker"].short] == [
        ("Node vmss-workers-000002", "missing")
    ]
    assert [
        (a.state, a.actual) for a in keyed(result)["node.cluster.x-k8s.io/gpu-driver"].short
    ] == [("different", "535")]
    assert (
        result.summary
        == "0 keys propagated everywhere, 2 missing or different on 2 Nodes, 2 will never reach Nodes"
    )


def test_a_label_removed_from_the_template_but_still_on_nodes() -> None:
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    del pool["spec"]["template"]["metadata"]["labels"]["node-role.kubernetes.io/worker"]
    result = diff(objects)
    assert "node-role.kubernetes.io/worker" not in keyed(result)
    assert sorted((x.kind, x.key, x.node, x.value) for x in result.leftovers) == [
        ("label", "node-role.kubernetes.io/worker", "dev-dev-mp-0-k9d4m", ""),
        ("label", "node-role.kubernetes.io/worker", "dev-dev-mp-0-x7q2p", ""),
    ]
    assert "2 left on Nodes from an older template" in result.summary


def test_extra_sync_regexes_are_unanchored_like_go() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    rules = SyncRules(labels=("eam",), annotations=(r"^example\.com/",))
    result = diff(objects, rules)
    # Now expected on Nodes, where the fixture's controller never put them.
    assert keyed(result)["team"].never_reason is None
    assert {a.state for a in keyed(result)["team"].nodes} == {"missing"}
    assert keyed(result)["example.com/owner"].never_reason is None


def test_regexes_come_from_the_manager_args_unless_flags_say_otherwise() -> None:
    deployment = core_manager(
        "capi-system",
        args=(
            "--leader-elect",
            "--additional-sync-machine-labels=^team$,^tier$",
            "--additional-sync-machine-annotations",
            r"^example\.com/",
        ),
    )
    rules = sync_rules(deployment, None, None)
    assert (rules.labels, rules.annotations) == (("^team$", "^tier$"), (r"^example\.com/",))
    assert rules.source == "args of Deployment capi-system/capi-controller-manager"
    overridden = sync_rules(deployment, ["^x$"], None)
    assert overridden.labels == ("^x$",)
    assert overridden.source.startswith("command-line flags")
    assert sync_rules(None, None, None).labels == ()
    with pytest.raises(UsageError, match="invalid sync regex"):
        sync_rules(None, ["("], None)


def test_capi_own_keys_are_not_the_users_to_diff() -> None:
    objects = SCENARIOS["capd"]("v1beta2", NAMESPACE)
    labels = next(o for o in objects if o["kind"] == "MachinePool")["spec"]["template"]["metadata"][
        "labels"
    ]
    labels.update({"cluster.x-k8s.io/cluster-name": "dev", "topology.cluster.x-k8s.io/owned": ""})
    assert set(keyed(diff(objects))) == {
        "node-role.kubernetes.io/worker",
        "team",
        "node.cluster.x-k8s.io/gpu-driver",
        "example.com/owner",
    }


def test_text_and_document(golden) -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    del [o for o in objects if o["kind"] == "Node"][2]["metadata"]["labels"][
        "node-role.kubernetes.io/worker"
    ]
    result = diff(objects)
    golden("diff-metadata/azure-vmss.txt", render_propagation([result], Palette(False)))
    doc = propagation_document([result])
    [pool] = doc["machinePools"]
    assert pool["machinePoolMachines"] is True
    role = next(k for k in pool["keys"] if k["key"] == "node-role.kubernetes.io/worker")
    assert role["reachesNodes"] is True
    assert {"target": "Node vmss-workers-000002", "state": "missing", "actual": None} in role[
        "nodes"
    ]
