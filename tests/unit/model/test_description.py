"""The describe model over realistic objects of every provider shape."""

from __future__ import annotations

import json

import pytest
from support.documents import describe_document
from support.objects import NOW
from support.scenarios import SCENARIOS, node
from support.snapshots import NAMESPACE, scenario_snapshot, snapshot_of

from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.instances import same_version
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.providers.deletion import Verdict


def only_pool(name: str, generation: str = "v1beta2", nodes_known: bool = True) -> PoolDescription:
    description = describe(scenario_snapshot(name, generation, nodes_known), Selection(), NOW)
    [cluster] = description.clusters
    [pool] = cluster.pools
    return pool


# (scenario, verdict, uses machines, (desired, provider, matched, ready, available, machines))
EXPECTED = [
    ("aws-asg", Verdict.NOT_SUPPORTED, False, (3, 3, 2, 2, 2, None)),
    ("azure-vmss", Verdict.SUPPORTED, True, (3, 3, 3, 2, 2, 3)),
    ("oci-instance-pool", Verdict.NOT_SUPPORTED, True, (2, 2, 2, 2, 2, 2)),
    ("eks-managed", Verdict.NOT_SUPPORTED, False, (3, 3, 3, 3, 3, None)),
    ("aks-managed", Verdict.NOT_SUPPORTED, False, (3, 3, 3, 3, 3, None)),
    ("gke-managed", Verdict.NOT_SUPPORTED, False, (3, 3, 3, 3, 3, None)),
    ("scaleway-kapsule", Verdict.NOT_SUPPORTED, False, (2, 2, 2, 2, 2, None)),
    ("capd", Verdict.SUPPORTED, True, (2, 2, 2, 2, 2, 2)),
]


@pytest.mark.parametrize(
    ("scenario", "verdict", "machines", "counts"), EXPECTED, ids=[e[0] for e in EXPECTED]
)
@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_every_provider_shape(scenario, verdict, machines, counts, generation) -> None:
    pool = only_pool(scenario, generation)
    c = pool.counts
    assert pool.deletion.verdict is verdict
    assert pool.uses_machines is machines
    assert (
        c.desired,
        c.provider_reported,
        c.nodes_matched,
        c.nodes_ready,
        c.nodes_available,
        c.machines,
    ) == counts


def test_asg_instance_without_node_comes_first() -> None:
    pool = only_pool("aws-asg")
    first, *rest = pool.instances
    assert first.problems == ("no Node with this providerID",)
    assert first.provider_id == "aws:///eu-west-1c/i-000000000003a5f12"
    assert len(rest) == 2
    assert all(i.healthy for i in rest)


def test_vmss_problems_name_the_skew_and_the_not_ready_node() -> None:
    pool = only_pool("azure-vmss")
    problems = {i.machine.object.name: i.problems for i in pool.instances if i.machine}
    assert problems == {
        "vmss-workers-0": ("kubelet v1.32.9, pool wants v1.33.4",),
        "vmss-workers-1": (),
        "vmss-workers-2": ("Machine not Ready (NotReady)", "Node not Ready (KubeletNotReady)"),
    }
    assert pool.kubelet_versions == (("v1.32.9", 1), ("v1.33.4", 2))
    assert len(pool.instances) == 3
    assert all(
        i.infra_machine and i.infra_machine.kind == "AzureMachinePoolMachine"
        for i in pool.instances
    )


def test_cordoned_node_is_a_problem() -> None:
    pool = only_pool("aks-managed")
    assert [i.problems for i in pool.instances if i.problems] == [("Node cordoned",)]
    assert pool.pool.replicas_managed_by == "true"


def test_eks_build_suffix_is_not_version_skew() -> None:
    instances = only_pool("eks-managed").instances
    assert instances
    assert all(i.healthy for i in instances)
    assert same_version("v1.33.5-eks-3025e55", "v1.33.5")
    assert not same_version("v1.32.9", "v1.33.4")
    assert same_version("v1.33.2", "v1.33")


def test_without_nodes_nothing_is_claimed_about_them() -> None:
    pool = only_pool("aws-asg", nodes_known=False)
    assert (pool.counts.nodes_matched, pool.counts.nodes_ready) == (None, None)
    assert pool.instances
    assert all(i.healthy and i.node is None for i in pool.instances)
    # The status counters stay available.
    assert (pool.counts.status_ready, pool.counts.status_available) == (2, 2)


def test_node_claiming_the_pool_outside_provider_id_list() -> None:
    objects = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE)
    objects.append(
        node(
            "ip-10-0-9-9.eu-west-1.compute.internal",
            "aws:///eu-west-1a/i-0stale",
            "v1.33.4",
            NAMESPACE,
            "prod",
            "asg-workers",
        )
    )
    pool = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0]
    stale = next(i for i in pool.instances if i.provider_id == "aws:///eu-west-1a/i-0stale")
    assert stale.listed is False
    assert stale.problems == ("providerID not in the pool's providerIDList",)
    assert pool.counts.nodes_matched == 2


def test_machines_of_another_pool_are_not_taken() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    for obj in objects:
        if obj["kind"] == "Machine" and obj["metadata"]["name"] == "vmss-workers-1":
            obj["metadata"]["ownerReferences"][0]["uid"] = "another-pools-uid"
    pool = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0]
    names = [i.machine.object.name for i in pool.instances if i.machine]
    assert "vmss-workers-1" not in names
    orphan = next(
        i for i in pool.instances if i.infra_machine and i.infra_machine.name == "vmss-workers-1"
    )
    assert orphan.problems == ("AzureMachinePoolMachine has no Machine",)


def test_long_pool_names_match_machines_by_hashed_label() -> None:
    long_name = "workers-" + "x" * 70  # longer than a label value may be
    objects = json.loads(
        json.dumps(SCENARIOS["capd"]("v1beta2", NAMESPACE)).replace("dev-mp-0", long_name)
    )
    for obj in objects:
        labels = obj["metadata"].get("labels", {})
        if "cluster.x-k8s.io/pool-name" in labels:
            labels["cluster.x-k8s.io/pool-name"] = (
                "hash_t1Lqmw_z"  # fnv32a, as Cluster API formats it
            )
    pool = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0]
    assert pool.counts.machines == 2


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_both_generations_describe_the_same(scenario: str) -> None:
    def document(generation: str) -> str:
        text = json.dumps(
            describe_document(describe(scenario_snapshot(scenario, generation), Selection(), NOW))
        )
        return text.replace("cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2")

    assert document("v1beta1") == document("v1beta2")


def test_selection_by_name_cluster_and_labels() -> None:
    snapshot = snapshot_of(
        SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) + SCENARIOS["capd"]("v1beta2", NAMESPACE)
    )
    assert [c.name for c in describe(snapshot, Selection(), NOW).clusters] == ["dev", "prod"]
    assert [
        p.pool.name
        for c in describe(snapshot, Selection(cluster="dev"), NOW).clusters
        for p in c.pools
    ] == ["dev-mp-0"]
    assert describe(snapshot, Selection(names=("nope",)), NOW).clusters == ()
    assert describe(snapshot, Selection(namespace="elsewhere"), NOW).clusters == ()
    assert (
        len(
            describe(
                snapshot, Selection(selector="cluster.x-k8s.io/cluster-name=prod"), NOW
            ).clusters
        )
        == 1
    )


def test_oddly_typed_objects_read_as_absent_instead_of_crashing() -> None:
    pool = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachinePool",
        "metadata": {"name": "odd", "namespace": NAMESPACE, "labels": None, "annotations": ["x"]},
        "spec": {"clusterName": "prod", "replicas": "three", "template": {"spec": {"version": 1.3, "bootstrap": "x", "infrastructureRef": "y"}},
                 "providerIDList": ["p1", {"no": "way"}], "failureDomains": "a"},
        "status": {"replicas": "2", "nodeRefs": ["x", {"name": "n"}], "conditions": ["bad", {"type": "Ready"}, {"status": "True"}],
                   "deprecated": {"v1beta1": {"readyReplicas": None, "failureReason": {"odd": 1}}}},
    }  # fmt: skip
    odd_node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "annotations": None},
                "spec": {"providerID": "p1", "taints": [1, {"key": "k", "effect": "NoSchedule"}], "unschedulable": "yes"},
                "status": {"nodeInfo": {"kubeletVersion": 1.3}, "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "not a time"}]}}  # fmt: skip
    described = describe(snapshot_of([pool, odd_node]), Selection(), NOW).clusters[0].pools[0]
    assert described.counts.desired is None
    assert described.counts.provider_reported == 2
    assert described.pool.provider_ids == ("p1",)
    assert described.instances[0].node is not None
    assert described.instances[0].node.taints == ("k:NoSchedule",)


def test_a_machine_pool_instance_without_machine_or_infra_machine_is_a_problem() -> None:
    objects = [
        o for o in SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
        if o["metadata"]["name"] != "vmss-workers-1" or o["kind"] == "Node"
    ]  # fmt: skip
    pool = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0]
    lonely = next(
        i for i in pool.instances if i.provider_id and i.provider_id.endswith("/virtualMachines/1")
    )
    assert lonely.problems == ("no Machine and no infra machine for this providerID",)


def test_kinds_that_could_not_be_read_make_no_false_problems() -> None:
    objects = [
        o
        for o in SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
        if o["kind"] != "AzureMachinePoolMachine"
    ]
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    snapshot = Snapshot.of(
        [o for o in objects if o["kind"] != "Node"],
        workloads=[WorkloadNodes(None, None, nodes)],
        unread=[
            ("infrastructure.cluster.x-k8s.io", "AzureMachinePoolMachine"),
            ("cluster.x-k8s.io", "Cluster"),
        ],
    )
    cluster = describe(snapshot, Selection(), NOW).clusters[0]
    problems = {i.machine.object.name: i.problems for i in cluster.pools[0].instances if i.machine}
    assert problems["vmss-workers-1"] == ()
    assert not any("not found" in p for ps in problems.values() for p in ps)
    assert cluster.cluster is not None  # it was in the snapshot anyway
    assert cluster.cluster_unread is True


def test_replicas_managed_by_changes_what_deleting_a_vmss_instance_does() -> None:
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    next(o for o in objects if o["kind"] == "MachinePool")["metadata"]["annotations"] = {
        "cluster.x-k8s.io/replicas-managed-by": "external-autoscaler"
    }
    verdict = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0].deletion
    assert verdict.verdict is Verdict.SUPPORTED
    assert "VMSS stays one smaller" in verdict.reason
    assert verdict.honours_delete_annotation is False


def test_paused_by_the_cluster() -> None:
    objects = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE)
    next(o for o in objects if o["kind"] == "Cluster")["spec"]["paused"] = True
    cluster = describe(snapshot_of(objects), Selection(), NOW).clusters[0]
    assert cluster.paused
    assert cluster.pools[0].paused_by == "Cluster spec.paused"


def test_oke_version_lives_on_the_infra_pool() -> None:
    objects = SCENARIOS["eks-managed"]("v1beta2", NAMESPACE)
    infra = next(o for o in objects if o["kind"] == "AWSManagedMachinePool")
    infra["kind"], infra["spec"]["version"] = "OCIManagedMachinePool", "v1.33.5"
    mp = next(o for o in objects if o["kind"] == "MachinePool")
    mp["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "OCIManagedMachinePool"
    mp["spec"]["template"]["spec"]["version"] = "v1.32.0"  # the template is not what OKE rolls to
    pool = describe(snapshot_of(objects), Selection(), NOW).clusters[0].pools[0]
    assert pool.pool.desired_version == "v1.33.5"
    assert pool.instances
    assert all(i.healthy for i in pool.instances)  # kubelets v1.33.5-eks… match the infra version
