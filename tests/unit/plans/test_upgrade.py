"""upgrade's plan for every infra pool kind in the registry, both API generations: which fields it
derives, which it takes from --set, which it refuses, and the writes that carry them."""

from __future__ import annotations

from typing import Any

import pytest
from support.objects import NOW, infra_pool, machine_pool
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.revisions import ANNOTATION
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.upgrade import UpgradeRequest, field_plan, plan_upgrade, settable
from kubectl_machinepool.plans.writes import Write
from kubectl_machinepool.providers.registry import PROVIDERS

GENERATIONS = pytest.mark.parametrize("generation", ["v1beta1", "v1beta2"])
TARGET = "v1.34.1"
Obj = dict[str, Any]
REFERENCE = "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019"


def pool_of(
    kind: str, spec: Obj, generation: str, version: str = "v1.33.4"
) -> tuple[PoolDescription, list[Obj]]:
    objects = [
        machine_pool(generation, "workers", NAMESPACE, "prod", infra_kind=kind, version=version),
        infra_pool(kind, "workers", NAMESPACE, "prod", spec=spec),
    ]
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    return pool, objects


# kind, the infra pool's spec, --set, the fields changed (path: new value), refused paths.
CASES: list[tuple[str, str, Obj, dict[str, str], dict[str, Any], set[str]]] = [
    ("reference gallery", "AzureMachinePool",
     {"template": {"image": {"computeGallery": {"gallery": REFERENCE, "name": "capi-ubun2-2404", "version": "1.33.4"}}}},
     {}, {"spec.template.image.computeGallery.version": "1.34.1"}, set()),
    ("own gallery", "AzureMachinePool",
     {"template": {"image": {"computeGallery": {"gallery": "payments-images", "name": "ubuntu", "version": "2025.11.3"}}}},
     {}, {}, {"spec.template.image.computeGallery.version"}),
    ("own gallery given", "AzureMachinePool",
     {"template": {"image": {"computeGallery": {"gallery": "payments-images", "name": "ubuntu", "version": "2025.11.3"}}}},
     {"spec.template.image.computeGallery.version": "2025.12.1"},
     {"spec.template.image.computeGallery.version": "2025.12.1"}, set()),
    ("image cleared", "AzureMachinePool",
     {"template": {"image": {"id": "/subscriptions/x/images/custom-1.33"}}},
     {"spec.template.image": ""}, {"spec.template.image": None}, set()),
    ("capi offer", "AzureMachinePool",
     {"template": {"image": {"marketplace": {"publisher": "cncf-upstream", "offer": "capi", "sku": "ubuntu-2204-gen1", "version": "130.3.20240717"}}}},
     {}, {}, {"spec.template.image.marketplace.version"}),
    ("default image", "AzureMachinePool", {"template": {"vmSize": "Standard_D4s_v5"}}, {}, {}, set()),
    ("ami id", "AWSMachinePool", {"awsLaunchTemplate": {"ami": {"id": "ami-0abc1234567890def"}}},
     {}, {}, {"spec.awsLaunchTemplate.ami.id"}),
    ("ami id given", "AWSMachinePool", {"awsLaunchTemplate": {"ami": {"id": "ami-0abc1234567890def"}}},
     {"spec.awsLaunchTemplate.ami.id": "ami-0fedcba987654321a"},
     {"spec.awsLaunchTemplate.ami.id": "ami-0fedcba987654321a"}, set()),
    ("ami looked up", "AWSMachinePool", {"awsLaunchTemplate": {"instanceType": "m6i.xlarge"}}, {}, {}, set()),
    ("eks release", "AWSManagedMachinePool", {"amiVersion": "1.33.4-20250904", "amiType": "AL2023_x86_64_STANDARD"},
     {}, {}, {"spec.amiVersion"}),
    ("eks release cleared", "AWSManagedMachinePool", {"amiVersion": "1.33.4-20250904"},
     {"spec.amiVersion": ""}, {"spec.amiVersion": None}, set()),
    ("rosa", "ROSAMachinePool", {"version": "4.17.3"}, {}, {}, {"spec.version"}),
    ("rosa given", "ROSAMachinePool", {"version": "4.17.3"}, {"spec.version": "4.18.1"},
     {"spec.version": "4.18.1"}, set()),
    ("aks", "AzureManagedMachinePool", {"mode": "System"}, {}, {}, set()),
    ("aso", "AzureASOManagedMachinePool",
     {"resources": [{"apiVersion": "containerservice.azure.com/v1api20240901", "kind": "ManagedClustersAgentPool",
                     "spec": {"azureName": "pool0", "orchestratorVersion": "1.33.4"}}]},
     {}, {"spec.resources[].spec.orchestratorVersion": "1.34.1"}, set()),
    ("capg family", "GCPMachinePool", {"imageFamily": "projects/p/global/images/family/capi-ubuntu-2204-k8s-v1-33"},
     {}, {"spec.imageFamily": "projects/p/global/images/family/capi-ubuntu-2204-k8s-v1-34"}, set()),
    ("own family", "GCPMachinePool", {"imageFamily": "payments-hardened"}, {}, {}, {"spec.imageFamily"}),
    ("gcp image", "GCPMachinePool", {"image": "projects/p/global/images/ubuntu-1-33"}, {}, {}, {"spec.image"}),
    ("gke", "GCPManagedMachinePool", {"nodePoolName": "default"}, {}, {}, set()),
    ("oci image", "OCIMachinePool",
     {"instanceConfiguration": {"instanceSourceViaImageConfig": {"imageId": "ocid1.image.oc1..aaaa"}}},
     {}, {}, {"spec.instanceConfiguration.instanceSourceViaImageConfig.imageId"}),
    ("oke", "OCIManagedMachinePool", {"version": "v1.33.1"}, {}, {"spec.version": "v1.34.1"}, set()),
    ("oke pinned image", "OCIManagedMachinePool",
     {"version": "v1.33.1", "nodeSourceViaImage": {"imageId": "ocid1.image.oc1..bbbb"}},
     {}, {"spec.version": "v1.34.1"}, {"spec.nodeSourceViaImage.imageId"}),
    ("oke image cleared", "OCIManagedMachinePool",
     {"version": "v1.33.1", "nodeSourceViaImage": {"imageId": "ocid1.image.oc1..bbbb"}},
     {"spec.nodeSourceViaImage.imageId": ""},
     {"spec.version": "v1.34.1", "spec.nodeSourceViaImage.imageId": None}, set()),
    ("kapsule", "ScalewayManagedMachinePool", {"zone": "fr-par-1"}, {}, {}, set()),
    ("dev kindest", "DevMachinePool", {"backend": {"docker": {"customImage": "kindest/node:v1.33.1"}}},
     {}, {"spec.backend.docker.customImage": "kindest/node:v1.34.1"}, set()),
    ("docker kindest", "DockerMachinePool", {"template": {"customImage": "kindest/node:v1.33.1"}},
     {}, {"spec.template.customImage": "kindest/node:v1.34.1"}, set()),
    ("docker own image", "DockerMachinePool", {"template": {"customImage": "registry.example/node:hardened"}},
     {}, {}, {"spec.template.customImage"}),
    ("kwok", "KwokMachinePool", {}, {}, {}, set()),
]  # fmt: skip


@GENERATIONS
@pytest.mark.parametrize(
    ("case", "kind", "spec", "sets", "changed", "refused"), CASES, ids=[c[0] for c in CASES]
)
def test_each_field_is_derived_given_or_refused(
    case: str, kind: str, spec: Obj, sets: dict[str, str], changed: dict[str, Any],
    refused: set[str], generation: str,
) -> None:  # fmt: skip
    pool, objects = pool_of(kind, spec, generation)
    infra = objects[1]
    plan = field_plan(pool, infra, UpgradeRequest(TARGET, tuple(sets.items())))
    assert {c.path: c.new for c in plan.changes} == changed
    assert len(plan.refusals) == len(refused)
    assert all(any(f" {path}" in r for r in plan.refusals) for path in refused)


def test_every_registry_kind_has_a_case() -> None:
    assert {p.kind for p in PROVIDERS} <= {c[1] for c in CASES} | {"OCIVirtualMachinePool"}


@GENERATIONS
def test_oke_virtual_node_pools_are_refused(generation: str) -> None:
    pool, objects = pool_of("OCIVirtualMachinePool", {}, generation)
    plan = field_plan(pool, objects[1], UpgradeRequest(TARGET))
    assert plan.refusals == (
        f"OCIVirtualMachinePool {NAMESPACE}/workers cannot be upgraded through Cluster API: OKE "
        "versions virtual nodes itself: CAPOCI sends no version (cloud/scope/virtual_machine_pool.go)",
    )


def test_a_refusal_names_the_field_its_value_and_the_ways_out() -> None:
    pool, objects = pool_of(
        "AWSMachinePool", {"awsLaunchTemplate": {"ami": {"id": "ami-0abc"}}}, "v1beta2"
    )
    [refusal] = field_plan(pool, objects[1], UpgradeRequest(TARGET)).refusals
    assert refusal == (
        f"AWSMachinePool {NAMESPACE}/workers spec.awsLaunchTemplate.ami.id='ami-0abc' is not "
        "derived from a release here: give the one for v1.34.1 with --set "
        "spec.awsLaunchTemplate.ami.id=VALUE, or --set spec.awsLaunchTemplate.ami.id= to let "
        "the provider derive it"
    )


def test_settable_paths_are_the_kind_s_fields_and_what_clears_them() -> None:
    pool, _ = pool_of("AzureMachinePool", {}, "v1beta2")
    assert settable(pool) == (
        "spec.template.image.computeGallery.version",
        "spec.template.image.sharedGallery.version",
        "spec.template.image.marketplace.version",
        "spec.template.image.id",
        "spec.template.image",
    )


def _plan(kind: str, spec: Obj, generation: str = "v1beta2", **kwargs: Any):  # type: ignore[no-untyped-def]
    pool, objects = pool_of(kind, spec, generation)
    snapshot = snapshot_of(objects)
    return plan_upgrade(
        pool, snapshot, UpgradeRequest(TARGET, **kwargs), NOW, plural=kind.lower() + "s",
        permissions=lambda writes: {w.access: True for w in writes},
    )  # fmt: skip


def _shape(writes: tuple[Write, ...]) -> list[tuple[str, Any]]:
    """Each write's object and body, the revision it records left out (test_recording.py)."""
    return [(w.target.kind, _unrecorded(w.body)) for w in writes]


def _unrecorded(body: Any) -> Any:
    meta = body.get("metadata", {})
    notes = {k: v for k, v in meta.get("annotations", {}).items() if k != ANNOTATION}
    rest = {k: v for k, v in meta.items() if k != "annotations"} | (
        {"annotations": notes} if notes else {}
    )
    return {k: v for k, v in body.items() if k != "metadata"} | ({"metadata": rest} if rest else {})


@GENERATIONS
def test_the_writes_pause_write_both_and_unpause(generation: str) -> None:
    spec = {
        "template": {
            "image": {
                "computeGallery": {
                    "gallery": REFERENCE,
                    "name": "capi-ubun2-2404",
                    "version": "1.33.4",
                }
            }
        }
    }
    plan = _plan("AzureMachinePool", spec, generation)
    paused = "cluster.x-k8s.io/paused"
    assert _shape(plan.writes) == [
        ("AzureMachinePool", {"metadata": {"annotations": {paused: ""}}}),
        ("MachinePool", {"spec": {"template": {"spec": {"version": TARGET}}}}),
        (
            "AzureMachinePool",
            {"spec": {"template": {"image": {"computeGallery": {"version": "1.34.1"}}}}},
        ),
        ("AzureMachinePool", {"metadata": {"annotations": {paused: None}}}),
    ]
    assert plan.writes[2].undo == {
        "spec": {"template": {"image": {"computeGallery": {"version": "1.33.4"}}}}
    }
    assert plan.writes[-1].undo is None  # once unpaused the provider acts: nothing to take back


def test_without_infra_fields_the_version_alone_is_one_write() -> None:
    plan = _plan("GCPManagedMachinePool", {"nodePoolName": "default"})
    assert _shape(plan.writes) == [
        ("MachinePool", {"spec": {"template": {"spec": {"version": TARGET}}}})
    ]


def test_a_list_field_writes_the_whole_list_and_takes_it_back_whole() -> None:
    agent = {
        "apiVersion": "containerservice.azure.com/v1api20240901",
        "kind": "ManagedClustersAgentPool",
        "spec": {"azureName": "pool0", "orchestratorVersion": "1.33.4", "count": 3},
    }
    other = {"apiVersion": "v1", "kind": "ConfigMap", "spec": {"data": "x"}}
    plan = _plan("AzureASOManagedMachinePool", {"resources": [agent, other]})
    body, undo = plan.writes[2].body, plan.writes[2].undo
    assert body == {
        "spec": {
            "resources": [
                {**agent, "spec": {**agent["spec"], "orchestratorVersion": "1.34.1"}},
                other,
            ]
        }
    }
    assert undo == {"spec": {"resources": [agent, other]}}


def test_an_infra_pool_paused_by_someone_else_stays_paused() -> None:
    pool, objects = pool_of(
        "DockerMachinePool", {"template": {"customImage": "kindest/node:v1.33.1"}}, "v1beta2"
    )
    objects[1]["metadata"]["annotations"] = {"cluster.x-k8s.io/paused": ""}
    snapshot = snapshot_of(objects)
    [pool] = [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]
    plan = plan_upgrade(
        pool, snapshot, UpgradeRequest(TARGET, force=True), NOW, plural="dockermachinepools",
        permissions=lambda writes: {w.access: True for w in writes},
    )  # fmt: skip
    assert [w.target.kind for w in plan.writes] == ["MachinePool", "DockerMachinePool"]
    assert any(c.level is Level.WARNING and "paused" in c.message for c in plan.checks)


def test_the_same_version_with_nothing_to_change_is_nothing_to_do() -> None:
    pool, objects = pool_of("GCPManagedMachinePool", {}, "v1beta2", version=TARGET)
    snapshot = snapshot_of(objects)
    plan = plan_upgrade(
        pool, snapshot, UpgradeRequest(TARGET), NOW, plural="gcpmanagedmachinepools",
        permissions=lambda _writes: {},
    )  # fmt: skip
    assert plan.nothing_to_do


def test_a_pool_at_the_version_with_its_image_behind_writes_the_image_alone() -> None:
    spec = {
        "template": {
            "image": {
                "computeGallery": {
                    "gallery": REFERENCE,
                    "name": "capi-ubun2-2404",
                    "version": "1.33.4",
                }
            }
        }
    }
    pool, objects = pool_of("AzureMachinePool", spec, "v1beta2", version=TARGET)
    snapshot = snapshot_of(objects)
    plan = plan_upgrade(
        pool, snapshot, UpgradeRequest(TARGET), NOW, plural="azuremachinepools",
        permissions=lambda writes: {w.access: True for w in writes},
    )  # fmt: skip
    assert [w.summary.split(" on ")[0] for w in plan.writes] == [
        "annotate AzureMachinePool capi-prod/workers cluster.x-k8s.io/paused: the provider waits for both changes",
        "set spec.template.image.computeGallery.version=1.34.1",
        # The MachinePool's version is not written: the revision is a write of its own, before
        # the one that cannot be taken back.
        "record revision 1 (kubectl-machinepool/revisions)",
        "remove cluster.x-k8s.io/paused from AzureMachinePool capi-prod/workers: the provider rolls once, to both",
    ]
    assert not plan.nothing_to_do
