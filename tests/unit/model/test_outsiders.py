"""Nodes in no MachinePool (issue 14): every workload Node is accounted for in describe."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.documents import describe_document
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS, node, node_events
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import ClusterDescription, describe
from kubectl_machinepool.model.outsiders import OutsideNode, OutsideNodes, provider_group
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.render.treerows import Health, RowKind
from kubectl_machinepool.render.treeview import build_tree

ROOT = Path(__file__).resolve().parents[3]
CAPI = "cluster.x-k8s.io"
TAINT = {"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}
AZURE = (
    "azure:///subscriptions/6f1f5d1c-8d0e-4b8e-9a7e-2f3c1e0b7a11/resourceGroups/prod-rg/"
    "providers/Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{n}"
)
Obj = dict[str, Any]


def extra(
    name: str,
    provider_id: str,
    *,
    owner: tuple[str, str] | None = None,
    machine: str | None = None,
    labels: dict[str, str] | None = None,
    tainted: bool = False,
    ready: str = "True",
    since: str = "2026-11-29T14:30:00Z",
    cluster: str = "prod",
) -> Obj:
    """A Node no pool lists: owner annotations only when asked for."""
    obj = node(name, provider_id, "v1.33.4", NAMESPACE, cluster, "unused", ready, since, machine)
    notes = obj["metadata"]["annotations"]
    if owner is None:
        for key in ("owner-kind", "owner-name"):
            del notes[f"{CAPI}/{key}"]
    else:
        notes[f"{CAPI}/owner-kind"], notes[f"{CAPI}/owner-name"] = owner
    obj["metadata"]["labels"].update(labels or {})
    if tainted:
        obj["spec"]["taints"] = [TAINT]
    return obj


def cluster_of(objects: list[Obj]) -> ClusterDescription:
    [cluster] = describe(snapshot_of(objects), Selection(), NOW).clusters
    return cluster


def outside(scenario: str, *nodes: Obj, generation: str = "v1beta2") -> OutsideNodes:
    found = cluster_of(SCENARIOS[scenario](generation, NAMESPACE) + list(nodes)).outside
    assert found is not None
    return found


def only(found: OutsideNodes) -> OutsideNode:
    [listed] = found.listed
    return listed


# -- counted, not listed ----------------------------------------------------------------------


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_control_plane_nodes_are_counted_not_listed(generation: str) -> None:
    by_label = extra(
        "cp-0", "aws:///eu-west-1a/i-0cp0", labels={"node-role.kubernetes.io/control-plane": ""}
    )
    by_owner = extra("cp-1", "aws:///eu-west-1a/i-0cp1", owner=("KubeadmControlPlane", "prod-cp"))
    found = outside("aws-asg", by_label, by_owner, generation=generation)
    assert (found.control_plane, found.machine_deployments, found.listed) == (2, 0, ())


def test_machine_deployment_nodes_are_counted_not_listed() -> None:
    by_set = extra("md-0", "aws:///eu-west-1a/i-0md0", owner=("MachineSet", "md-abc"))
    by_machine = extra(
        "md-1", "aws:///eu-west-1a/i-0md1", machine="md-xyz-1", owner=("Machine", "x")
    )
    found = outside("aws-asg", by_set, by_machine)
    assert (found.control_plane, found.machine_deployments, found.listed) == (0, 2, ())


def test_a_pool_machines_node_is_not_a_machine_deployment_node() -> None:
    """Near miss: the machine annotation with owner-kind MachinePool is a pool's Node."""
    gone = extra("mpm-0", "azure:///x", machine="m-0", owner=("MachinePool", "old-pool"))
    found = outside("aws-asg", gone)
    assert found.machine_deployments == 0
    assert only(found).likely_pools == ("old-pool",)


def test_nodes_of_the_pools_are_not_outside() -> None:
    found = outside("azure-vmss")
    assert (found.total, found.listed) == (0, ())


# -- listed, with reasons ---------------------------------------------------------------------


def test_uninitialized_taint_and_how_long_since_ready() -> None:
    listed = only(outside("aws-asg", extra("n-0", "openstack:///x", tainted=True)))
    assert listed.tainted_for is not None
    assert listed.tainted_since_ready
    assert int(listed.tainted_for.total_seconds()) == 30 * 60
    assert listed.reasons == (
        "carries node.cluster.x-k8s.io/uninitialized:NoSchedule for 30m since Ready",
    )


def test_uninitialized_taint_on_a_notready_node_counts_from_creation() -> None:
    listed = only(outside("aws-asg", extra("n-0", "openstack:///x", tainted=True, ready="False")))
    assert not listed.tainted_since_ready
    assert listed.reasons == (
        "carries node.cluster.x-k8s.io/uninitialized:NoSchedule for 30m since creation",
        "NotReady",
    )


def test_a_node_without_the_taint_has_no_taint_reason() -> None:
    listed = only(outside("aws-asg", extra("n-0", "openstack:///x")))
    assert (listed.reasons, listed.tainted_for, listed.likely_pools) == ((), None, ())


def test_azure_instance_of_a_pools_vmss_names_the_pool() -> None:
    joined = extra("vmss-workers-000009", AZURE.format(vmss="vmss-workers", n=9))
    listed = only(outside("azure-vmss", joined))
    assert listed.likely_pools == ("vmss-workers",)
    assert listed.reasons == (
        "providerID looks like one of pool vmss-workers but is not in spec.providerIDList",
    )


def test_azure_instance_of_another_vmss_is_not_likely_the_pool() -> None:
    other = extra("other-000000", AZURE.format(vmss="vmss-other", n=0))
    listed = only(outside("azure-vmss", other))
    assert (listed.likely_pools, listed.reasons) == ((), ())


def test_aws_instance_in_a_zone_of_the_pool_names_it() -> None:
    listed = only(outside("aws-asg", extra("ip-9", "aws:///eu-west-1b/i-0fff")))
    assert listed.likely_pools == ("asg-workers",)


def test_aws_instance_in_another_zone_or_provider_is_not_likely_the_pool() -> None:
    found = outside(
        "aws-asg",
        extra("ip-8", "aws:///us-east-1a/i-0fff"),
        extra("ip-9", "gce://proj/eu-west-1b/i-0fff"),
    )
    assert [n.likely_pools for n in found.listed] == [(), ()]


def test_gce_instance_sharing_the_mig_prefix_names_the_pool() -> None:
    pid = "gce://prod-project/europe-west4-b/gke-prod-default-5f2a1c9e-zzzz"
    listed = only(outside("gke-managed", extra("gke-prod-default-5f2a1c9e-zzzz", pid)))
    assert listed.likely_pools == ("gke-default",)


def test_gce_instance_of_another_mig_or_project_is_not_likely_the_pool() -> None:
    found = outside(
        "gke-managed",
        extra("a", "gce://prod-project/europe-west4-a/gke-prod-other-77aa1c9e-zzzz"),
        extra("b", "gce://other-project/europe-west4-a/gke-prod-default-5f2a1c9e-zzzz"),
    )
    assert [n.likely_pools for n in found.listed] == [(), ()]


def test_provider_groups() -> None:
    assert provider_group(AZURE.format(vmss="VMSS-A", n=3)) == provider_group(
        AZURE.format(vmss="vmss-a", n=4)
    )
    assert provider_group("aws:///eu-west-1a/i-0abc") == ("aws", "eu-west-1a")
    assert provider_group("aws:///eu-west-1a/not-an-instance") is None
    assert provider_group("docker:////dev-dev-mp-0-x7q2p") is None
    assert provider_group(None) is None


def test_owner_annotations_of_a_deleted_pool_name_it_as_mp1001_does() -> None:
    orphan = extra(
        "old-0", "aws:///us-east-1a/i-0old", owner=("MachinePool", "old-pool"), ready="False"
    )
    objects = [*SCENARIOS["aws-asg"]("v1beta2", NAMESPACE), orphan]
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    [cluster] = description.clusters
    assert cluster.outside is not None
    listed = only(cluster.outside)
    assert listed.likely_pools == ("old-pool",)
    assert listed.reasons == (
        f"owner annotations name MachinePool {NAMESPACE}/old-pool, which does not exist",
        "NotReady",
    )
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    assert [f.subject for f in findings if f.code == "MP1001"] == ["Node old-0"]


def test_owner_annotations_of_an_existing_pool_keep_the_node_in_that_pool() -> None:
    """Near miss: a stale claim on an existing pool makes the Node that pool's instance."""
    stale = extra("ip-7", "aws:///us-east-1a/i-0sta", owner=("MachinePool", "asg-workers"))
    assert outside("aws-asg", stale).listed == ()


def test_a_dumps_nodes_of_another_cluster_stay_with_it() -> None:
    found = outside("aws-asg", extra("elsewhere", "openstack:///x", cluster="staging"))
    assert found.total == 0


def test_nothing_is_said_when_the_nodes_were_not_read() -> None:
    objects = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE)
    [cluster] = describe(snapshot_of(objects, nodes_known=False), Selection(), NOW).clusters
    assert cluster.outside is None


def examples(selection: Selection) -> dict[str, ClusterDescription]:
    snapshot = load_dump([str(ROOT / "examples")], None)
    return {c.name: c for c in describe(snapshot, selection, NOW).clusters}


def test_a_pools_view_holds_the_stray_instance_most_likely_its_own() -> None:
    whole = examples(Selection(namespace=NAMESPACE))["batch"].outside
    view = examples(Selection(namespace=NAMESPACE, names=("vmss-batch",)))["batch"].outside
    assert whole is not None
    assert view is not None
    assert [n.node.name for n in view.listed] == ["vmss-batch-000002"]
    assert view.listed == whole.listed
    assert view.kept_to == ("vmss-batch",)


def test_a_pools_view_leaves_out_the_nodes_of_the_pools_it_does_not_show() -> None:
    # prod's other pools claim their Nodes by providerIDList and nodeRefs although their
    # instances are not described: none of them is "in no MachinePool".
    for name in ("asg-workers", "eks-default", "vmss-workers"):
        view = examples(Selection(namespace=NAMESPACE, names=(name,)))["prod"].outside
        assert view is not None
        assert view.listed == (), name
    selected = examples(Selection(namespace=NAMESPACE, selector="nope=1"))
    assert selected == {}


def test_a_pools_events_hold_those_of_its_stray_node() -> None:
    objects = SCENARIOS["azure-image-drift"]("v1beta2", NAMESPACE)
    objects += node_events("vmss-batch-000002")
    selection = Selection(namespace=NAMESPACE, names=("vmss-batch",))
    [cluster] = describe(snapshot_of(objects), selection, NOW).clusters
    [pool] = cluster.pools
    assert {e.reason for e in pool.events} >= {"Starting", "NodeNotReady"}


# -- describe's tree and JSON -----------------------------------------------------------------

ZOO = [
    extra("cp-0", "aws:///eu-west-1a/i-0cp0", labels={"node-role.kubernetes.io/control-plane": ""}),
    extra("md-0", "aws:///eu-west-1a/i-0md0", owner=("MachineSet", "md-abc")),
    extra("ip-b", "aws:///eu-west-1b/i-0fff", tainted=True),
    extra("ip-a\x1b[31m", "openstack:///x", ready="False"),
]


def test_tree_groups_the_nodes_under_the_cluster() -> None:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) + ZOO)
    tree = build_tree(describe(snapshot, Selection(), NOW), NOW)
    [(root, _)] = tree.roots
    [group] = [r for r in root.children if r.kind is RowKind.GROUP]
    assert (group.label, group.message, group.health) == (
        "Nodes in no MachinePool",
        "control plane 1, MachineDeployments 1, others 2",
        Health.ERROR,
    )
    assert [(r.kind, r.label, r.message, r.problem) for r in group.children] == [
        (RowKind.NODE, "Node ip-a\x1b[31m", "NotReady", True),
        (
            RowKind.NODE,
            "Node ip-b",
            "carries node.cluster.x-k8s.io/uninitialized:NoSchedule for 30m since Ready; "
            "providerID looks like one of pool asg-workers but is not in spec.providerIDList",
            True,
        ),
    ]


def test_tree_shows_no_group_when_every_node_is_a_pools() -> None:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE))
    [(root, _)] = build_tree(describe(snapshot, Selection(), NOW), NOW).roots
    assert [r for r in root.children if r.kind is RowKind.GROUP] == []


def test_drawn_tree_escapes_node_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "dump.json"
    items = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) + ZOO
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    result = run_cli(capsys, "describe", "-f", str(dump), "--now", "2026-11-29T15:00:00Z")
    assert result.code == 0
    assert "Nodes in no MachinePool" in result.out
    assert "\x1b" not in result.out


def test_json_lists_the_nodes_with_uids_and_likely_pool() -> None:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) + ZOO)
    [cluster] = describe_document(describe(snapshot, Selection(), NOW))["clusters"]
    doc = cluster["nodesOutsidePools"]
    assert (doc["controlPlane"], doc["machineDeployments"], doc["others"]) == (1, 1, 2)
    assert [(n["name"], n["likelyPool"], n["uninitializedTaintSeconds"]) for n in doc["nodes"]] == [
        ("ip-a\x1b[31m", None, None),
        ("ip-b", "asg-workers", 1800),
    ]
    assert all(n["uid"] for n in doc["nodes"])


# -- every Node is accounted for --------------------------------------------------------------


def accounted(document: dict[str, Any]) -> int:
    """Nodes in describe -o json: the pools' instances' Nodes, listed outsiders, counted ones."""
    total = 0
    for cluster in document["clusters"]:
        names = {
            i["node"]["name"]
            for p in cluster["machinePools"]
            for i in p["instances"]
            if i["node"] is not None
        }
        rest = cluster["nodesOutsidePools"]
        names |= {n["name"] for n in rest["nodes"]}
        total += len(names) + rest["controlPlane"] + rest["machineDeployments"]
    return total


def with_zoo(generation: str, ns: str) -> list[Obj]:
    return SCENARIOS["aws-asg"](generation, ns) + copy.deepcopy(ZOO)


BUILDS = {**SCENARIOS, "aws-asg+outsiders": with_zoo}


@pytest.mark.parametrize("scenario", sorted(BUILDS))
@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_every_node_of_every_scenario_is_in_describe_json(scenario: str, generation: str) -> None:
    objects = BUILDS[scenario](generation, NAMESPACE)
    document = describe_document(describe(snapshot_of(objects), Selection(), NOW))
    assert accounted(document) == sum(1 for o in objects if o["kind"] == "Node")


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")))
def test_every_node_of_every_example_is_in_describe_json(
    example: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ROOT / "examples" / example
    items = yaml.safe_load(path.read_text())["items"]
    result = run_cli(
        capsys, "describe", "-f", str(path), "--now", "2026-11-29T15:00:00Z", "-o", "json"
    )
    assert result.code == 0
    assert accounted(json.loads(result.out)) == sum(1 for o in items if o["kind"] == "Node")


# -- R8 (MP0801) for Nodes no pool lists ------------------------------------------------------


def taint_findings(*nodes: Obj, generation: str = "v1beta2", **grace: Any) -> list[Any]:
    objects = [*SCENARIOS["aws-asg"](generation, NAMESPACE), *nodes]
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds(**grace))
    return [f for f in findings if f.code == "MP0801"]


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_r8_fires_for_an_unlisted_tainted_node_naming_the_likely_pool(generation: str) -> None:
    [finding] = taint_findings(
        extra("ip-b", "aws:///eu-west-1b/i-0fff", tainted=True), generation=generation
    )
    assert (finding.pool, finding.subject) == ("", "Node ip-b")
    assert finding.message == (
        "Node ip-b still carries node.cluster.x-k8s.io/uninitialized:NoSchedule 30m after "
        "turning Ready and no pool lists its providerID; it most likely belongs to asg-workers: "
        "same provider group as the pool's providerIDs"
    )


def test_r8_names_the_deleted_pool_of_an_orphan() -> None:
    orphan = extra("old-0", "openstack:///x", owner=("MachinePool", "old-pool"), tainted=True)
    [finding] = taint_findings(orphan)
    assert finding.message.endswith(
        "its owner annotations name MachinePool old-pool, which does not exist"
    )


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_r8_near_misses_for_unlisted_nodes(generation: str) -> None:
    """Within the grace, NotReady (the taint is expected then), untainted, or control plane."""
    quiet = [
        extra("fresh", "aws:///eu-west-1b/i-0f01", tainted=True, since="2026-11-29T14:58:00Z"),
        extra("down", "aws:///eu-west-1b/i-0f02", tainted=True, ready="False"),
        extra("clean", "aws:///eu-west-1b/i-0f03"),
        extra(
            "cp",
            "aws:///eu-west-1b/i-0f04",
            tainted=True,
            labels={"node-role.kubernetes.io/control-plane": ""},
        ),
    ]
    assert taint_findings(*quiet, generation=generation) == []


def test_r8_honours_the_taint_grace_for_unlisted_nodes() -> None:
    tainted = extra("ip-b", "aws:///eu-west-1b/i-0fff", tainted=True)
    assert taint_findings(tainted, taint=timedelta(minutes=31)) == []
    assert len(taint_findings(tainted, taint=timedelta(minutes=29))) == 1


def test_the_tree_tags_the_outside_node_with_its_finding() -> None:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) + ZOO)
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    [(root, _)] = build_tree(description, NOW, findings=findings).roots
    [group] = [r for r in root.children if r.kind is RowKind.GROUP]
    assert [(r.label, r.codes) for r in group.children] == [
        ("Node ip-a\x1b[31m", ()),
        ("Node ip-b", ("MP0104", "MP0801")),
    ]


def test_nodes_with_nothing_to_say_fold_into_one_row_unless_show_all() -> None:
    quiet = [extra(f"ip-q{i}", f"kwok://quiet-{i}") for i in range(3)]
    tainted = extra("ip-t", "kwok://tainted", tainted=True)
    snapshot = snapshot_of([*SCENARIOS["aws-asg"]("v1beta2", NAMESPACE), *quiet, tainted])
    description = describe(snapshot, Selection(), NOW)
    [(root, _)] = build_tree(description, NOW).roots
    [group] = [r for r in root.children if r.kind is RowKind.GROUP]
    assert group.message == "control plane 0, MachineDeployments 0, others 4"
    assert [r.label for r in group.children] == ["Node ip-t", "3 Nodes"]
    assert group.children[1].message == "no pool claims them; see ip-q0, ip-q1, ..."
    [(root, _)] = build_tree(description, NOW, show_all=True).roots
    [group] = [r for r in root.children if r.kind is RowKind.GROUP]
    assert [r.label for r in group.children] == [
        "Node ip-q0",
        "Node ip-q1",
        "Node ip-q2",
        "Node ip-t",
    ]


# -- R1e (MP0104): an instance joined, no pool tracks it --------------------------------------


def findings_of(scenario: str, *nodes: Obj, generation: str = "v1beta2", **grace: Any) -> list[Any]:
    snapshot = snapshot_of([*SCENARIOS[scenario](generation, NAMESPACE), *nodes])
    description = describe(snapshot, Selection(), NOW)
    return diagnose(description, snapshot, capi_version(snapshot, None), Thresholds(**grace))


def untracked(scenario: str, *nodes: Obj, **options: Any) -> list[Any]:
    return [f for f in findings_of(scenario, *nodes, **options) if f.code == "MP0104"]


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_an_instance_of_the_pools_vmss_that_no_list_holds_is_reported(generation: str) -> None:
    joined = extra("vm-9", AZURE.format(vmss="vmss-workers", n=9))
    [finding] = untracked("azure-vmss", joined, generation=generation)
    assert (finding.pool, finding.subject, finding.instances) == ("", "Node vm-9", ("vm-9",))
    assert finding.message == (
        f"Node vm-9 joined 30m ago with providerID {AZURE.format(vmss='vmss-workers', n=9)}, "
        "which looks like an instance of pool vmss-workers (the same VMSS), but no "
        "spec.providerIDList lists it: Cluster API does not count it, sync its labels or remove "
        "its uninitialized taint"
    )
    assert [(o.kind, o.name, o.uid) for o in finding.objects] == [
        ("Node", "vm-9", joined["metadata"]["uid"])
    ]


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_untracked_near_misses(generation: str) -> None:
    """Within --scaling-grace; another VMSS; an AWS zone alone (shared by other node groups)."""
    quiet = [
        extra("fresh", AZURE.format(vmss="vmss-workers", n=8), since="2026-11-29T14:59:00Z"),
        extra("other", AZURE.format(vmss="vmss-other", n=1)),
    ]
    assert untracked("azure-vmss", *quiet, generation=generation) == []
    assert (
        untracked("aws-asg", extra("zone", "aws:///eu-west-1a/i-0f0a"), generation=generation) == []
    )


def test_an_aws_node_of_the_zone_counts_as_untracked_with_the_taint() -> None:
    [finding] = untracked("aws-asg", extra("ip-t", "aws:///eu-west-1a/i-0f0b", tainted=True))
    assert "(the same zone, and it carries node.cluster.x-k8s.io/uninitialized:NoSchedule)" in (
        finding.message
    )


def test_untracked_honours_the_scaling_grace() -> None:
    joined = extra("vm-9", AZURE.format(vmss="vmss-workers", n=9))
    assert untracked("azure-vmss", joined, scaling=timedelta(minutes=31)) == []
    assert len(untracked("azure-vmss", joined, scaling=timedelta(minutes=29))) == 1


def test_a_gce_instance_of_the_pools_mig_is_untracked() -> None:
    pid = "gce://prod-project/europe-west4-a/gke-prod-default-5f2a1c9e-zz99"
    [finding] = untracked("gke-managed", extra("gke-new", pid))
    assert "(the same managed instance group)" in finding.message


def test_json_findings_about_nodes_carry_their_uids() -> None:
    orphan = extra("old-0", "openstack:///x", owner=("MachinePool", "old-pool"))
    joined = extra("vm-9", AZURE.format(vmss="vmss-workers", n=9))
    snapshot = snapshot_of([*SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE), orphan, joined])
    description = describe(snapshot, Selection(), NOW)
    findings = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    document = describe_document(description, findings)
    about = {
        f["code"]: f["objects"] for f in document["findings"] if f["code"] in ("MP1001", "MP0104")
    }
    assert about == {
        "MP1001": [{"kind": "Node", "name": "old-0", "uid": orphan["metadata"]["uid"]}],
        "MP0104": [{"kind": "Node", "name": "vm-9", "uid": joined["metadata"]["uid"]}],
    }


def test_an_unannotated_node_in_another_clusters_vmss_stays_with_that_cluster() -> None:
    """A dump of two workload clusters: a Node Cluster API never matched carries no Cluster
    annotation, but its VMSS names the Cluster whose pool is in that VMSS."""
    objects = [
        *SCENARIOS["aws-asg"]("v1beta2", NAMESPACE),
        *SCENARIOS["azure-image-drift"]("v1beta2", NAMESPACE),
    ]
    description = describe(snapshot_of(objects), Selection(), NOW)
    listed = {
        c.name: [o.node.name for o in c.outside.listed] for c in description.clusters if c.outside
    }
    assert listed == {"batch": ["vmss-batch-000002"], "prod": []}
