"""Unreadable Events and Nodes, against the real API server: a warning, never "none".

Every other kind a command cannot read is a one-line warning; Events and Nodes were not: with
the Events LIST refused, `events` said "No events found" (exit 0) and describe dropped its
Events section, though a Warning Event existed; without the `<cluster>-kubeconfig` Secret,
`rollout status` counted "0 of 2 Ready" from Machine versions and, followed, called the rollout
stuck. These pin the warning, and that nothing unknown is judged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.controlplane import ControlPlane
from support.faultproxy import Fault, FaultProxy, Injection, fault_proxy
from support.management import (
    ManagementCluster,
    create_scenario,
    delete_nodes,
    management_cluster,
)
from support.run import run_cli, start_plugin
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
POOL = "vmss-workers"


def warning_event(namespace: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{POOL}.warning", "namespace": namespace},
        "involvedObject": {"kind": "MachinePool", "name": POOL, "namespace": namespace},
        "type": "Warning",
        "reason": "FailedScaleUp",
        "message": "quota exceeded",
        "count": 3,
        "firstTimestamp": "2026-11-29T14:00:00Z",
        "lastTimestamp": "2026-11-29T14:50:00Z",
        "source": {"component": "test"},
    }


@pytest.fixture(scope="module")
def pool(control_plane: ControlPlane) -> Iterator[tuple[str, str]]:
    """The azure-vmss scenario mid-upgrade with a Warning Event: (namespace, cluster)."""
    v1beta2 = management_cluster(control_plane, "v1beta2")
    namespace = v1beta2.new_namespace()
    objects = SCENARIOS["azure-vmss"]("v1beta2", namespace, namespace.removeprefix("t-"))
    create_scenario(v1beta2, [*objects, warning_event(namespace)])
    [cluster] = [o["metadata"]["name"] for o in objects if o["kind"] == "Cluster"]
    yield namespace, cluster
    delete_nodes(v1beta2, objects)


@pytest.fixture
def proxy(v1beta2: ManagementCluster, tmp_path: Path) -> Iterator[FaultProxy]:
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as running:
        yield running


def _events_refused(proxy: FaultProxy, namespace: str, fault: Fault) -> None:
    events = f"/api/v1/namespaces/{namespace}/events"
    proxy.arm(Injection(fault, match=lambda s: s.path == events))


@pytest.mark.parametrize("fault", [Fault.FORBIDDEN, Fault.SERVER_ERROR], ids=["403", "500"])
@pytest.mark.parametrize("output", ["table", "json"])
def test_events_that_cannot_be_read_are_an_error_not_none(
    v1beta2, pool, proxy, capsys, tmp_path, fault, output
) -> None:
    namespace, _ = pool
    kubeconfig = str(proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin))
    args = ("events", POOL, "-n", namespace, "--kubeconfig", kubeconfig, "-o", output)
    proxy.arm()
    seen = run_cli(capsys, *args)
    assert seen.code == 0, seen.err
    assert "FailedScaleUp" in seen.out  # the Event is there to be missed
    _events_refused(proxy, namespace, fault)
    result = run_cli(capsys, *args)
    assert proxy.fired is not None
    assert result.code == 1, result.err
    assert result.out == ""
    assert "No events found" not in result.err
    lines = result.err.splitlines()
    assert lines[0].startswith("warning: cannot read Event objects, so the pools' Events are")
    assert lines[1] == "error: the pools' Events could not be read, so none are listed"
    assert lines[2].startswith("hint: ")


def test_describe_warns_when_the_events_cannot_be_read(v1beta2, pool, proxy, capsys, tmp_path):
    namespace, _ = pool
    kubeconfig = str(proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin))
    args = ("describe", POOL, "-n", namespace, "--kubeconfig", kubeconfig)
    proxy.arm()
    assert "FailedScaleUp" in run_cli(capsys, *args).out
    _events_refused(proxy, namespace, Fault.FORBIDDEN)
    result = run_cli(capsys, *args)
    assert result.code == 0, result.err
    assert "warning: cannot read Event objects, so the pools' Events are not shown" in result.err
    assert "FailedScaleUp" not in result.out
    _events_refused(proxy, namespace, Fault.FORBIDDEN)
    document = json.loads(run_cli(capsys, *args, "-o", "json").out)
    assert any(n.startswith("cannot read Event objects") for n in document["notes"])


@pytest.fixture
def secretless(v1beta2: ManagementCluster, pool: tuple[str, str]) -> Iterator[str]:
    """The pool with its Cluster's kubeconfig Secret gone: the Nodes cannot be read."""
    namespace, cluster = pool
    path = f"/api/v1/namespaces/{namespace}/secrets/{cluster}-kubeconfig"
    secret = v1beta2.api.request("GET", path)
    v1beta2.api.request("DELETE", path)
    yield namespace
    secret["metadata"] = {k: secret["metadata"][k] for k in ("name", "namespace")}
    v1beta2.api.create(secret)


def _rollout(v1beta2: ManagementCluster, namespace: str, *extra: str) -> list[str]:
    kubeconfig = str(v1beta2.kubeconfig)
    return ["rollout", "status", POOL, "-n", namespace, "--kubeconfig", kubeconfig, *extra]


def test_rollout_status_without_nodes_judges_nothing(v1beta2, secretless, capsys) -> None:
    result = run_cli(capsys, *_rollout(v1beta2, secretless, "-w=false"))
    assert result.code == 0, result.err
    [warning] = [line for line in result.err.splitlines() if line.startswith("warning:")]
    assert "Nodes of Cluster" in warning
    assert "are not shown" in warning
    assert "could not be read, so no instance's version or readiness is known" in result.out
    assert "Ready" not in result.out.splitlines()[-1]
    assert "(no Node)" not in result.out
    document = json.loads(
        run_cli(capsys, *_rollout(v1beta2, secretless, "-w=false", "-o", "json")).out
    )
    [rollout] = document["pools"]
    assert (rollout["nodesRead"], rollout["stuck"], rollout["done"]) == (False, False, False)
    assert rollout["counts"]["upToDateAndReady"] is None
    assert {i["state"] for i in rollout["instances"]} <= {"unknown", "old", "up-to-date"}
    assert all(i["ready"] is None for i in rollout["instances"])
    assert document["notes"]


def test_followed_without_nodes_it_waits_and_never_calls_it_stuck(
    v1beta2, secretless, tmp_path
) -> None:
    """Every change is older than --stuck-after: with the Nodes read this is stuck at once
    (test_rollout_status.py); without them the wait goes on to the timeout."""
    args = _rollout(v1beta2, secretless, "--stuck-after", "1s", "--timeout", "3s")
    plugin = start_plugin(args, tmp_path)
    out, err = plugin.communicate(timeout=120)  # a guard: the command ends at its timeout
    assert plugin.returncode == 1, err
    assert "stuck" not in err
    assert "error: timed out waiting for the condition" in err
    assert err.count("are not shown") == 1  # warned once, not on every read
    assert "could not be read" in out
