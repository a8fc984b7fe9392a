"""Where a pool lives in its cloud (model/cloud.py), over the shipped examples and the provider
scenarios, and over what a hostile cluster or dump could hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.cloud import PoolCloud, provider_parts
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump

ROOT = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def example_pools(name: str) -> list[PoolDescription]:
    snapshot = load_dump([str(ROOT / "examples" / f"{name}.yaml")], None)
    return [p for c in describe(snapshot, Selection(), NOW).clusters for p in c.pools]


def pool_of(objects: list[Obj], nodes_known: bool = True) -> PoolDescription:
    [cluster] = describe(snapshot_of(objects, nodes_known), Selection(), NOW).clusters
    [pool] = cluster.pools
    return pool


def cloud_of(objects: list[Obj], nodes_known: bool = True) -> PoolCloud:
    cloud = pool_of(objects, nodes_known).cloud
    assert cloud is not None
    return cloud


def scenario(name: str, generation: str = "v1beta2") -> list[Obj]:
    return SCENARIOS[name](generation, NAMESPACE)


def without_node(objects: list[Obj], provider_id: str) -> list[Obj]:
    return [
        o for o in objects if not (o["kind"] == "Node" and o["spec"]["providerID"] == provider_id)
    ]


def of_kind(objects: list[Obj], kind: str) -> Obj:
    return next(o for o in objects if o["kind"] == kind)


def ids_and_zones(cloud: PoolCloud) -> list[tuple[str | None, str | None, str | None]]:
    return sorted((i.id, i.id_source, i.zone) for i in cloud.instances)


# -- the shipped examples ---------------------------------------------------------------------


def test_an_asg_is_named_by_its_pool_and_its_instance_without_a_node_gets_the_aws_commands() -> (
    None
):
    [pool] = example_pools("aws-asg")
    cloud = pool.cloud
    assert cloud is not None
    assert (cloud.cloud, cloud.kind, cloud.name, cloud.pool_id, cloud.instance_type) == (
        "AWS", "Auto Scaling Group", "asg-workers", None, "m6i.xlarge"
    )  # fmt: skip
    assert cloud.images == (("launch template", "lt-0a1b2c3d4e5f67890 (version 4)"),)
    assert ids_and_zones(cloud) == [
        ("i-000000000003a5f10", "providerID", "eu-west-1a"),
        ("i-000000000003a5f11", "providerID", "eu-west-1b"),
        ("i-000000000003a5f12", "providerID", "eu-west-1c"),
    ]
    [stray] = cloud.never_joined
    assert stray.provider_id == "aws:///eu-west-1c/i-000000000003a5f12"
    assert stray.inspect == (
        "aws ec2 describe-instances --region eu-west-1 --instance-ids i-000000000003a5f12"
    )
    assert stray.replace == (
        "aws autoscaling terminate-instance-in-auto-scaling-group --region eu-west-1 "
        "--instance-id i-000000000003a5f12 --no-should-decrement-desired-capacity"
    )
    assert [i.joined for i in cloud.instances].count(True) == 2


def test_a_vmss_is_named_by_its_instances_provider_ids_and_shows_the_image_in_its_model() -> None:
    [pool] = example_pools("azure-vmss")
    cloud = pool.cloud
    assert cloud is not None
    assert (cloud.cloud, cloud.kind, cloud.name, cloud.instance_type) == (
        "Azure", "VMSS", "vmss-workers", "Standard_D4s_v5"
    )  # fmt: skip
    assert cloud.images == (("gallery image", "ClusterAPI-f72ceb4f/capi-ubun2-2404/1.33.4"),)
    # The VMSS instance ID is the AzureMachinePoolMachine's; Azure's providerIDs name no zone.
    assert ids_and_zones(cloud) == [
        (str(n), "AzureMachinePoolMachine spec.instanceID", f"westeurope-{n + 1}") for n in range(3)
    ]
    assert {i.zone_source for i in cloud.instances} == {"Node topology.kubernetes.io/zone"}
    assert cloud.never_joined == ()


def test_an_eks_node_group_is_named_by_spec_eks_nodegroup_name() -> None:
    [pool] = example_pools("eks-managed")
    cloud = pool.cloud
    assert cloud is not None
    assert (cloud.kind, cloud.name, cloud.instance_type, cloud.images) == (
        "EKS managed node group", "prod_eks-default", "m6i.large",
        (("AMI type", "AL2023_x86_64_STANDARD"),),
    )  # fmt: skip
    assert {i.zone for i in cloud.instances} == {"eu-west-1a"}


def test_the_image_drift_example_shows_the_reference_gallery_image_the_vmss_runs() -> None:
    [pool] = example_pools("azure-image-drift")
    cloud = pool.cloud
    assert cloud is not None
    assert (cloud.name, cloud.instance_type) == ("vmss-batch", "Standard_D8s_v5")
    assert cloud.images == (
        (
            "gallery image",
            "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019/capi-ubun2-2404/1.32.9",
        ),
    )
    assert [i.id for i in cloud.instances] == ["0", "1"]


# -- the other providers' scenarios ------------------------------------------------------------


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_a_gke_node_pool_and_an_instance_that_never_joined_it(generation: str) -> None:
    objects = scenario("gke-managed", generation)
    pid = "gce://prod-project/europe-west4-a/gke-prod-default-5f2a1c9e-9zp4"
    cloud = cloud_of(without_node(objects, pid))
    assert (cloud.cloud, cloud.kind, cloud.name, cloud.instance_type) == (
        "GCP", "GKE node pool", "default", "e2-standard-4"
    )  # fmt: skip
    [stray] = cloud.never_joined
    assert (stray.id, stray.zone) == ("gke-prod-default-5f2a1c9e-9zp4", "europe-west4-a")
    assert stray.inspect == (
        "gcloud compute instances describe gke-prod-default-5f2a1c9e-9zp4 --zone europe-west4-a "
        "--project prod-project"
    )
    # GKE's own instance groups hold the nodes: nothing verified to replace one by hand.
    assert stray.replace is None


def test_a_mig_is_named_after_its_cluster_and_pool_and_recreates_an_instance() -> None:
    objects = scenario("gke-managed")
    infra = of_kind(objects, "GCPManagedMachinePool")
    infra["kind"] = "GCPMachinePool"
    infra["spec"] = {
        "instanceType": "n2-standard-4",
        "imageFamily": "capi-ubuntu-2404-k8s-v1-32",
        "providerIDList": infra["spec"]["providerIDList"],
    }
    del infra["status"]["infrastructureMachineKind"]
    pool = of_kind(objects, "MachinePool")
    pool["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "GCPMachinePool"
    pid = "gce://prod-project/europe-west4-a/gke-prod-default-5f2a1c9e-0q1w"
    cloud = cloud_of(without_node(objects, pid))
    assert (cloud.kind, cloud.name, cloud.instance_type, cloud.images) == (
        "managed instance group", "prod-gke-default", "n2-standard-4",
        (("image", "family capi-ubuntu-2404-k8s-v1-32"),),
    )  # fmt: skip
    [stray] = cloud.never_joined
    assert stray.replace == (
        "gcloud compute instance-groups managed recreate-instances prod-gke-default --instances "
        "gke-prod-default-5f2a1c9e-0q1w --zone europe-west4-a --project prod-project"
    )


def test_an_aks_agent_pool_shows_the_node_image_its_aso_agent_pool_reports() -> None:
    objects = scenario("aks-managed")
    pid = of_kind(objects, "MachinePool")["spec"]["providerIDList"][1]
    cloud = cloud_of(without_node(objects, pid))
    assert (cloud.kind, cloud.name, cloud.instance_type) == (
        "AKS agent pool", "pool0", "Standard_D4s_v5"
    )  # fmt: skip
    assert cloud.images == (("node image", "AKSUbuntu-2204gen2containerd-202511.03.0"),)
    [stray] = cloud.never_joined
    assert stray.inspect == (
        "az vmss get-instance-view --resource-group mc_prod-rg_prod_westeurope "
        "--name aks-pool0-41982762-vmss --instance-id 1"
    )
    # AKS owns the node resource group: nothing to replace there by hand.
    assert stray.replace is None


def test_an_oci_instance_pool_names_its_instances_by_ocid_and_detaches_one_with_a_replacement() -> (
    None
):
    objects = scenario("oci-instance-pool")
    of_kind(objects, "OCIMachinePool")["spec"]["ocid"] = "ocid1.instancepool.oc1.eu-frankfurt-1.aaa"
    [joined, stray_node] = [o for o in objects if o["kind"] == "Node"]
    objects.remove(stray_node)
    machine = next(
        o
        for o in objects
        if o["kind"] == "Machine" and o["spec"]["providerID"] == stray_node["spec"]["providerID"]
    )
    del machine["status"]["nodeRef"]
    cloud = cloud_of(objects)
    assert (cloud.kind, cloud.name, cloud.pool_id, cloud.instance_type) == (
        "instance pool", "oci-workers", "ocid1.instancepool.oc1.eu-frankfurt-1.aaa",
        "VM.Standard.E5.Flex",
    )  # fmt: skip
    assert {i.id_source for i in cloud.instances} == {"OCIMachinePoolMachine spec.ocid"}
    [stray] = cloud.never_joined
    ocid = stray_node["spec"]["providerID"].removeprefix("oci://")
    assert stray.inspect == f"oci compute instance get --instance-id {ocid}"
    assert stray.replace == (
        "oci compute-management instance-pool-instance detach --instance-pool-id "
        f"ocid1.instancepool.oc1.eu-frankfurt-1.aaa --instance-id {ocid} --is-auto-terminate "
        "true --is-decrement-size false"
    )
    assert joined["spec"]["providerID"] != stray_node["spec"]["providerID"]


def test_scaleway_and_capd_give_what_their_objects_say() -> None:
    kapsule = cloud_of(scenario("scaleway-kapsule"))
    assert (kapsule.cloud, kapsule.name, kapsule.instance_type) == ("Scaleway", None, "PRO2-S")
    assert {(i.zone, i.zone_source) for i in kapsule.instances} == {("fr-par-1", "providerID")}
    capd = cloud_of(scenario("capd"))
    assert capd.images == (("image", "kindest/node:v1.34.0"),)
    assert {i.id for i in capd.instances} == {"dev-dev-mp-0-k9d4m", "dev-dev-mp-0-x7q2p"}


# -- what never joined, and what is not known ---------------------------------------------------


def test_without_the_nodes_nothing_is_said_to_have_never_joined() -> None:
    cloud = cloud_of(scenario("aws-asg"), nodes_known=False)
    assert {i.joined for i in cloud.instances} == {None}
    assert cloud.never_joined == ()


def test_an_instance_whose_machine_had_a_node_did_not_never_join() -> None:
    objects = scenario("azure-vmss")
    node = of_kind(objects, "Node")
    cloud = cloud_of([o for o in objects if o is not node])
    assert cloud.never_joined == ()
    [gone] = [i for i in cloud.instances if i.provider_id == node["spec"]["providerID"]]
    assert gone.joined is None


def test_an_infra_machine_without_a_provider_id_never_joined_and_is_looked_up_by_hand() -> None:
    objects = scenario("azure-vmss")
    ampm = of_kind(objects, "AzureMachinePoolMachine")
    name, pid = ampm["metadata"]["name"], ampm["spec"].pop("providerID")
    machine = next(o for o in objects if o["kind"] == "Machine" and o["metadata"]["name"] == name)
    del machine["spec"]["providerID"]
    del machine["status"]["nodeRef"]
    for kind in ("MachinePool", "AzureMachinePool"):
        of_kind(objects, kind)["spec"]["providerIDList"].remove(pid)
    cloud = cloud_of(without_node(objects, pid))
    [stray] = cloud.never_joined
    assert (stray.provider_id, stray.infra_machine, stray.id) == (None, name, "0")
    # The resource group and scale set are the other instances'.
    assert stray.inspect == (
        "az vmss get-instance-view --resource-group prod-rg --name vmss-workers --instance-id 0"
    )


# -- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider_id",
    [
        "aws:///eu-west-1a/i-0abc;touch${IFS}/tmp/owned",
        "aws:///eu-west-1a/i-0abc$(id)",
        "aws:///eu-west-1a/i-0abc\nrm -rf /",
        "aws:///eu-west-1a/" + "i" * 600,
        "gce://p/z/`id`",
    ],
)
def test_a_provider_id_part_outside_the_clouds_alphabet_is_never_taken(provider_id: str) -> None:
    parts = provider_parts(provider_id)
    assert "instance" not in parts
    objects = scenario("aws-asg")
    of_kind(objects, "MachinePool")["spec"]["providerIDList"].append(provider_id)
    cloud = cloud_of(objects)
    for instance in cloud.never_joined:
        assert instance.inspect is None or provider_id not in instance.inspect
        if instance.provider_id == provider_id:
            assert (instance.id, instance.inspect, instance.replace) == (None, None, None)


def test_an_azure_resource_group_that_needs_quoting_is_quoted() -> None:
    pid = (
        "azure:///subscriptions/s/resourceGroups/rg(prod)/providers/Microsoft.Compute/"
        "virtualMachineScaleSets/vmss-a/virtualMachines/7"
    )
    assert provider_parts(pid) == {"group": "rg(prod)", "scale_set": "vmss-a", "instance": "7"}
    objects = scenario("aks-managed")
    of_kind(objects, "MachinePool")["spec"]["providerIDList"].append(pid)
    [stray] = [i for i in cloud_of(objects).never_joined if i.provider_id == pid]
    assert stray.inspect == (
        "az vmss get-instance-view --resource-group 'rg(prod)' --name vmss-a --instance-id 7"
    )


@pytest.mark.parametrize("value", [["m6i.large"], {"type": "m6i.large"}, True, "x" * 600])
def test_a_field_of_the_wrong_type_or_size_reads_as_absent(value: Any) -> None:
    objects = scenario("eks-managed")
    infra = of_kind(objects, "AWSManagedMachinePool")
    infra["spec"]["instanceType"] = value
    infra["spec"]["eksNodegroupName"] = value
    infra["spec"]["amiType"] = value
    cloud = cloud_of(objects)
    assert (cloud.name, cloud.instance_type, cloud.images) == (None, None, ())


def test_a_kind_without_verified_cloud_fields_has_no_cloud() -> None:
    objects = scenario("capd")
    for obj in objects:
        if obj["kind"] in ("DockerMachinePool", "DockerMachine"):
            obj["kind"] = "KwokMachinePool" if obj["kind"] == "DockerMachinePool" else "KwokMachine"
    pool = of_kind(objects, "MachinePool")
    pool["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "KwokMachinePool"
    assert pool_of(objects).cloud is None
