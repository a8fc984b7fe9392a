"""MachineHealthChecks on the real API server: created through the real CRDs (their validation
applies), described and judged (MP2601) live and from a `kubectl get` dump; and, against the
real Cluster API managers (v1.14 and v1.10), the MachineHealthCheck controller marking a
MachinePool Machine whose Node went NotReady while the MachinePool controller, reconciling
after that, leaves it where it is: what MP2601 says of those versions."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from support.healthchecks import checked_status, health_check, health_checked
from support.kubeapi import APIError
from support.live import LiveCluster
from support.livepool import LivePool, live_pool
from support.management import ManagementCluster, create_scenario, delete_nodes, kubectl_dump
from support.objects import NOW
from support.provider import AZURE
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)
AT = NOW.isoformat().replace("+00:00", "Z")
MARKED_AT = "2026-11-29T14:46:00Z"  # 14 minutes before AT
POOL_LABEL = "cluster.x-k8s.io/pool-name"


def flat(text: str) -> str:
    return " ".join(text.split())


def checked_pool(mgmt: ManagementCluster) -> tuple[str, list[Obj]]:
    """The Azure pool, a check of its Machines that marked vmss-workers-2, and a second check
    selecting the worker role with a match expression and handing remediation to a template."""
    namespace = mgmt.new_namespace()
    gen = mgmt.generation
    objects = SCENARIOS["azure-vmss"](gen, namespace, namespace.removeprefix("t-"))
    health_checked("vmss-workers", "prod", {"vmss-workers-2": MARKED_AT})(objects)
    [check] = [o for o in objects if o["kind"] == "MachineHealthCheck"]
    check["status"] = checked_status(
        gen, ["vmss-workers-0", "vmss-workers-1", "vmss-workers-2"], 2, 0
    )
    role = {"matchExpressions": [{"key": "node-role.kubernetes.io/worker", "operator": "Exists"}]}
    template = ("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3RemediationTemplate", "reboot")
    objects.append(
        health_check(
            gen, namespace, "workers", "prod", role, max_unhealthy="40%", template=template
        )
    )
    create_scenario(mgmt, objects)
    return namespace, objects


def cli(capsys: pytest.CaptureFixture[str], mgmt: ManagementCluster, *args: str) -> Result:
    return run_cli(capsys, *args, "--kubeconfig", str(mgmt.kubeconfig), "--now", AT)


def test_describe_lists_the_checks_live_and_from_a_dump(mgmt, capsys, tmp_path) -> None:
    namespace, objects = checked_pool(mgmt)
    try:
        live = cli(capsys, mgmt, "describe", "-n", namespace)
        assert (live.code, live.err) == (0, "")
        assert (
            "Health checks: MachineHealthCheck vmss-workers-unhealthy: 3 of 3 Machines; "
            "vmss-workers-2 unhealthy for 14m (UnhealthyNode), waiting for remediation; checks "
            "Node Ready=False 5m, Ready=Unknown 5m, no Node after 10m; remediation left to the "
            "Machine's owner (the MachinePool) MachineHealthCheck workers: 3 of 3 Machines; "
            "vmss-workers-2 unhealthy for 14m (UnhealthyNode), waiting for remediation; checks "
            "Node Ready=False 5m, Ready=Unknown 5m, no Node after 10m; external remediation "
            "(Metal3RemediationTemplate reboot) while at most 40% unhealthy"
        ) in flat(live.out)
        dump = kubectl_dump(mgmt, namespace, objects, tmp_path)
        offline = run_cli(capsys, "describe", "-n", namespace, *dump, "--now", AT)
        assert (offline.code, offline.err) == (0, "")
        assert offline.out == live.out

        document = json.loads(cli(capsys, mgmt, "describe", "-n", namespace, "-o", "json").out)
        jsonschema.validate(document, SCHEMA)
        [pool] = document["clusters"][0]["machinePools"]
        checks = {c["name"]: c for c in pool["healthChecks"]}
        assert sorted(checks) == ["vmss-workers-unhealthy", "workers"]
        unhealthy = checks["vmss-workers-unhealthy"]
        assert unhealthy["apiVersion"] == f"cluster.x-k8s.io/{mgmt.generation}"
        assert unhealthy["status"]["expectedMachines"] == 3
        assert [m["machine"] for m in unhealthy["marked"]] == ["vmss-workers-2"]
        assert (
            checks["workers"]["remediation"]["templateRef"]["kind"] == "Metal3RemediationTemplate"
        )
    finally:
        delete_nodes(mgmt, objects)


def test_diagnose_raises_mp2601_for_the_check_left_to_the_owner(mgmt, capsys) -> None:
    namespace, objects = checked_pool(mgmt)
    try:
        result = cli(
            capsys, mgmt, "diagnose", "-n", namespace, "--capi-version", "v1.14.2", "-o", "json"
        )
        assert result.code == 0, result.err
        found = [f for f in json.loads(result.out)["findings"] if f["code"] == "MP2601"]
        # The check with a remediation template is not Cluster API's to remediate.
        assert [(f["severity"], f["instances"]) for f in found] == [("warning", ["vmss-workers-2"])]
        assert found[0]["message"].startswith(
            "MachineHealthCheck vmss-workers-unhealthy selects 3 of 3 Machines and marks "
            "vmss-workers-2 unhealthy, waiting for remediation for 14m; Cluster API v1.14.2 "
            "does not remediate MachinePool Machines"
        )
    finally:
        delete_nodes(mgmt, objects)


def test_the_crds_refuse_what_the_reader_must_still_survive(mgmt) -> None:
    """The real CRD validation: a v1beta2 trigger range that is no range is refused, so only a
    dump can hold one (the unit tests read such values)."""
    if mgmt.generation != "v1beta2":
        pytest.skip("the v1.10 CRD has no pattern on unhealthyRange")
    namespace = mgmt.new_namespace()
    bad = health_check(
        "v1beta2",
        namespace,
        "bad",
        "prod",
        {"matchLabels": {POOL_LABEL: "x"}},
        unhealthy_range="1-3",
    )
    bad["metadata"].pop("uid")
    with pytest.raises(APIError) as refused:
        mgmt.api.create(bad)
    assert refused.value.status == 422
    assert "unhealthyInRange" in refused.value.body


# -- the real controllers ----------------------------------------------------------------------


def _condition(machine: Obj, kind: str) -> Obj:
    """A v1beta2 condition of a Machine in either API version."""
    status = machine.get("status") or {}
    if machine["apiVersion"].endswith("/v1beta1"):
        status = status.get("v1beta2") or {}
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), {})


def _live_check(pool: LivePool) -> Obj:
    """What a user applies: Node Ready False for a second makes the Machine unhealthy."""
    gen = pool.live.generation
    check = health_check(
        gen, pool.namespace, "pool-unhealthy", pool.cluster, {"matchLabels": {POOL_LABEL: pool.name}},
        node_conditions=(("Ready", "False", 1),),
    )  # fmt: skip
    check["metadata"].pop("uid")
    check["metadata"].pop("creationTimestamp")
    return check


def _machine(pool: LivePool, name: str) -> Obj:
    return pool.api.request("GET", pool.path("machines", name))  # type: ignore[no-any-return]


@pytest.mark.live
@pytest.mark.xdist_group("live")
def test_the_real_controllers_mark_a_pool_machine_and_leave_it(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AZURE, replicas=2) as pool:
        pool.wait_running(2)
        pool.api.create(_live_check(pool))
        with pool.provider.paused() as provider:
            provider.not_ready.add("pool-1")
        marked = pool.wait(
            "the MachineHealthCheck marks pool-1",
            lambda: (
                (m := _machine(pool, "pool-1"))
                and _condition(m, "HealthCheckSucceeded").get("status") == "False"
                and _condition(m, "OwnerRemediated").get("status") == "False"
                and m
            ),
        )
        assert _condition(marked, "OwnerRemediated")["reason"] == "WaitingForRemediation"
        # A new generation makes the MachinePool controller reconcile after the mark: once it
        # has observed it, it has had its chance to act on the Machine, and did not.
        path = pool.path("machinepools", pool.name)
        pool.patch(path, {"spec": {"template": {"metadata": {"annotations": {"kmp/nudge": "1"}}}}})
        generation = pool.machine_pool()["metadata"]["generation"]
        pool.wait(
            "the MachinePool controller observes the new generation",
            lambda: pool.machine_pool()["status"].get("observedGeneration") == generation,
        )
        after = _machine(pool, "pool-1")
        assert after["metadata"]["uid"] == marked["metadata"]["uid"]
        assert not after["metadata"].get("deletionTimestamp")
        assert _condition(after, "OwnerRemediated").get("status") == "False"

        kubeconfig = str(live.server.admin.kubeconfig)
        where = ("-n", pool.namespace, "--kubeconfig", kubeconfig)
        shown = run_cli(capsys, "describe", pool.name, *where, "-o", "json")
        [described] = json.loads(shown.out)["clusters"][0]["machinePools"]
        [check] = described["healthChecks"]
        assert check["machines"] == ["pool-0", "pool-1"]
        assert [m["machine"] for m in check["marked"]] == ["pool-1"]
        judged = run_cli(capsys, "diagnose", pool.name, *where, "-o", "json")
        document = json.loads(judged.out)
        version = document["capiVersion"]["version"]
        assert version == ("v1.14.2" if live.generation == "v1beta2" else "v1.10.10")
        [finding] = [f for f in document["findings"] if f["code"] == "MP2601"]
        assert finding["instances"] == ["pool-1"]
        assert (
            f"Cluster API {version} does not remediate MachinePool Machines" in finding["message"]
        )
