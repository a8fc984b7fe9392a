"""Reads under single faults, named one by one: what client-go retries, we retry."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.faultproxy import Fault, Injection, Paging, fault_proxy
from support.management import ManagementCluster
from support.objects import list_scenario
from support.run import run_cli, start_plugin

CRD_GET = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"


def _list(capsys, kubeconfig: Path, namespace: str, *args: str):
    return run_cli(capsys, "list", "-n", namespace, "--kubeconfig", str(kubeconfig), *args)


@pytest.fixture
def seeded(v1beta2: ManagementCluster) -> str:
    namespace = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", namespace))
    v1beta2.workload_kubeconfig_secret(namespace, "prod")  # list reads the Cluster's Nodes too
    return namespace


def test_429_with_retry_after_is_waited_out(v1beta2, seeded, capsys, tmp_path) -> None:
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        pools = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{seeded}/machinepools"
        proxy.arm(Injection(Fault.TOO_MANY_REQUESTS, match=lambda s: s.path == pools))
        result = _list(capsys, kubeconfig, seeded, "-o", "name")
        asked = [s for s in proxy.log if s.path == pools]
    assert (result.code, result.err) == (0, "")
    assert "machinepool.cluster.x-k8s.io/asg-workers" in result.out
    assert [s.fault for s in asked] == [Fault.TOO_MANY_REQUESTS, None]


def test_a_failing_crd_get_falls_back_to_discovery(v1beta2, seeded, capsys, tmp_path) -> None:
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        clean = _list(capsys, kubeconfig, seeded, "-o", "json")
        proxy.arm(Injection(Fault.SERVER_ERROR, match=lambda s: s.path.startswith(CRD_GET)))
        result = _list(capsys, kubeconfig, seeded, "-o", "json")
        fired = proxy.fired
    assert fired is not None
    assert (result.code, result.err) == (0, "")
    assert result.out == clean.out


def test_an_expired_continue_token_restarts_the_list(v1beta2, seeded, capsys, tmp_path) -> None:
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(
            Injection(Fault.GONE, match=lambda s: "continue" in s.params),
            Paging(1, match=lambda s: s.path.endswith("/machinepools")),
        )
        result = _list(capsys, kubeconfig, seeded, "-o", "name")
        fired = proxy.fired
    assert fired is not None
    assert result.code == 0, result.err
    names = [line for line in result.out.splitlines() if line]
    assert names == sorted(set(names))  # every pool once: no page of the first try kept
    assert len(names) == len(
        [o for o in list_scenario("v1beta2", seeded) if o["kind"] == "MachinePool"]
    )


def test_the_lists_after_the_pools_go_out_side_by_side(v1beta2, seeded, tmp_path) -> None:
    """While the Cluster LIST is held unanswered, the infra pool and Machine LISTs still go
    out: one slow kind does not hold up the others (sequential reads would send nothing more)."""
    clusters = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{seeded}/clusters"
    machines = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{seeded}/machines"
    infra = f"/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/{seeded}/azuremachinepools"
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(Injection(Fault.STALL, match=lambda s: s.path == clusters))
        held = proxy.arrival(lambda s: s.path == clusters)
        sent = [proxy.arrival(lambda s, p=path: s.path == p) for path in (machines, infra)]
        args = ["describe", "vmss-workers", "-n", seeded, "--kubeconfig", str(kubeconfig)]
        plugin = start_plugin([*args, "--request-timeout", "60s"], tmp_path)
        try:
            assert held.wait(30), "the Cluster LIST never came"
            # Generous: the bound is only there so that a regression fails instead of hanging.
            assert all(event.wait(30) for event in sent), [str(s) for s in proxy.log]
            proxy.arm()  # let the held LIST go: its connection closes, the read is asked again
            out, err = plugin.communicate(timeout=60)
        finally:
            plugin.kill()
    assert plugin.returncode == 0, err
    assert "MachinePool " + seeded + "/vmss-workers" in out


CORE = "/apis/cluster.x-k8s.io/v1beta2/namespaces/{ns}"
AZURE = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/{ns}"


@pytest.mark.parametrize(
    ("held", "going"),
    [
        # The largest LIST does not wait for the smallest.
        (f"{CORE}/machinepools", f"{CORE}/machines"),
        # Nor the machine kind for its infra pools (nor for the version they are served in).
        (f"{AZURE}/azuremachinepools", f"{AZURE}/azuremachinepoolmachines"),
    ],
    ids=["machines-beside-machinepools", "machine-kind-beside-infra-pools"],
)
def test_a_list_goes_out_while_another_is_held(v1beta2, seeded, tmp_path, held, going) -> None:
    held, going = held.format(ns=seeded), going.format(ns=seeded)
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(Injection(Fault.STALL, match=lambda s: s.path == held))
        holding = proxy.arrival(lambda s: s.path == held)
        sent = proxy.arrival(lambda s: s.path == going)
        args = ["describe", "vmss-workers", "-n", seeded, "--kubeconfig", str(kubeconfig)]
        plugin = start_plugin([*args, "--request-timeout", "60s"], tmp_path)
        try:
            assert holding.wait(30), f"{held} never came"
            assert sent.wait(30), [str(s) for s in proxy.log]
            proxy.arm()
            out, err = plugin.communicate(timeout=60)
        finally:
            plugin.kill()
    assert plugin.returncode == 0, err
    assert "AzureMachinePoolMachine" in out


def test_describe_asks_each_thing_once_and_nothing_per_object(v1beta2, seeded, capsys, tmp_path):
    """Pages of one object each, so a pool's every instance is a page: still one LIST per kind
    (its pages), discovery and each CRD once, no GET of a single Machine, infra machine or Node."""
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(paging=Paging(1))
        result = run_cli(capsys, "diagnose", "-n", seeded, "--kubeconfig", str(kubeconfig))
        log = proxy.log
    assert result.code in (0, 1), result.err
    # A 429 (a fresh CRD's watch cache still filling, Retry-After 1) is asked again, rightly.
    answered = [s for s in log if s.upstream_status != 429]
    firsts = [(s.method, s.path, s.query) for s in answered if "continue" not in s.params]
    assert len(firsts) == len(set(firsts)), [str(s) for s in log]
    pages = [s for s in log if "continue" in s.params]
    assert pages  # the paging did make several pages of some LIST
    assert {s.path for s in pages} <= {s.path for s in log if "limit" in s.params}
    singles = {s.path for s in log if s.method == "GET" and "limit" not in s.params}
    expected = {
        "/apis/cluster.x-k8s.io",  # the Cluster API version: at most once, none on v1beta2
        f"/api/v1/namespaces/{seeded}/secrets/prod-kubeconfig",  # the workload's kubeconfig
    }
    assert singles - expected <= {p for p in singles if p.startswith(CRD_GET)}, singles
