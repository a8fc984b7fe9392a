"""Every diagnose rule: a realistic case where it fires and a near miss where it must not.

Each case starts from a provider scenario (the same objects the describe tests use) and changes
what the situation needs, the way a controller or an operator would have left the objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from support.objects import NOW
from support.scenarios import SCENARIOS, condition, core_manager, node
from support.snapshots import NAMESPACE

from kubectl_machinepool.description import Selection, describe
from kubectl_machinepool.diagnostics import (
    BY_CODE,
    RULES,
    CapiVersion,
    Severity,
    Thresholds,
    capi_version,
    diagnose,
)
from kubectl_machinepool.snapshot import Snapshot, WorkloadNodes

Obj = dict[str, Any]
AGO = lambda minutes: (NOW - timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")  # noqa: E731
HOUR_AGO, MINUTE_AGO = AGO(60), AGO(1)


def find(objects: list[Obj], kind: str, name: str | None = None) -> Obj:
    return next(
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    )


def pool(objects: list[Obj]) -> Obj:
    return find(objects, "MachinePool")


def legacy_conditions(objects: list[Obj]) -> list[Obj]:
    return pool(objects)["status"]["deprecated"]["v1beta1"]["conditions"]


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
        capi: str | None = None,
        secrets_scope: str | None = None,
        tokens: tuple[str, ...] | None = None,
        healthy: bool = False,
    ) -> list[Any]:
        objects = (
            SCENARIOS[scenario]("v1beta2", NAMESPACE, healthy=healthy)
            if healthy
            else SCENARIOS[scenario]("v1beta2", NAMESPACE)
        )
        if change is not None:
            change(objects)
        nodes = tuple(o for o in objects if o["kind"] == "Node")
        workload = WorkloadNodes(None, None, nodes if nodes_known else None, token_secrets=tokens)
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


def infrastructure_not_ready(reason: str) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        set_legacy(
            objects,
            "InfrastructureReady",
            status="False",
            reason=reason,
            severity="Error" if reason == "IncorrectExternalRef" else "Info",
        )
        pool(objects)["status"]["initialization"]["infrastructureProvisioned"] = (
            reason != "IncorrectExternalRef" and False
        )

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
        pool(objects)["status"]["deprecated"]["v1beta1"].update(
            failureReason="InvalidConfiguration", failureMessage=message
        )

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


def topology_bootstrap(generation: int) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        pool(objects)["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"] = ""
        find(objects, "KubeadmConfig")["metadata"]["generation"] = generation

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
        stage = next(c for c in machine["status"]["conditions"] if c["type"] == "Deleting")
        stage.update(
            status="True",
            reason="DrainingNode",
            message="Drain not completed yet (started at 14:00):\n* Pod default/web-1: cannot evict pod as it would violate the pod's disruption budget.",
        )
        if timeout is not None:
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


def chain(*changes: Callable[[list[Obj]], Any]) -> Callable[[list[Obj]], None]:
    def change(objects: list[Obj]) -> None:
        for step in changes:
            step(objects)

    return change


# code: (positive case, near miss); a case is (scenario, change, options)
CASES: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {
    "MP0100": (("aws-asg", None, {"nodes_known": False}), ("aws-asg", short_scaling_up, {"nodes_known": False})),
    "MP0101": (("aws-asg", None, {}), ("aws-asg", short_scaling_up, {})),
    "MP0102": (("azure-vmss", None, {}), ("azure-vmss", short_scaling_up, {})),
    "MP0103": (("aws-asg", ready_node_outside_list, {}), ("aws-asg", not_ready_stray, {})),
    "MP0201": (("aks-managed", scaling_with_two_authorities, {}), ("aks-managed", None, {})),
    "MP0301": (("aws-asg", managers("manager", "argocd-controller"), {}), ("aws-asg", managers("manager"), {})),
    "MP0302": (("aws-asg", replicas(12), {}), ("aws-asg", replicas(10), {})),
    "MP0401": (("aws-asg", infrastructure_not_ready("WaitingForInfrastructure"), {}), ("aws-asg", brand_new_pool_waiting, {})),
    "MP0501": (("oci-instance-pool", oci_failure, {"capi": "v1.12.3"}), ("oci-instance-pool", oci_failure, {"capi": "v1.10.5"})),
    "MP0601": (("aws-asg", pool_failure("MachinePool infrastructure resource was not ready"), {"capi": "v1.10.5"}), ("aws-asg", both_failing, {"capi": "v1.10.5"})),
    "MP0701": (("aws-asg", node_ref_uid, {}), ("aws-asg", None, {})),
    "MP0702": (("aws-asg", node_ref_missing, {}), ("aws-asg", None, {})),
    "MP0703": (("azure-vmss", None, {}), ("azure-vmss", recent_replicas_ready, {})),
    "MP0704": (("aws-asg", duplicate_node, {}), ("aws-asg", None, {})),
    "MP0801": (("aws-asg", taint("2026-11-20T09:00:00Z"), {}), ("aws-asg", taint(MINUTE_AGO), {})),
    "MP0900": (("eks-managed", deleting(HOUR_AGO, drop=("AWSManagedMachinePool",)), {}), ("eks-managed", deleting(AGO(5), drop=("AWSManagedMachinePool",)), {})),
    "MP0901": (("aws-asg", deleting(HOUR_AGO), {}), ("aws-asg", deleting(AGO(5)), {})),
    "MP0902": (("eks-managed", deleting(HOUR_AGO, without_cluster=True), {}), ("eks-managed", deleting(HOUR_AGO), {})),
    "MP0903": (("eks-managed", deleting(HOUR_AGO), {"nodes_known": False, "capi": "v1.7.4"}), ("eks-managed", deleting(HOUR_AGO), {"nodes_known": False, "capi": "v1.9.0"})),
    "MP0904": (
        ("eks-managed", deleting(HOUR_AGO, failure="AWSManagedMachinePool prod/eks-default has been deleted after being ready"), {}),
        ("eks-managed", deleting(HOUR_AGO, failure="nodegroup in failed CREATE_FAILED status"), {}),
    ),
    "MP1001": (("aws-asg", orphan_node("old-workers"), {}), ("aws-asg", orphan_node("asg-workers"), {})),
    "MP1101": (("azure-vmss", upgrade_reported_done(2), {}), ("azure-vmss", upgrade_reported_done(1), {})),
    "MP1201": (("aws-asg", control_plane("v1.32.5"), {}), ("aws-asg", control_plane("v1.33.4"), {})),
    "MP1301": (("eks-managed", oke_versions("v1.34.1"), {}), ("eks-managed", oke_versions("v1.33.5"), {})),
    "MP1401": (("capd", topology_bootstrap(3), {}), ("capd", topology_bootstrap(1), {})),
    "MP1501": (("capd", waiting_for_data_secret, {}), ("capd", None, {})),
    "MP1502": (("capd", without("Secret"), {"secrets_scope": NAMESPACE}), ("capd", without("Secret"), {})),
    "MP1503": (("capd", join_token, {"tokens": ("bootstrap-token-zzzzzz",)}), ("capd", join_token, {"tokens": ("bootstrap-token-abcdef",)})),
    "MP1601": (("azure-vmss", without("AzureMachinePoolMachine", "vmss-workers-1"), {}), ("azure-vmss", None, {})),
    "MP1602": (("azure-vmss", owner_remediated_false, {}), ("azure-vmss", None, {})),
    "MP1701": (("aws-asg", None, {}), ("aws-asg", None, {"healthy": True})),
    "MP1801": (("aws-asg", None, {}), ("aws-asg", no_autoscaler, {})),
    "MP1802": (("aws-asg", asg_with_machines, {}), ("aws-asg", chain(asg_with_machines, no_autoscaler), {})),
    "MP1803": (("azure-vmss", provisioning_state("Failed"), {}), ("azure-vmss", provisioning_state("Succeeded"), {})),
    "MP1901": (("aws-asg", None, {}), ("aws-asg", None, {"healthy": True})),
    "MP1902": (("gke-managed", None, {}), ("aks-managed", None, {})),
    "MP2001": (("oci-instance-pool", None, {}), ("azure-vmss", None, {})),
    "MP2101": (("capd", draining(None), {}), ("capd", draining(600), {})),
    "MP2201": (("gke-managed", gke_updating("True"), {}), ("gke-managed", gke_updating("False"), {})),
    "MP2301": (("aks-managed", claiming_node, {}), ("aks-managed", None, {})),
    "MP2401": (("aws-asg", many_provider_ids(1200), {}), ("aws-asg", many_provider_ids(999), {})),
    "MP2501": (("eks-managed", topology_owned, {}), ("eks-managed", None, {})),
}  # fmt: skip


def test_every_rule_has_cases() -> None:
    assert sorted(CASES) == sorted(BY_CODE)
    assert {r.rule.rstrip("abcd") for r in RULES} == {f"R{n}" for n in range(1, 26)}


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fires_on_its_signature(code: str, run) -> None:
    scenario, change, options = CASES[code][0]
    assert code in codes(run(scenario, change, **options))


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_stays_quiet_on_the_near_miss(code: str, run) -> None:
    scenario, change, options = CASES[code][1]
    assert code not in codes(run(scenario, change, **options))


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_healthy_pool_of_every_provider_has_no_warning_or_error(scenario: str, run) -> None:
    healthy = scenario in ("aws-asg", "azure-vmss")
    findings = run(scenario, healthy=healthy)
    assert [f.code for f in findings if f.severity >= Severity.WARNING] == []


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
