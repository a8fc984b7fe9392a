"""rollout status against the real API server: a rollout followed to its end by watch, a stuck one,
the timeout, and a watch that has to start over (410 Gone) on the way.

The pool is the azure-vmss scenario mid-upgrade (one instance on the old kubelet and model, one
Node NotReady); the test then writes what CAPZ and the kubelets would as the upgrade ends.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.faultproxy import Fault, Injection, fault_proxy
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Lines, start_plugin
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
POOL = "vmss-workers"
TARGET = "v1.33.4"


def _upgrading(cluster: ManagementCluster) -> Iterator[tuple[str, list[Obj]]]:
    namespace = cluster.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = SCENARIOS["azure-vmss"](cluster.generation, namespace, salt)
    create_scenario(cluster, objects)
    yield namespace, objects
    delete_nodes(cluster, objects)


@pytest.fixture
def upgrading(mgmt: ManagementCluster) -> Iterator[tuple[str, list[Obj]]]:
    """The mid-upgrade pool, in each Cluster API generation."""
    yield from _upgrading(mgmt)


@pytest.fixture
def upgrading_v1beta2(v1beta2: ManagementCluster) -> Iterator[tuple[str, list[Obj]]]:
    yield from _upgrading(v1beta2)


def _finished(obj: Obj) -> Obj | None:
    """The object as the provider and kubelet leave it once the upgrade is done."""
    done = copy.deepcopy(obj)
    status = done.get("status") or {}
    if obj["kind"] == "Node":
        status["nodeInfo"]["kubeletVersion"] = TARGET
        for cond in status["conditions"]:
            if cond["type"] == "Ready":
                cond["status"] = "True"
    elif obj["kind"] == "AzureMachinePoolMachine":
        status["latestModelApplied"] = True
    elif obj["kind"] == "AzureMachinePool":
        for cond in status["conditions"]:
            if cond["type"] == "ScaleSetModelUpdated":
                cond.update(status="True", reason="", severity="", message="")
    else:
        return None
    return done


def _args(namespace: str, kubeconfig: Path, *extra: str) -> list[str]:
    return ["rollout", "status", POOL, "-n", namespace, "--kubeconfig", str(kubeconfig), *extra]


def _finish(cluster: ManagementCluster, objects: list[Obj]) -> None:
    """One write at a time, as the provider and the kubelets would make them."""
    for obj in objects:
        finished = _finished(obj)
        if finished is not None:
            cluster.api.set_status(finished)


def test_a_rollout_is_followed_to_its_end(mgmt, upgrading, tmp_path) -> None:
    namespace, objects = upgrading
    args = _args(namespace, mgmt.kubeconfig, "--timeout", "90s")
    with Lines(start_plugin(args, tmp_path)) as lines:
        before = lines.until("Waiting for")
        assert "    old        vmss-workers-0  kubelet v1.32.9, target v1.33.4" in "\n".join(before)
        _finish(mgmt, objects)
        out, err = lines.end()
    assert lines.plugin.returncode == 0, err
    assert out[-1] == f'MachinePool "{namespace}/{POOL}" successfully rolled out'


def test_a_rollout_that_does_not_move_is_stuck(v1beta2, upgrading_v1beta2, tmp_path) -> None:
    namespace, _ = upgrading_v1beta2
    args = _args(namespace, v1beta2.kubeconfig, "--stuck-after", "3s")
    plugin = start_plugin(args, tmp_path)
    _, err = plugin.communicate(timeout=60)
    assert plugin.returncode == 1, err
    assert f'error: MachinePool "{namespace}/{POOL}" rollout is stuck: nothing moved' in err
    assert "findings: MP" in err


def test_the_timeout_ends_the_wait(v1beta2, upgrading_v1beta2, tmp_path) -> None:
    namespace, _ = upgrading_v1beta2
    args = _args(namespace, v1beta2.kubeconfig, "--timeout", "2s", "--stuck-after", "1h")
    plugin = start_plugin(args, tmp_path)
    out, err = plugin.communicate(timeout=60)
    assert plugin.returncode == 1, err
    assert err.startswith("error: timed out waiting for the condition")
    assert "Waiting for" in out


def test_a_watch_that_must_start_over_still_follows(v1beta2, upgrading_v1beta2, tmp_path) -> None:
    """The first watch of the Machines is answered 410 Gone: the plugin lists them again (a
    change in itself) and goes on following the rollout to its end."""
    namespace, objects = upgrading_v1beta2
    machines = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/machines"
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(Injection(Fault.GONE, match=lambda s: s.path == machines and "watch" in s.params))
        with Lines(
            start_plugin(_args(namespace, kubeconfig, "--timeout", "90s"), tmp_path)
        ) as lines:
            lines.until("Waiting for")
            _finish(v1beta2, objects)
            out, err = lines.end()
        fired = proxy.fired
    assert lines.plugin.returncode == 0, err
    assert out[-1] == f'MachinePool "{namespace}/{POOL}" successfully rolled out'
    assert fired is not None  # the 410 went out, and was survived
    assert "watch" in fired.params
