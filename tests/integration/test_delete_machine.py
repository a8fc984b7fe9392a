"""delete-machine against the real API server: verdicts, exact writes, preconditions, undo."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from support.kubeapi import APIError
from support.management import ManagementCluster, create_scenario
from support.run import run_cli
from support.scenarios import SCENARIOS, as_provider
from support.waiting import polls

from kubectl_machinepool.cli.commands import confirming
from kubectl_machinepool.kube.client import Kube

# Everything a scenario holds, by the REST collections the test reads back.
COLLECTIONS = {
    "cluster.x-k8s.io": ["clusters", "machinepools", "machines"],
    "infrastructure.cluster.x-k8s.io": [
        "dockermachinepools", "dockermachines", "azuremachinepools", "azuremachinepoolmachines",
    ],
    "bootstrap.cluster.x-k8s.io": ["kubeadmconfigs"],
}  # fmt: skip
MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"


def load(mgmt: ManagementCluster, scenario: str, change: Any = None) -> tuple[str, str]:
    namespace = mgmt.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = SCENARIOS[scenario](mgmt.generation, namespace, salt)
    if change is not None:
        change(objects)
    create_scenario(mgmt, objects)
    return namespace, salt


def versions(mgmt: ManagementCluster, namespace: str) -> dict[str, str]:
    """resourceVersion of every object of the namespace the command could touch."""
    found = {}
    for group, plurals in COLLECTIONS.items():
        for plural in plurals:
            served = mgmt.api.request("GET", f"/apis/{group}")["preferredVersion"]["version"]
            try:
                listed = mgmt.api.request(
                    "GET", f"/apis/{group}/{served}/namespaces/{namespace}/{plural}"
                )
            except APIError:
                continue  # a kind this generation's CRDs do not serve
            for item in listed["items"]:
                found[f"{plural}/{item['metadata']['name']}"] = item["metadata"]["resourceVersion"]
    return found


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


def machine(mgmt: ManagementCluster, namespace: str, name: str) -> dict[str, Any]:
    return mgmt.api.request(
        "GET", f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machines/{name}"
    )


def pool(mgmt: ManagementCluster, namespace: str, name: str) -> dict[str, Any]:
    return mgmt.api.request(
        "GET",
        f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machinepools/{name}",
    )


def delete(mgmt: ManagementCluster, capsys, namespace: str, *args: str):
    return run_cli(
        capsys, "delete-machine", "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), *args
    )


@pytest.mark.parametrize(
    ("scenario", "instance", "verdict"),
    [
        ("aws-asg", ("--node",), "not supported: AWSMachinePool sets no status.infrastructureMachineKind"),
        ("azure-vmss", ("vmss-workers-1",), "supported: the instance is drained and deleted"),
        ("oci-instance-pool", ("oci-workers-0",), "not supported: CAPOCI only removes the OCIMachinePoolMachine finalizer"),
        ("eks-managed", ("--node",), "not supported: AWSManagedMachinePool sets no"),
        ("aks-managed", ("--node",), "not supported: AzureManagedMachinePool sets no"),
        ("gke-managed", ("--node",), "not supported: GCPManagedMachinePool names its own kind"),
        ("scaleway-kapsule", ("--node",), "not supported: ScalewayManagedMachinePool sets no"),
        ("capd", ("dev-mp-0-x7q2p",), "supported: the instance is drained and deleted"),
    ],
)  # fmt: skip
def test_each_provider_shape_gets_its_verdict(mgmt, capsys, scenario, instance, verdict) -> None:
    namespace, _ = load(mgmt, scenario)
    if instance == ("--node",):  # the first Node of the pool's workload cluster
        nodes = mgmt.api.request("GET", "/api/v1/nodes")["items"]
        owned = [
            n
            for n in nodes
            if n["metadata"]["annotations"].get("cluster.x-k8s.io/cluster-namespace") == namespace
        ]
        instance = ("--node", owned[0]["metadata"]["name"])
    result = delete(mgmt, capsys, namespace, *instance, "--dry-run=client")
    assert verdict in " ".join(result.out.split()), result.out + result.err
    if verdict.startswith("not supported"):
        assert result.code == 3
        assert "instead:" in result.out
        assert result.err.startswith("error: refused: not supported")
    else:
        assert result.code == 0, result.err


def test_aws_machines_are_replaced_but_not_scaled_down(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd", as_provider("AWSMachinePool", "AWSMachine"))
    replace = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--dry-run=client")
    assert replace.code == 0, replace.err
    assert (
        "supported: the instance is drained and deleted, then the provider creates a replacement (the ASG keeps its desired capacity)"
        in " ".join(replace.out.split())
    )
    scale = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down", "--dry-run=client")
    assert scale.code == 3
    assert "CAPA ignores the annotation" in scale.err


def test_replace_writes_exactly_the_plan(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd")
    before = versions(mgmt, namespace)
    result = delete(
        mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--drain-timeout", "5m", "--yes", "--no-wait"
    )
    assert result.code == 0, result.err
    assert "1. set spec" in result.out
    assert "2. delete Machine" in result.out
    assert result.out.rstrip().endswith("machine.cluster.x-k8s.io/dev-mp-0-x7q2p deleted")
    assert changed(before, versions(mgmt, namespace)) == {"machines/dev-mp-0-x7q2p"}
    gone = machine(mgmt, namespace, "dev-mp-0-x7q2p")
    assert gone["metadata"]["deletionTimestamp"]
    timeout = (
        gone["spec"]["deletion"]["nodeDrainTimeoutSeconds"]
        if mgmt.generation == "v1beta2"
        else gone["spec"]["nodeDrainTimeout"]
    )
    assert timeout in (300, "300s")


def test_scale_down_writes_exactly_the_plan(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd")
    before = versions(mgmt, namespace)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-k9d4m", "--scale-down", "--yes", "--no-wait")
    assert result.code == 0, result.err
    assert "machine.cluster.x-k8s.io/dev-mp-0-k9d4m annotated" in result.out
    assert "machinepool.cluster.x-k8s.io/dev-mp-0 scaled" in result.out
    assert changed(before, versions(mgmt, namespace)) == {
        "machines/dev-mp-0-k9d4m",
        "machinepools/dev-mp-0",
    }
    annotations = machine(mgmt, namespace, "dev-mp-0-k9d4m")["metadata"]["annotations"]
    assert "cluster.x-k8s.io/delete-machine" in annotations
    assert pool(mgmt, namespace, "dev-mp-0")["spec"]["replicas"] == 1


@pytest.mark.parametrize("mode", ["--replace", "--scale-down"])
def test_server_dry_run_changes_nothing(mgmt, capsys, mode) -> None:
    namespace, _ = load(mgmt, "capd")
    before = versions(mgmt, namespace)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", mode, "--dry-run=server")
    assert result.code == 0, result.err
    assert "(server dry run)" in result.out
    assert changed(before, versions(mgmt, namespace)) == set()


def test_a_status_update_between_plan_and_execute_does_not_stop_it(
    mgmt, capsys, monkeypatch
) -> None:
    """Controllers rewrite status all the time (seen live: the Machine controller between the
    plan and the first write); only what the writes rely on must be as planned."""
    namespace, _ = load(mgmt, "capd")
    path = f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machines"

    def a_controller_updates_status_meanwhile(_assume_yes: bool, _env: object) -> bool:
        mgmt.api.request(
            "PATCH",
            f"{path}/dev-mp-0-x7q2p/status",
            {"status": {"phase": "Running", "lastUpdated": "2026-11-29T15:01:00Z"}},
            "application/merge-patch+json",
        )
        return True

    monkeypatch.setattr(confirming, "confirmed", a_controller_updates_status_meanwhile)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down")
    assert result.code == 0, result.err
    annotations = mgmt.api.request("GET", f"{path}/dev-mp-0-x7q2p")["metadata"]["annotations"]
    assert "cluster.x-k8s.io/delete-machine" in annotations


def test_a_change_between_plan_and_execute_fails_with_nothing_written(
    mgmt, capsys, monkeypatch
) -> None:
    namespace, _ = load(mgmt, "capd")

    def someone_scales_meanwhile(_assume_yes: bool, _env: object) -> bool:
        path = (
            f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machinepools/dev-mp-0"
        )
        mgmt.api.request("PATCH", path, {"spec": {"replicas": 3}}, "application/merge-patch+json")
        return True

    monkeypatch.setattr(confirming, "confirmed", someone_scales_meanwhile)
    before = versions(mgmt, namespace)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down")
    assert result.code == 1
    assert "MachinePool" in result.err
    assert "changed since the plan was made" in result.err
    assert "nothing was written" in result.err
    assert changed(before, versions(mgmt, namespace)) == {"machinepools/dev-mp-0"}


def test_a_user_who_may_not_scale_is_refused_before_any_write(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd")
    user = mgmt.server.add_user(f"no-scale-{namespace}")
    mgmt.grant(user.name, namespace, [
        {"apiGroups": ["cluster.x-k8s.io"], "resources": ["machinepools", "machines", "clusters"], "verbs": ["get", "list", "patch", "delete"]},
        {"apiGroups": ["infrastructure.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io"], "resources": ["*"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
    ])  # fmt: skip
    before = versions(mgmt, namespace)
    result = run_cli(
        capsys, "delete-machine", "-n", namespace, "--kubeconfig", str(user.kubeconfig),
        "dev-mp-0-x7q2p", "--scale-down", "--yes",
    )  # fmt: skip
    assert result.code == 3
    refusal = f"you may not update machinepools/scale.cluster.x-k8s.io in namespace {namespace}"
    assert refusal in result.err
    assert changed(before, versions(mgmt, namespace)) == set()


def test_scale_down_below_the_autoscaler_minimum_is_refused(mgmt, capsys) -> None:
    def with_minimum(objects: list[dict[str, Any]]) -> None:
        mp = next(o for o in objects if o["kind"] == "MachinePool")
        mp["metadata"].setdefault("annotations", {})[MIN_SIZE] = "2"

    namespace, _ = load(mgmt, "capd", with_minimum)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down", "--yes")
    assert result.code == 3
    assert "below the cluster-autoscaler minimum 2" in result.err


def freeze_scaling(mgmt: ManagementCluster, namespace: str) -> str:
    """A ValidatingAdmissionPolicy that denies /scale updates of this namespace's pools."""
    name = f"freeze-{namespace}"
    mgmt.api.create({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["cluster.x-k8s.io"], "apiVersions": ["*"],
                "operations": ["UPDATE"], "resources": ["machinepools/scale"],
            }]},
            "validations": [{"expression": "false", "message": "scaling is frozen for maintenance"}],
        },
    })  # fmt: skip
    mgmt.api.create({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name, "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
        },
    })  # fmt: skip
    return name


def wait_until_denied(mgmt: ManagementCluster, namespace: str, pool: str = "dev-mp-0") -> None:
    """Policies take effect asynchronously: probe with a server dry run until one is denied."""
    path = (
        f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machinepools/{pool}/scale"
    )
    for _ in polls(0.1):
        scale = mgmt.api.request("GET", path)
        try:
            mgmt.api.request("PUT", path + "?dryRun=All", scale)
        except APIError as err:
            if "frozen" in str(err):
                return
    pytest.fail("the admission policy never took effect")


def test_a_failed_scale_step_takes_the_annotation_back(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd")
    policy = freeze_scaling(mgmt, namespace)
    try:
        wait_until_denied(mgmt, namespace)
        result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down", "--yes")
    finally:
        for kind in ("validatingadmissionpolicybindings", "validatingadmissionpolicies"):
            mgmt.api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/{kind}/{policy}")
    assert result.code == 1
    assert "scaling is frozen for maintenance" in result.err
    assert "removed the cluster.x-k8s.io/delete-machine annotation again" in result.err
    annotations = machine(mgmt, namespace, "dev-mp-0-x7q2p")["metadata"].get("annotations", {})
    assert "cluster.x-k8s.io/delete-machine" not in annotations
    assert pool(mgmt, namespace, "dev-mp-0")["spec"]["replicas"] == 2


def blocking_budget(mgmt: ManagementCluster, namespace: str, node: str) -> None:
    mgmt.api.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": namespace, "labels": {"app": "web"}},
        "spec": {"nodeName": node, "containers": [{"name": "web", "image": "registry.example/web:1"}]},
        "status": {"phase": "Running"},
    })  # fmt: skip
    mgmt.api.create({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1, "observedGeneration": 1},
    })  # fmt: skip


def test_a_blocking_budget_refuses_unless_the_drain_is_bounded(mgmt, capsys) -> None:
    namespace, salt = load(mgmt, "capd")
    blocking_budget(mgmt, namespace, f"dev-dev-mp-0-x7q2p-{salt}")
    refused = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--yes", "--no-wait")
    assert refused.code == 3
    assert f"PodDisruptionBudgets allow no disruption now: {namespace}/web (pods web-0)" in (
        " ".join(refused.out.split())
    )
    bounded = delete(
        mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--drain-timeout", "10m", "--dry-run=client"
    )
    assert bounded.code == 0, bounded.err
    assert "the drain gives up after 10m" in " ".join(bounded.out.split())


def test_wait_follows_the_deletion_to_the_end(mgmt, capsys) -> None:
    namespace, salt = load(mgmt, "capd")
    base = f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machines"
    node = f"dev-dev-mp-0-x7q2p-{salt}"

    def capi_and_the_provider() -> None:
        """What the controllers do once the Machine is deleting: drain, delete, replace."""
        for _ in polls(0.05):
            current = mgmt.api.request("GET", f"{base}/dev-mp-0-x7q2p")
            if current["metadata"].get("deletionTimestamp"):
                break
        draining = {
            "type": "Deleting", "status": "True", "reason": "DrainingNode",
            "message": "Drain not completed yet (started at 2026-11-29T15:00:00Z):\n* Pod shop/web-0: deletionTimestamp set",
            "lastTransitionTime": "2026-11-29T15:00:00Z",
        }  # fmt: skip
        status = {"conditions": [draining]}
        if mgmt.generation == "v1beta1":
            status = {"v1beta2": {"conditions": [draining]}}
        mgmt.api.request(
            "PATCH", f"{base}/dev-mp-0-x7q2p/status", {"status": status},
            "application/merge-patch+json",
        )  # fmt: skip
        time.sleep(1.5)
        replacement = {k: v for k, v in current.items() if k != "status"}
        replacement["metadata"] = {
            "name": "dev-mp-0-r2d2q", "namespace": namespace, "labels": current["metadata"]["labels"],
            "ownerReferences": current["metadata"]["ownerReferences"],
        }  # fmt: skip
        replacement["spec"] = {
            **current["spec"],
            "providerID": f"docker:////dev-dev-mp-0-r2d2q-{salt}",
        }
        mgmt.api.request("POST", base, replacement)
        mgmt.api.request("DELETE", f"/api/v1/nodes/{node}")
        time.sleep(1.5)
        mgmt.api.request(
            "PATCH", f"{base}/dev-mp-0-x7q2p", {"metadata": {"finalizers": None}},
            "application/merge-patch+json",
        )  # fmt: skip

    controllers = threading.Thread(target=capi_and_the_provider)
    controllers.start()
    try:
        result = delete(
            mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--yes", "--wait", "--timeout", "1m"
        )
    finally:
        controllers.join()
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    stage = f"Machine {namespace}/dev-mp-0-x7q2p: DrainingNode: Drain not completed yet (started at 2026-11-29T15:00:00Z):"
    assert stage in lines
    assert f"Node {node} deleted" in lines
    assert (
        f"replacement Machine {namespace}/dev-mp-0-r2d2q appeared (docker:////dev-dev-mp-0-r2d2q-{salt})"
        in lines
    )
    assert lines[-1] == "machine.cluster.x-k8s.io/dev-mp-0-x7q2p deleted"


def test_without_access_to_machines_there_is_no_verdict(mgmt, capsys) -> None:
    namespace, _ = load(mgmt, "capd")
    user = mgmt.server.add_user(f"no-machines-{namespace}")
    mgmt.grant(user.name, namespace, [
        {"apiGroups": ["cluster.x-k8s.io"], "resources": ["machinepools", "clusters"], "verbs": ["get", "list"]},
        {"apiGroups": ["infrastructure.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io"], "resources": ["*"], "verbs": ["get", "list"]},
    ])  # fmt: skip
    result = run_cli(
        capsys, "delete-machine", "-n", namespace, "--kubeconfig", str(user.kubeconfig),
        "dev-mp-0-x7q2p", "--dry-run=client",
    )  # fmt: skip
    assert result.code == 1
    assert "machines.cluster.x-k8s.io is forbidden" in result.err
    assert "delete-machine needs to list Machine objects" in result.err


def test_refusals_without_a_live_cluster_or_a_confirmation(mgmt, capsys, tmp_path) -> None:
    namespace, _ = load(mgmt, "capd")
    offline = run_cli(capsys, "delete-machine", "dev-mp-0-x7q2p", "-f", str(tmp_path))
    assert offline.code == 3
    assert "cannot act on a dump" in offline.err
    unconfirmed = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p")  # stdin is no terminal here
    assert unconfirmed.code == 3
    assert "not confirmed" in unconfirmed.err
    assert "deletionTimestamp" not in machine(mgmt, namespace, "dev-mp-0-x7q2p")["metadata"]
    ambiguous = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--node", "x")
    assert ambiguous.code == 2


def test_undoing_the_drain_timeout_leaves_a_valid_machine(mgmt, capsys) -> None:
    """v1beta2 Machines without spec.deletion: the undo must drop it, not leave `{}` (422)."""
    namespace, _ = load(mgmt, "capd")
    before = machine(mgmt, namespace, "dev-mp-0-x7q2p")["spec"]
    policy = freeze_scaling(mgmt, namespace)
    try:
        wait_until_denied(mgmt, namespace)
        result = delete(
            mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down", "--drain-timeout", "5m",
            "--yes", "--no-wait",
        )  # fmt: skip
    finally:
        for kind in ("validatingadmissionpolicybindings", "validatingadmissionpolicies"):
            mgmt.api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/{kind}/{policy}")
    assert result.code == 1, result.err
    assert "the cluster is as before" in result.err
    assert machine(mgmt, namespace, "dev-mp-0-x7q2p")["spec"] == before


def reparent_after_its_first_patch(mgmt, namespace: str, monkeypatch) -> None:
    """Another pool takes the Machine over right after the tool's first patch of it."""
    path = (
        f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machines/dev-mp-0-x7q2p"
    )
    real = Kube.request
    done = []

    def reparent(self, method, url, *args, **kwargs):
        answer = real(self, method, url, *args, **kwargs)
        if method == "PATCH" and url == path and not done:
            done.append(url)
            owners = machine(mgmt, namespace, "dev-mp-0-x7q2p")["metadata"]["ownerReferences"]
            owners[0]["uid"] = "2b1a7c0e-0000-4000-8000-000000000000"
            mgmt.api.request("PATCH", path, {"metadata": {"ownerReferences": owners}},
                             "application/merge-patch+json")  # fmt: skip
        return answer

    monkeypatch.setattr(Kube, "request", reparent)


def test_a_machine_reparented_between_writes_is_not_deleted(mgmt, capsys, monkeypatch) -> None:
    """A 409 after the tool's own first write is retried only when nothing but status changed."""
    namespace, _ = load(mgmt, "capd")
    reparent_after_its_first_patch(mgmt, namespace, monkeypatch)
    result = delete(
        mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--drain-timeout", "5m", "--yes", "--no-wait"
    )
    assert "changed meanwhile (metadata.ownerReferences)" in result.err
    assert "deletionTimestamp" not in machine(mgmt, namespace, "dev-mp-0-x7q2p")["metadata"]
    # The drain timeout is not taken back on top of someone else's change: it is named instead.
    assert result.code == 5, result.err
    assert "Left changed: set spec" in result.err


def test_on_azure_a_failed_scale_step_says_the_annotation_stays(mgmt, capsys) -> None:
    """CAPZ deletes an annotated instance on the mark alone: removing it again proves nothing."""
    namespace, _ = load(mgmt, "azure-vmss")
    policy = freeze_scaling(mgmt, namespace)
    try:
        wait_until_denied(mgmt, namespace, "vmss-workers")
        result = delete(
            mgmt, capsys, namespace, "vmss-workers-1", "--scale-down", "--yes", "--no-wait"
        )
    finally:
        for kind in ("validatingadmissionpolicybindings", "validatingadmissionpolicies"):
            mgmt.api.request("DELETE", f"/apis/admissionregistration.k8s.io/v1/{kind}/{policy}")
    assert result.code == 5, result.err
    assert "Left changed: annotate Machine" in result.err
    assert "deletes an annotated Machine on the mark alone" in result.err
    annotations = machine(mgmt, namespace, "vmss-workers-1")["metadata"]["annotations"]
    assert "cluster.x-k8s.io/delete-machine" in annotations


def test_scale_down_stops_when_the_machine_is_reparented_after_its_annotation(
    mgmt, capsys, monkeypatch
) -> None:
    """The scale step is made on top of the annotation: the Machine must still be the pool's."""
    namespace, _ = load(mgmt, "capd")
    reparent_after_its_first_patch(mgmt, namespace, monkeypatch)
    result = delete(mgmt, capsys, namespace, "dev-mp-0-x7q2p", "--scale-down", "--yes")
    assert "changed (metadata.ownerReferences) since annotate" in result.err
    assert pool(mgmt, namespace, "dev-mp-0")["spec"]["replicas"] == 2
    # The annotation stays on a Machine someone else changed, and the message says so.
    assert result.code == 5, result.err
    assert "Left changed: annotate Machine" in result.err
