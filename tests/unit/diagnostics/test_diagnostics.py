"""Every diagnose rule: a realistic case where it fires and a near miss where it must not.

Each case starts from a provider scenario (the same objects the describe tests use) and changes
what the situation needs, the way a controller or an operator would have left the objects.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from support.healthchecks import health_checked
from support.objects import NOW, T0
from support.ownership import carrying, owned_pool
from support.scenarios import SCENARIOS, condition, core_manager, node, zoned
from support.snapshots import NAMESPACE

from kubectl_machinepool.diagnostics.core import CapiVersion, Severity
from kubectl_machinepool.diagnostics.rules import BY_CODE, RULES, capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes

Obj = dict[str, Any]
AGO = lambda minutes: (NOW - timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")  # noqa: E731
HOUR_AGO, MINUTE_AGO = AGO(60), AGO(1)


def find(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    return next(
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    )


def pool(objects: list[Obj]) -> Obj:
    return find(objects, "MachinePool")


def v1beta1(objects: list[Obj]) -> bool:
    return pool(objects)["apiVersion"].endswith("/v1beta1")


def legacy_status(objects: list[Obj]) -> Obj:
    """Where the Node-based counters, v1beta1 conditions and failure fields live."""
    status = pool(objects)["status"]
    return status if v1beta1(objects) else status["deprecated"]["v1beta1"]


def legacy_conditions(objects: list[Obj]) -> list[Obj]:
    return legacy_status(objects)["conditions"]


def set_legacy(objects: list[Obj], kind: str, **fields: Any) -> None:
    cond = next(c for c in legacy_conditions(objects) if c["type"] == kind)
    cond.update(fields)


@pytest.fixture
def run() -> Callable[..., list[Any]]:
    def run_rules(
        scenario: str,
        change: Callable[[list[Obj]], Any] | None = None,
        *,
        nodes_known: bool = True,
        unreachable: bool = False,
        capi: str | None = None,
        secrets_scope: str | None = None,
        tokens: tuple[str, ...] | None = None,
        healthy: bool = False,
        generation: str = "v1beta2",
    ) -> list[Any]:
        objects = (
            SCENARIOS[scenario](generation, NAMESPACE, healthy=healthy)
            if healthy
            else SCENARIOS[scenario](generation, NAMESPACE)
        )
        if change is not None:
            change(objects)
        nodes = tuple(o for o in objects if o["kind"] == "Node")
        workload = WorkloadNodes(
            None,
            None,
            nodes if nodes_known else None,
            token_secrets=tokens,
            unreachable=unreachable,
        )
        snapshot = Snapshot.of(
            [o for o in objects if o["kind"] != "Node"],
            workloads=[workload],
            secrets_scope=secrets_scope,
        )
        description = describe(snapshot, Selection(), NOW)
        return diagnose(description, snapshot, capi_version(snapshot, capi), Thresholds())

    return run_rules


def codes(findings: list[Any]) -> set[str]:
    return {f.code for f in findings}


# -- changes that set a situation up -------------------------------------------------------------


def short_scaling_up(objects: list[Obj]) -> None:
    """The providerIDList just changed: the controller reset its ready count a minute ago."""
    set_legacy(objects, "ReplicasReady", lastTransitionTime=MINUTE_AGO)
    set_legacy(objects, "Ready", lastTransitionTime=MINUTE_AGO)


def ready_node_outside_list(objects: list[Obj]) -> None:
    stray = node(
        "ip-10-0-9-99.eu-west-1.compute.internal",
        "aws:///eu-west-1a/i-0stray",
        "v1.33.4",
        NAMESPACE,
        "prod",
        "asg-workers",
    )
    stray["spec"]["taints"] = [
        {"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}
    ]
    objects.append(stray)


def not_ready_stray(objects: list[Obj]) -> None:
    ready_node_outside_list(objects)
    find(objects, "Node", "ip-10-0-9-99.eu-west-1.compute.internal")["status"]["conditions"][1][
        "status"
    ] = "False"


def scaling_with_two_authorities(objects: list[Obj]) -> None:
    mp = pool(objects)
    mp["status"]["phase"] = "Scaling"
    mp["metadata"]["annotations"].update({
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "2",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "6",
    })  # fmt: skip


def managers(*names: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        pool(objects)["metadata"]["managedFields"] = [
            {
                "manager": n,
                "operation": "Update",
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}},
            }
            for n in names
        ]

    return change


def replicas(count: int) -> Callable[[list[Obj]], None]:
    return lambda objects: pool(objects)["spec"].update(replicas=count)


def autoscaler_min(value: str) -> Callable[[list[Obj]], None]:
    key = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
    return lambda objects: pool(objects)["metadata"]["annotations"].update({key: value})


def pool_version(value: str) -> Callable[[list[Obj]], None]:
    return lambda objects: pool(objects)["spec"]["template"]["spec"].update(version=value)


def infrastructure_not_ready(reason: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        set_legacy(
            objects,
            "InfrastructureReady",
            status="False",
            reason=reason,
            severity="Error" if reason == "IncorrectExternalRef" else "Info",
        )
        if v1beta1(objects):
            pool(objects)["status"]["infrastructureReady"] = False
        else:
            pool(objects)["status"]["initialization"]["infrastructureProvisioned"] = False
        # What the controller copies from: the infra pool's own readiness field.
        find(objects, "AWSMachinePool")["status"]["ready"] = False

    return change


def brand_new_pool_waiting(objects: list[Obj]) -> None:
    infrastructure_not_ready("WaitingForInfrastructure")(objects)
    pool(objects)["status"].pop("nodeRefs")


def oci_failure(objects: list[Obj]) -> None:
    find(objects, "OCIMachinePool")["status"].update(
        failureReason="InstancePoolProvisionFailed", failureMessage="Out of host capacity"
    )


def pool_failure(message: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        legacy_status(objects).update(failureReason="InvalidConfiguration", failureMessage=message)

    return change


def both_failing(objects: list[Obj]) -> None:
    pool_failure("MachinePool infrastructure resource was not ready")(objects)
    find(objects, "AWSMachinePool")["status"].update(
        failureReason="ASGProvisionFailed", failureMessage="quota exceeded"
    )


def node_ref_uid(objects: list[Obj]) -> None:
    pool(objects)["status"]["nodeRefs"][0]["uid"] = "00000000-dead-beef-0000-000000000000"


def node_ref_missing(objects: list[Obj]) -> None:
    pool(objects)["status"]["nodeRefs"].append(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "name": "ip-10-0-7-7.eu-west-1.compute.internal",
            "uid": "x",
        }
    )


def recent_replicas_ready(objects: list[Obj]) -> None:
    set_legacy(objects, "ReplicasReady", lastTransitionTime=MINUTE_AGO)


def duplicate_node(objects: list[Obj]) -> None:
    first = find(objects, "Node", "ip-10-0-0-17.eu-west-1.compute.internal")
    objects.append(
        node(
            "ip-10-0-0-18.eu-west-1.compute.internal",
            first["spec"]["providerID"],
            "v1.33.4",
            NAMESPACE,
            "prod",
            "asg-workers",
        )
    )


def taint(ready_since: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        target = find(objects, "Node", "ip-10-0-0-17.eu-west-1.compute.internal")
        target["spec"]["taints"] = [
            {"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}
        ]
        target["status"]["conditions"][1]["lastTransitionTime"] = ready_since

    return change


def deleting(
    since: str,
    *,
    drop: tuple[str, ...] = (),
    without_cluster: bool = False,
    failure: str | None = None,
) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        pool(objects)["metadata"]["deletionTimestamp"] = since
        pool(objects)["status"]["phase"] = "Deleting"
        for kind in drop:
            objects.remove(find(objects, kind))
        if without_cluster:
            objects.remove(find(objects, "Cluster"))
        if failure:
            pool_failure(failure)(objects)

    return change


def orphan_node(owner: str) -> Callable[[list[Obj]], None]:
    return lambda objects: objects.append(
        node(
            "ip-10-0-5-5.eu-west-1.compute.internal",
            "aws:///eu-west-1a/i-0gone",
            "v1.33.4",
            NAMESPACE,
            "prod",
            owner,
        )
    )


def upgrade_reported_done(observed: int) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        mp = pool(objects)
        mp["metadata"]["generation"] = 2
        mp["status"]["observedGeneration"] = observed
        set_legacy(objects, "Ready", status="True", reason=None)

    return change


def control_plane(version: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        objects.append({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
            "metadata": {"name": "prod-control-plane", "namespace": NAMESPACE},
            "spec": {"version": version, "replicas": 3}, "status": {"version": version, "replicas": 3},
        })  # fmt: skip

    return change


def oke_versions(infra_version: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        infra = find(objects, "AWSManagedMachinePool")
        infra["kind"], infra["spec"]["version"] = "OCIManagedMachinePool", infra_version
        pool(objects)["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = (
            "OCIManagedMachinePool"
        )

    return change


def topology_bootstrap(applied: str) -> Callable[[list[Obj]], None]:
    """A ClusterClass pool whose KubeadmConfig CABPK has written (generation 3) and the topology
    controller last applied at `applied`."""

    def change(objects: list[Obj]) -> None:
        pool(objects)["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
        config = find(objects, "KubeadmConfig")
        config["metadata"]["generation"] = 3
        spec_fields = {"f:spec": {"f:joinConfiguration": {"f:nodeRegistration": {}}}}
        config["metadata"]["managedFields"] = [
            {"manager": "capi-topology", "operation": "Apply", "time": applied, "fieldsType": "FieldsV1", "fieldsV1": spec_fields},
            {"manager": "manager", "operation": "Update", "time": HOUR_AGO, "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:joinConfiguration": {"f:discovery": {}}}}},
        ]  # fmt: skip

    return change


def paused(objects: list[Obj]) -> None:
    pool(objects)["metadata"].setdefault("annotations", {})["cluster.x-k8s.io/paused"] = ""
    status = pool(objects)["status"]
    current = status["v1beta2"]["conditions"] if v1beta1(objects) else status["conditions"]
    current[:] = [condition("Paused", "True", "Paused", when=HOUR_AGO)]


def running(objects: list[Obj]) -> None:
    pool(objects)["status"]["phase"] = "Running"


def node_ref_without_uid(objects: list[Obj]) -> None:
    """Older objects record nodeRefs without uids: nothing to compare."""
    pool(objects)["status"]["nodeRefs"][0].pop("uid")


def duplicate_foreign_nodes(objects: list[Obj]) -> None:
    for name in (
        "ip-10-0-8-1.eu-west-1.compute.internal",
        "ip-10-0-8-2.eu-west-1.compute.internal",
    ):
        objects.append(node(name, "aws:///eu-west-1a/i-0other", "v1.33.4", NAMESPACE, "prod", "other-pool"))  # fmt: skip


def no_machine_kind(kind: str) -> Callable[[list[Obj]], None]:
    return lambda objects: find(objects, kind)["status"].pop("infrastructureMachineKind")


def copied_v1beta2_counter(objects: list[Obj]) -> None:
    """Cluster API 1.11+ serving v1beta1 reports the v1beta2 counters under status.v1beta2."""
    status = pool(objects)["status"]
    if v1beta1(objects):
        status["v1beta2"]["readyReplicas"] = status["replicas"]


def new_vmss_instance(created: str, claimed: bool = True) -> Callable[[list[Obj]], None]:
    """An AzureMachinePoolMachine (and its Node) for a VM the pool does not list or own yet."""

    def change(objects: list[Obj]) -> None:
        model = find(objects, "AzureMachinePoolMachine", "vmss-workers-1")
        pid = model["spec"]["providerID"].rsplit("/", 1)[0] + "/7"
        extra = json.loads(json.dumps(model))
        extra["metadata"].update(name="vmss-workers-7", uid="ampm-7", creationTimestamp=created)
        extra["metadata"]["ownerReferences"] = extra["metadata"]["ownerReferences"][:1]
        extra["spec"]["providerID"] = pid
        objects.append(extra)
        fresh = node("vmss-workers-000007", pid, "v1.33.4", NAMESPACE, "prod", "vmss-workers")
        if not claimed:
            fresh["metadata"]["annotations"] = {}
        objects.append(fresh)

    return change


def untracked_vmss_node(created: str) -> Callable[[list[Obj]], None]:
    """A VM of the pool's VMSS joined as a Node that no providerIDList lists and no owner
    annotation ties to a pool (the list froze, or the VMSS was scaled outside Cluster API)."""

    def change(objects: list[Obj]) -> None:
        model = find(objects, "AzureMachinePoolMachine", "vmss-workers-1")
        pid = model["spec"]["providerID"].rsplit("/", 1)[0] + "/9"
        fresh = node(
            "vmss-workers-000009", pid, "v1.33.4", NAMESPACE, "prod", "vmss-workers", since=created
        )
        for key in ("owner-kind", "owner-name"):
            del fresh["metadata"]["annotations"][f"cluster.x-k8s.io/{key}"]
        objects.append(fresh)

    return change


def waiting_for_data_secret(objects: list[Obj]) -> None:
    set_legacy(
        objects, "BootstrapReady", status="False", reason="WaitingForDataSecret", severity="Info"
    )


def without(kind: str, name: str | None = None) -> Callable[[list[Obj]], None]:
    return lambda objects: objects.remove(find(objects, kind, name))


def join_token(objects: list[Obj]) -> None:
    find(objects, "KubeadmConfig")["spec"]["joinConfiguration"]["discovery"] = {
        "bootstrapToken": {"token": "abcdef.0123456789abcdef"}
    }


def owner_remediated_false(objects: list[Obj]) -> None:
    machine = find(objects, "Machine", "vmss-workers-1")
    machine["status"]["conditions"].append(
        condition("OwnerRemediated", "False", "WaitingForRemediation")
    )


def no_autoscaler(objects: list[Obj]) -> None:
    annotations = pool(objects)["metadata"].get("annotations", {})
    for key in list(annotations):
        if "autoscaler" in key:
            del annotations[key]


def asg_with_machines(objects: list[Obj]) -> None:
    find(objects, "AWSMachinePool")["status"]["infrastructureMachineKind"] = "AWSMachine"


def provisioning_state(state: str) -> Callable[[list[Obj]], None]:
    return lambda objects: find(objects, "AzureMachinePool")["status"].update(
        provisioningState=state
    )


def draining(timeout: int | None) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        machine = find(objects, "Machine", "dev-mp-0-x7q2p")
        machine["metadata"]["deletionTimestamp"] = HOUR_AGO
        status = machine["status"]
        current = status["v1beta2"]["conditions"] if "v1beta2" in status else status["conditions"]
        stage = next(c for c in current if c["type"] == "Deleting")
        stage.update(
            status="True",
            reason="DrainingNode",
            message="Drain not completed yet (started at 14:00):\n* Pod default/web-1: cannot evict pod as it would violate the pod's disruption budget.",
        )
        if timeout is not None and machine["apiVersion"].endswith("/v1beta1"):
            machine["spec"]["nodeDrainTimeout"] = f"{timeout}s"
        elif timeout is not None:
            machine["spec"]["deletion"] = {"nodeDrainTimeoutSeconds": timeout}

    return change


def gke_updating(status: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        cond = next(
            c
            for c in find(objects, "GCPManagedMachinePool")["status"]["conditions"]
            if c["type"] == "GKEMachinePoolUpdating"
        )
        cond.update(
            status=status,
            reason="GKEMachinePoolUpdating" if status == "True" else "GKEMachinePoolUpdated",
        )

    return change


def claiming_node(objects: list[Obj]) -> None:
    objects.append(
        node(
            "aks-pool0-41982762-vmss000009",
            "azure:///stale/virtualMachines/9",
            "v1.33.3",
            NAMESPACE,
            "prod",
            "aks-pool0",
        )
    )


def many_provider_ids(count: int) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        ids = [f"aws:///eu-west-1a/i-0{n:016x}" for n in range(count)]
        pool(objects)["spec"]["providerIDList"] = ids

    return change


def topology_owned(objects: list[Obj]) -> None:
    pool(objects)["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""


def node_turned_not_ready(recounted: bool) -> Callable[[list[Obj]], None]:
    """A Node of a Running pool goes NotReady; the controller recounted it, or (as observed with
    the v1.14.2 manager) returned early and did not."""

    def change(objects: list[Obj]) -> None:
        first = next(o for o in objects if o["kind"] == "Node")
        for cond in first["status"]["conditions"]:
            if cond["type"] == "Ready":
                cond.update(status="False", reason="KubeletNotReady", lastTransitionTime=MINUTE_AGO)
        if recounted:
            legacy_status(objects)["readyReplicas"] -= 1

    return change


PRESSURE = ("MemoryPressure", "DiskPressure", "PIDPressure")


def pressure_conditions_absent(unknown: bool) -> Callable[[list[Obj]], None]:
    """Kubelets reporting only Ready: with `unknown`, as the Machine controller answers that
    (NodeHealthy Unknown, v1beta2 readyReplicas 0); without, a controller that did not mind."""

    def change(objects: list[Obj]) -> None:
        for obj in objects:
            status = obj.get("status") or {}
            if obj["kind"] == "Node":
                status["conditions"] = [
                    c for c in status["conditions"] if c["type"] not in PRESSURE
                ]
            if obj["kind"] == "Machine" and unknown:
                current = (
                    status["v1beta2"]["conditions"] if "v1beta2" in status else status["conditions"]
                )
                for cond in current:
                    if cond["type"] == "NodeHealthy":
                        cond.update(status="Unknown", reason="NodeConditionsUnknown")
        status = pool(objects)["status"]
        (status["v1beta2"] if v1beta1(objects) else status)["readyReplicas"] = 0 if unknown else 2

    return change


def scaling_up(objects: list[Obj]) -> None:
    pool(objects)["status"]["phase"] = "ScalingUp"


def chain(*changes: Callable[[list[Obj]], Any]) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        for step in changes:
            step(objects)

    return change


# code: (positive case, near miss); a case is (scenario, change, options)
CASES: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {
    "MP0001": (("aws-asg", paused, {}), ("aws-asg", None, {})),
    "MP0100": (("aws-asg", None, {"nodes_known": False}), ("aws-asg", short_scaling_up, {"nodes_known": False})),
    "MP0101": (("aws-asg", None, {}), ("aws-asg", short_scaling_up, {})),
    "MP0102": (("azure-vmss", None, {}), ("azure-vmss", short_scaling_up, {})),
    "MP0103": (("aws-asg", ready_node_outside_list, {}), ("aws-asg", not_ready_stray, {})),
    "MP0104": (("azure-vmss", untracked_vmss_node(HOUR_AGO), {}), ("azure-vmss", untracked_vmss_node(MINUTE_AGO), {})),
    "MP0201": (("aks-managed", scaling_with_two_authorities, {}), ("aks-managed", chain(scaling_with_two_authorities, running), {})),
    "MP0301": (("aws-asg", managers("manager", "argocd-controller"), {}), ("aws-asg", managers("manager"), {})),
    "MP0302": (("aws-asg", replicas(12), {}), ("aws-asg", replicas(10), {})),
    "MP0303": (("aws-asg", autoscaler_min("1.0"), {}), ("aws-asg", autoscaler_min("+01"), {})),
    "MP0401": (("aws-asg", infrastructure_not_ready("WaitingForInfrastructure"), {}), ("aws-asg", brand_new_pool_waiting, {})),
    "MP0501": (("oci-instance-pool", oci_failure, {"capi": "v1.12.3"}), ("oci-instance-pool", oci_failure, {"capi": "v1.10.5"})),
    "MP0601": (("aws-asg", pool_failure("MachinePool infrastructure resource was not ready"), {"capi": "v1.10.5"}), ("aws-asg", both_failing, {"capi": "v1.10.5"})),
    "MP0701": (("aws-asg", node_ref_uid, {}), ("aws-asg", node_ref_without_uid, {})),
    "MP0702": (("aws-asg", node_ref_missing, {}), ("aws-asg", node_ref_missing, {"nodes_known": False})),
    "MP0703": (("azure-vmss", None, {}), ("azure-vmss", recent_replicas_ready, {})),
    "MP0704": (("aws-asg", duplicate_node, {}), ("aws-asg", duplicate_foreign_nodes, {})),
    "MP0705": (("capd", node_turned_not_ready(False), {}), ("capd", node_turned_not_ready(True), {})),
    "MP0801": (("aws-asg", taint("2026-11-20T09:00:00Z"), {}), ("aws-asg", taint(MINUTE_AGO), {})),
    "MP0900": (("eks-managed", deleting(HOUR_AGO, drop=("AWSManagedMachinePool",)), {}), ("eks-managed", deleting(AGO(5), drop=("AWSManagedMachinePool",)), {})),
    "MP0901": (("aws-asg", deleting(HOUR_AGO), {}), ("aws-asg", deleting(AGO(5)), {})),
    "MP0902": (("eks-managed", deleting(HOUR_AGO, without_cluster=True), {}), ("eks-managed", deleting(HOUR_AGO), {})),
    "MP0903": (("eks-managed", deleting(HOUR_AGO), {"nodes_known": False, "unreachable": True, "capi": "v1.7.4"}), ("eks-managed", deleting(HOUR_AGO), {"nodes_known": False, "capi": "v1.7.4"})),
    "MP0904": (
        ("eks-managed", deleting(HOUR_AGO, failure="AWSManagedMachinePool prod/eks-default has been deleted after being ready"), {}),
        ("eks-managed", deleting(HOUR_AGO, failure="nodegroup in failed CREATE_FAILED status"), {}),
    ),
    "MP1001": (("aws-asg", orphan_node("old-workers"), {}), ("aws-asg", orphan_node("asg-workers"), {})),
    "MP1101": (("azure-vmss", upgrade_reported_done(2), {}), ("azure-vmss", upgrade_reported_done(1), {})),
    "MP1102": (("azure-vmss", None, {}), ("azure-vmss", None, {"healthy": True})),
    "MP1201": (("aws-asg", control_plane("v1.32.5"), {}), ("aws-asg", control_plane("v1.33.4"), {})),
    "MP1202": (("aws-asg", pool_version("v1.33.4;$(id)"), {}), ("aws-asg", pool_version("v1.33.4+k3s1"), {})),
    "MP1301": (("eks-managed", oke_versions("v1.34.1"), {}), ("eks-managed", oke_versions("v1.33.5"), {})),
    "MP1401": (("capd", topology_bootstrap(HOUR_AGO), {}), ("capd", topology_bootstrap(T0), {})),
    "MP1501": (("capd", waiting_for_data_secret, {}), ("capd", None, {})),
    "MP1502": (("capd", without("Secret"), {"secrets_scope": NAMESPACE}), ("capd", without("Secret"), {})),
    "MP1503": (("capd", join_token, {"tokens": ("bootstrap-token-zzzzzz",), "capi": "v1.9.5"}), ("capd", join_token, {"tokens": ("bootstrap-token-abcdef",), "capi": "v1.9.5"})),
    "MP1601": (("azure-vmss", without("AzureMachinePoolMachine", "vmss-workers-1"), {}), ("azure-vmss", new_vmss_instance(MINUTE_AGO), {})),
    "MP1602": (("azure-vmss", owner_remediated_false, {}), ("azure-vmss", None, {})),
    "MP1701": (("aws-asg", None, {}), ("aws-asg", None, {"healthy": True})),
    "MP1801": (("aws-asg", None, {}), ("aws-asg", no_autoscaler, {})),
    "MP1802": (("aws-asg", asg_with_machines, {}), ("aws-asg", chain(asg_with_machines, no_autoscaler), {})),
    "MP1803": (("azure-vmss", provisioning_state("Failed"), {}), ("azure-vmss", provisioning_state("Succeeded"), {})),
    "MP1901": (("aws-asg", copied_v1beta2_counter, {}), ("aws-asg", copied_v1beta2_counter, {"healthy": True})),
    "MP1902": (("gke-managed", None, {}), ("gke-managed", no_machine_kind("GCPManagedMachinePool"), {})),
    "MP1903": (("capd", pressure_conditions_absent(True), {}), ("capd", pressure_conditions_absent(False), {})),
    "MP2001": (("oci-instance-pool", None, {}), ("oci-instance-pool", no_machine_kind("OCIMachinePool"), {})),
    "MP2101": (("capd", draining(None), {}), ("capd", draining(600), {})),
    "MP2201": (("gke-managed", gke_updating("True"), {}), ("gke-managed", gke_updating("False"), {})),
    "MP2301": (("aks-managed", claiming_node, {}), ("azure-vmss", new_vmss_instance(HOUR_AGO, claimed=False), {})),
    "MP2401": (("aws-asg", many_provider_ids(1200), {}), ("aws-asg", many_provider_ids(999), {})),
    "MP2501": (("eks-managed", topology_owned, {}), ("eks-managed", None, {})),
    "MP2601": (("azure-vmss", health_checked("vmss-workers", "prod", {"vmss-workers-2": MINUTE_AGO}), {"capi": "v1.14.2"}), ("azure-vmss", health_checked("vmss-workers", "prod", {"vmss-workers-2": MINUTE_AGO}, template=True), {"capi": "v1.14.2"})),
    "MP2701": (("aws-asg", zoned("eu-west-1a", "eu-west-1a", "eu-west-1b"), {"healthy": True}), ("aws-asg", chain(zoned("eu-west-1a", "eu-west-1a", "eu-west-1b"), scaling_up), {"healthy": True})),
    "MP2801": (("capd", carrying(owned_pool("kubectl-csa")), {}), ("capd", carrying(owned_pool("kubectl-ssa")), {})),
    "MP2802": (("capd", carrying(owned_pool("argo-ssa-scaled")), {}), ("capd", carrying(owned_pool("argo-ssa")), {})),
}  # fmt: skip


def test_every_rule_has_cases() -> None:
    assert sorted(CASES) == sorted(BY_CODE)
    known_issues = {r.rule.rstrip(string.ascii_lowercase) for r in RULES if r.rule}
    assert known_issues == {f"R{n}" for n in range(1, 29)}


GENERATIONS = ["v1beta1", "v1beta2"]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fires_on_its_signature(code: str, generation: str, run) -> None:
    scenario, change, options = CASES[code][0]
    assert code in codes(run(scenario, change, generation=generation, **options))


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_stays_quiet_on_the_near_miss(code: str, generation: str, run) -> None:
    scenario, change, options = CASES[code][1]
    assert code not in codes(run(scenario, change, generation=generation, **options))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_healthy_pool_of_every_provider_has_no_warning_or_error(scenario: str, run) -> None:
    healthy = scenario in ("aws-asg", "azure-vmss", "azure-image-drift")
    findings = run(scenario, healthy=healthy)
    assert [f.code for f in findings if f.severity >= Severity.WARNING] == []


def infra_machine_deleted(by_condition: bool) -> Callable[[list[Obj]], None]:
    """What the Machine controller writes once a provisioned infra machine is deleted under it:
    the v1beta2 condition (v1.14), or only v1.10's failure message."""

    def change(objects: list[Obj]) -> None:
        objects.remove(find(objects, "AzureMachinePoolMachine", "vmss-workers-1"))
        machine = find(objects, "Machine", "vmss-workers-1")
        machine["metadata"]["creationTimestamp"] = MINUTE_AGO
        status = machine["status"]
        if not by_condition:
            status["failureReason"] = "InvalidConfiguration"
            status["failureMessage"] = (
                "Machine infrastructure resource AzureMachinePoolMachine with name "
                '"vmss-workers-1" has been deleted after being ready'
            )
            return
        current = status["v1beta2"]["conditions"] if "v1beta2" in status else status["conditions"]
        for cond in current:
            if cond["type"] == "InfrastructureReady":
                cond.update(status="False", reason="ObjectDeleted")

    return change


def only_provisioned(objects: list[Obj]) -> None:
    """An infra pool following the v1beta2 contract text: initialization.provisioned, no ready.
    The v1.14 MachinePool controller reads status.ready alone, so the pool never provisions."""
    infra = find(objects, "AWSMachinePool")["status"]
    infra.pop("ready", None)
    infra["initialization"] = {"provisioned": True}
    status = pool(objects)["status"]
    status["nodeRefs"] = []
    if v1beta1(objects):
        status["infrastructureReady"] = False
    else:
        status["initialization"]["infrastructureProvisioned"] = False


@pytest.mark.parametrize("generation", GENERATIONS)
def test_an_infra_pool_reporting_only_provisioned_is_named_as_the_cause(generation, run) -> None:
    [finding] = [
        f for f in run("aws-asg", only_provisioned, generation=generation) if f.code == "MP0401"
    ]
    assert "sets status.initialization.provisioned but not status.ready" in finding.message


@pytest.mark.parametrize("by_condition", [True, False], ids=["condition", "v1.10-message"])
def test_a_machine_whose_infra_machine_was_deleted_is_reported_at_once(by_condition, run) -> None:
    found = run("azure-vmss", infra_machine_deleted(by_condition), generation="v1beta1")
    [finding] = [f for f in found if f.code == "MP1601"]
    assert finding.instances == ("vmss-workers-1",)
    assert "lost their AzureMachinePoolMachine after provisioning" in finding.message
    assert "delete the Machine" in finding.message


def test_a_machine_made_for_a_vanished_infra_machine_is_told_to_be_deleted(run) -> None:
    """The real v1.14 controllers leave such a Machine after a scale-in; core never removes it,
    so the hint is deleting it, not the labels that explain the opposite case."""
    found = run("azure-vmss", without("AzureMachinePoolMachine", "vmss-workers-1"))
    [finding] = [f for f in found if f.code == "MP1601"]
    assert finding.instances == ("vmss-workers-1",)
    assert "Machines vmss-workers-1 have no AzureMachinePoolMachine" in finding.message
    assert "delete the Machines" in finding.message
    assert "labels" not in finding.message


def test_stuck_scaling_up_names_the_missing_provider_ids_and_the_upstream_issue(run) -> None:
    [finding] = [f for f in run("aws-asg") if f.code == "MP0101"]
    assert "kubernetes-sigs/cluster-api#10541" in finding.refs
    assert "aws:///eu-west-1c/i-000000000003a5f12" in finding.message
    assert finding.instances == ("aws:///eu-west-1c/i-000000000003a5f12",)
    assert finding.severity is Severity.WARNING


@pytest.mark.parametrize(
    ("capi", "severity", "says"),
    [
        ("v1.12.3", Severity.ERROR, "Cluster API v1.12.3"),
        (None, Severity.WARNING, "the version is unknown"),
    ],
)
def test_version_dependent_rule_lowers_severity_when_the_version_is_unknown(
    capi, severity, says, run
) -> None:
    [finding] = [f for f in run("oci-instance-pool", oci_failure, capi=capi) if f.code == "MP0501"]
    assert finding.severity is severity
    assert says in finding.message


def test_capi_version_comes_from_the_core_controller_image() -> None:
    deployment = core_manager(
        "capi-system", "registry.example/cluster-api/cluster-api-controller:v1.14.1@sha256:abc"
    )
    version = capi_version(Snapshot.of([deployment]), None)
    assert (str(version), version.source) == (
        "v1.14.1",
        "image of Deployment capi-system/capi-controller-manager",
    )
    assert str(capi_version(Snapshot.of([deployment]), "1.11.2")) == "v1.11.2"
    assert not capi_version(Snapshot.of([]), None).known
    assert CapiVersion.parse("v1.14.1", "x").between((1, 11, 0), (1, 15, 0)) is True


def test_thresholds_are_what_the_time_rules_measure_against(run) -> None:
    objects = SCENARIOS["aws-asg"]("v1beta2", NAMESPACE)
    taint("2026-11-29T14:50:00Z")(objects)  # Ready for 10 minutes
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    snapshot = Snapshot.of(
        [o for o in objects if o["kind"] != "Node"], workloads=[WorkloadNodes(None, None, nodes)]
    )
    description = describe(snapshot, Selection(), NOW)
    version = capi_version(snapshot, None)
    assert "MP0801" in codes(diagnose(description, snapshot, version, Thresholds()))
    assert "MP0801" not in codes(
        diagnose(description, snapshot, version, Thresholds(taint=timedelta(minutes=15)))
    )


def test_findings_sort_most_severe_first_within_a_pool(run) -> None:
    findings = run("oci-instance-pool", oci_failure, capi="v1.12.3")
    severities = [f.severity for f in findings]
    assert severities == sorted(severities, reverse=True)
    assert json.dumps([f.code for f in findings])  # plain data, serialisable


# -- what a review found firing on healthy pools, and the gaps it found -------------------------


def scaled_up_just_now(objects: list[Obj]) -> None:
    """spec.replicas 3 -> 4 on a healthy ASG: the provider has not reported the new instance, so
    ReplicasReady is still True (since long ago)."""
    mp = pool(objects)
    mp["spec"]["replicas"], mp["status"]["phase"] = 4, "ScalingUp"


def test_a_scale_up_is_not_dated_by_a_true_replicas_ready(run) -> None:
    [finding] = [f for f in run("aws-asg", scaled_up_just_now, healthy=True) if f.code == "MP0100"]
    assert finding.severity is Severity.INFO
    assert "the data does not say" in finding.message
    assert "provider reports only 3 instances" in finding.message

    def written_a_minute_ago(objects: list[Obj]) -> None:
        scaled_up_just_now(objects)
        managers("kubectl-edit")(objects)
        pool(objects)["metadata"]["managedFields"][0]["time"] = MINUTE_AGO

    assert not codes(run("aws-asg", written_a_minute_ago, healthy=True)) & {"MP0100", "MP0101"}


def test_a_new_vmss_instance_without_a_node_is_dated_by_its_machine(run) -> None:
    def joining(objects: list[Obj]) -> None:
        scaled_up_just_now(objects)
        new_vmss_instance(MINUTE_AGO)(objects)
        objects.remove(find(objects, "Node", "vmss-workers-000007"))
        pool(objects)["spec"]["providerIDList"].append(
            find(objects, "AzureMachinePoolMachine", "vmss-workers-7")["spec"]["providerID"]
        )

    found = codes(run("azure-vmss", joining, healthy=True))
    assert not found & {"MP0100", "MP0101", "MP1601"}


def test_stale_list_ignores_nodes_that_belong_to_someone_else(run) -> None:
    def machine_deployment_node(objects: list[Obj]) -> None:
        ready_node_outside_list(objects)
        stray = find(objects, "Node", "ip-10-0-9-99.eu-west-1.compute.internal")
        stray["metadata"]["annotations"].update({
            "cluster.x-k8s.io/owner-kind": "MachineSet", "cluster.x-k8s.io/owner-name": "md-0-abc",
        })  # fmt: skip

    assert "MP0103" not in codes(run("aws-asg", machine_deployment_node))

    def listed_by_another_pool(objects: list[Obj]) -> None:
        ready_node_outside_list(objects)
        stray = find(objects, "Node", "ip-10-0-9-99.eu-west-1.compute.internal")
        stray["metadata"]["annotations"] = {}
        other = json.loads(json.dumps(pool(objects)))
        other["metadata"].update(name="other-pool", uid="other")
        other["spec"]["providerIDList"] = [stray["spec"]["providerID"]]
        objects.append(other)

    assert "MP0103" not in {
        f.code for f in run("aws-asg", listed_by_another_pool) if f.pool == "asg-workers"
    }


def test_eks_status_version_without_v_is_not_a_rollout(run) -> None:
    def eks_control_plane(status_version: str) -> Callable[[list[Obj]], None]:
        return lambda objects: objects.append({
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "AWSManagedControlPlane",
            "metadata": {"name": "prod-control-plane", "namespace": NAMESPACE},
            "spec": {"version": "v1.33.5"}, "status": {"version": status_version, "ready": True},
        })  # fmt: skip

    assert "MP1201" not in codes(run("eks-managed", eks_control_plane("1.33.5")))
    assert "MP1201" not in codes(run("eks-managed", eks_control_plane("1.33")))
    behind = run("eks-managed", eks_control_plane("1.32.9"))
    [rolling] = [f for f in behind if f.code == "MP1201" and "still rolling" in f.message]
    assert "still rolling from 1.32.9 to v1.33.5" in rolling.message


def test_only_the_failure_fields_core_reads_can_panic_it(run) -> None:
    def aks_error(objects: list[Obj]) -> None:
        find(objects, "AzureManagedMachinePool")["status"].update(
            errorReason="CreateError", errorMessage="agent pool create failed"
        )

    def legacy_bootstrap_failure(objects: list[Obj]) -> None:
        config = find(objects, "KubeadmConfig")
        config["status"].setdefault("deprecated", {})["v1beta1"] = {"failureReason": "Old"}

    assert "MP0501" not in codes(run("aks-managed", aks_error, capi="v1.12.3"))
    assert "MP0501" not in codes(run("capd", legacy_bootstrap_failure, capi="v1.12.3"))


def test_rosa_versions_are_openshift_versions(run) -> None:
    def rosa(objects: list[Obj]) -> None:
        infra = find(objects, "AWSManagedMachinePool")
        infra["kind"], infra["spec"]["version"] = "ROSAMachinePool", "4.19.10"
        pool(objects)["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "ROSAMachinePool"

    assert not codes(run("eks-managed", rosa)) & {"MP1101", "MP1301"}


def test_only_reference_gallery_images_are_compared_with_the_version(run) -> None:
    def gallery(name: str, version: str) -> Callable[[list[Obj]], None]:
        def change(objects: list[Obj]) -> None:
            find(objects, "AzureMachinePool")["status"]["image"]["computeGallery"].update(
                gallery=name, version=version
            )

        return change

    healthy = {"healthy": True}
    assert "MP1301" in codes(run("azure-vmss", gallery("ClusterAPI-f72ceb4f", "1.32.9"), **healthy))
    assert "MP1301" not in codes(
        run("azure-vmss", gallery("ClusterAPI-f72ceb4f", "latest"), **healthy)
    )
    assert "MP1301" not in codes(run("azure-vmss", gallery("my-images", "1.0.0"), **healthy))


@pytest.mark.parametrize(
    ("capi", "severity"),
    [("v1.9.5", Severity.ERROR), ("v1.10.0", Severity.INFO), ("v1.9.8", Severity.INFO), (None, Severity.WARNING)],
)  # fmt: skip
def test_a_missing_token_secret_matters_only_where_cabpk_never_recreates_it(
    capi, severity, run
) -> None:
    found = run("capd", join_token, tokens=("bootstrap-token-zzzzzz",), capi=capi)
    [finding] = [f for f in found if f.code == "MP1503"]
    assert finding.severity is severity


def two_clusters_one_orphan(objects: list[Obj]) -> None:
    """A second Cluster in the same namespace, as in a dump of the whole namespace."""
    staging = json.loads(json.dumps(find(objects, "Cluster")))
    staging["metadata"].update(name="staging", uid="staging")
    other = json.loads(json.dumps(pool(objects)))
    other["metadata"].update(name="staging-workers", uid="staging-workers")
    other["spec"].update(clusterName="staging", providerIDList=[])
    objects += [staging, other]
    orphan_node("old-workers")(objects)


def test_a_cluster_level_finding_is_reported_once_under_its_own_cluster(run) -> None:
    orphans = [f for f in run("aws-asg", two_clusters_one_orphan) if f.code == "MP1001"]
    assert [(f.cluster, f.pool) for f in orphans] == [("prod", "")]

    def unannotated(objects: list[Obj]) -> None:
        two_clusters_one_orphan(objects)
        del find(objects, "Node", "ip-10-0-5-5.eu-west-1.compute.internal")["metadata"][
            "annotations"
        ]["cluster.x-k8s.io/cluster-name"]

    assert len([f for f in run("aws-asg", unannotated) if f.code == "MP1001"]) == 1


def test_a_paused_pool_is_not_judged_on_what_controllers_should_have_done(run) -> None:
    found = run("aws-asg", paused)
    assert "MP0101" not in codes(found)
    [pause] = [f for f in found if f.code == "MP0001"]
    assert pause.message.startswith("reconciliation is paused for 60m (cluster.x-k8s.io/paused")
    assert "MP0101" in pause.message
    assert "MP1801" in codes(found)  # what does not depend on reconciling is still judged


def test_a_missing_infra_pool_is_an_error_even_without_nodes(run) -> None:
    def gone(objects: list[Obj]) -> None:
        brand_new_pool_waiting(objects)
        set_legacy(objects, "InfrastructureReady", reason="IncorrectExternalRef", severity="Error")

    [finding] = [f for f in run("aws-asg", gone) if f.code == "MP0401"]
    assert finding.severity is Severity.ERROR


def test_skew_per_node_and_against_a_topology_version(run) -> None:
    def old_kubelet(objects: list[Obj]) -> None:
        control_plane("v1.33.4")(objects)
        target = find(objects, "Node", "ip-10-0-0-17.eu-west-1.compute.internal")
        target["status"]["nodeInfo"]["kubeletVersion"] = "v1.29.9"

    messages = [f.message for f in run("aws-asg", old_kubelet) if f.code == "MP1201"]
    assert any("more than 3 minors behind" in m and "ip-10-0-0-17" in m for m in messages)

    def topology_only(objects: list[Obj]) -> None:
        spec = find(objects, "Cluster")["spec"]
        spec.pop("controlPlaneRef")
        spec["topology"] = {"version": "v1.32.5", "classRef": {"name": "aws-class"}}

    [newer] = [
        f for f in run("aws-asg", topology_only) if f.code == "MP1201" and "pool wants" in f.message
    ]
    assert "Cluster topology at v1.32.5" in newer.message


def test_upgrade_check_falls_back_to_status_versions_without_nodes(run) -> None:
    def reported(objects: list[Obj]) -> None:
        upgrade_reported_done(2)(objects)
        pool(objects)["status"]["versions"] = [{"version": "v1.32.9", "replicas": 1}, {"version": "v1.33.4", "replicas": 2}]  # fmt: skip

    [finding] = [f for f in run("azure-vmss", reported, nodes_known=False) if f.code == "MP1101"]
    assert "status.versions still counts kubelets at v1.32.9" in finding.message


def test_deleting_an_oci_machine_is_a_warning(run) -> None:
    def deleting_machine(objects: list[Obj]) -> None:
        find(objects, "Machine", "oci-workers-0")["metadata"]["deletionTimestamp"] = HOUR_AGO

    [finding] = [f for f in run("oci-instance-pool", deleting_machine) if f.code == "MP2001"]
    assert (finding.severity, finding.instances) == (Severity.WARNING, ("oci-workers-0",))


def test_unknown_version_is_said_where_it_matters(run) -> None:
    [uid] = [f for f in run("aws-asg", node_ref_uid) if f.code == "MP0701"]
    assert "version unknown" in uid.message
    [later] = [
        f for f in run("oci-instance-pool", oci_failure, capi="v1.15.0") if f.code == "MP0501"
    ]
    assert later.severity is Severity.WARNING
    assert "PR #14234" in later.message
    assert "MP0501" not in codes(run("oci-instance-pool", oci_failure, capi="v1.10.5"))


def test_a_cluster_asked_for_by_name_is_checked_with_no_pool_left() -> None:
    """After an AWS-like pool is deleted its Nodes stay (providerIDs still listed at the time):
    `diagnose --cluster prod` must still look at them."""
    objects = [o for o in SCENARIOS["aws-asg"]("v1beta2", NAMESPACE) if o["kind"] != "MachinePool"]
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    snapshot = Snapshot.of(
        [o for o in objects if o["kind"] != "Node"],
        workloads=[WorkloadNodes(NAMESPACE, "prod", nodes)],
    )
    description = describe(snapshot, Selection(namespace=NAMESPACE, cluster="prod"), NOW)
    [cluster] = description.clusters
    assert (cluster.name, cluster.pools) == ("prod", ())
    found = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    orphans = sorted(f.subject for f in found if f.code == "MP1001")
    claiming = [n for n in nodes if "cluster.x-k8s.io/owner-name" in n["metadata"]["annotations"]]
    assert orphans == sorted(f"Node {n['metadata']['name']}" for n in claiming)
    assert orphans
    assert describe(snapshot, Selection(namespace=NAMESPACE, names=("x",)), NOW).clusters == ()


@pytest.mark.parametrize(("low", "high"), [("1", "1.0"), ("1", "-1"), ("3", "2"), ("0", "0")])
def test_bounds_that_make_no_node_group_are_not_an_autoscaler_managing_the_pool(
    run, low: str, high: str
) -> None:
    """Bounds cluster-autoscaler cannot use (MP0303) or a max-size of 0 make no node group, so
    the rules on how the autoscaler scales the pool's instances have nothing to say."""
    prefix = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-"

    def bounded(objects: list[Obj]) -> None:
        annotations = pool(objects)["metadata"]["annotations"]
        annotations.update({prefix + "min-size": low, prefix + "max-size": high})

    found = codes(run("aws-asg", bounded)) | codes(
        run("aws-asg", chain(asg_with_machines, bounded))
    )
    assert not found & {"MP1801", "MP1802"}
    assert ("MP0303" in found) == (high != "0")
