"""diff against the real Cluster API v1.14 controllers and webhooks, with support.provider playing
CAPD's DockerMachinePool: each prediction made by a server-side dry-run apply, then the change
applied and the pool watched to do what was predicted.

One pool serves every case, in this order: a KubeadmConfig spec changed under the same name
(predicted "rolls none", applied, no instance replaced over provider passes); a replicas change
(predicted "scales"); a clusterName change (refused by the MachinePool webhook, exit 3); a new
version (predicted "rolls every instance" with the roll's strategy, instances and the workload
cluster's blocking budget, applied, every instance replaced).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.live import LiveCluster
from support.livepool import LivePool, live_pool
from support.provider import CAPI, DOCKER
from support.run import start_plugin

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta2"
NEW = "v1.37.0"
# Passes of the provider that must leave the instances as they were: each pass sees the
# MachinePool and infra pool afresh, as a controller's reconcile does.
PASSES = 5


def _diff(pool: LivePool, home: Path, objects: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    manifest = home / "manifest.yaml"
    manifest.write_text(yaml.safe_dump_all(objects))
    kubeconfig = str(pool.live.server.admin.kubeconfig)
    args = ["diff", "-f", str(manifest), "-n", pool.namespace, "--kubeconfig", kubeconfig]
    plugin = start_plugin([*args, "--exit-code", "-o", "json"], home)
    try:
        out, err = plugin.communicate(timeout=120)
    finally:
        plugin.kill()
    assert plugin.returncode in (0, 1, 2, 3), err
    assert err == "", err
    return plugin.returncode, json.loads(out)


def _machine_pool(pool: LivePool, spec: dict[str, Any]) -> dict[str, Any]:
    """The MachinePool as its manifest in git would hold it, with one change."""
    current = pool.machine_pool()
    body = {"clusterName": current["spec"]["clusterName"], "template": current["spec"]["template"]}
    body["template"] = {
        **body["template"],
        "spec": {**body["template"]["spec"], **spec.pop("template", {})},
    }
    return {
        "apiVersion": f"{CAPI}/v1beta2",
        "kind": "MachinePool",
        "metadata": {"name": pool.name, "namespace": pool.namespace},
        "spec": {**body, **spec},
    }


def _kubeadm_config(pool: LivePool, max_pods: str) -> dict[str, Any]:
    args = [{"name": "max-pods", "value": max_pods}]
    return {
        "apiVersion": BOOTSTRAP,
        "kind": "KubeadmConfig",
        "metadata": {"name": "pool-config", "namespace": pool.namespace},
        "spec": {"joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": args}}},
    }


def _with_kubeadm_config(pool: LivePool) -> None:
    """The pool bootstrapped by a KubeadmConfig that CABPK has made data for (no CABPK runs
    here: its status is written as CABPK writes it)."""
    config = _kubeadm_config(pool, "110")
    config["status"] = {
        "initialization": {"dataSecretCreated": True},
        "dataSecretName": f"{pool.name}-bootstrap",
    }
    pool.api.create(config)
    ref = {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "pool-config"}
    spec = {"template": {"spec": {"bootstrap": {"configRef": ref}}}}
    pool.patch(pool.path("machinepools", pool.name), {"spec": spec})

    def adopted() -> bool:
        found = pool.api.get(config)
        return any(
            o.get("kind") == "MachinePool" for o in found["metadata"].get("ownerReferences") or []
        )

    pool.wait("the KubeadmConfig adopted by its MachinePool", adopted)


def _blocking_budget(pool: LivePool) -> str:
    """A pod on the pool's Node under a budget that allows no disruption: its path."""
    pool.api.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "blocked", "namespace": pool.namespace, "labels": {"app": "b"}},
            "spec": {
                "nodeName": pool.node_name("pool-0"),
                "containers": [{"name": "app", "image": "example.invalid/app:1"}],
            },
        }
    )
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "blocked", "namespace": pool.namespace},
        "spec": {"selector": {"matchLabels": {"app": "b"}}, "minAvailable": 1},
    }
    pool.api.create(budget)
    path = pool.api.path_of(budget, "blocked")

    def computed() -> bool:
        status = pool.api.request("GET", path).get("status") or {}
        return (status.get("expectedPods"), status.get("disruptionsAllowed")) == (1, 0)

    pool.wait("the budget computed by the disruption controller", computed)
    return path


def _pool_of(document: dict[str, Any]) -> dict[str, Any]:
    [pool] = document["pools"]
    return pool


def _held_for(pool: LivePool, passes: int) -> dict[str, str]:
    """The instances after this many more provider passes, each seeing the new state."""
    first = pool.provider.passes
    pool.wait(f"{passes} provider passes", lambda: pool.provider.passes >= first + passes)
    return pool.instances()


def test_predictions_hold_on_the_real_controllers(live: LiveCluster, tmp_path: Path) -> None:
    if live.generation != "v1beta2":
        pytest.skip("DockerMachinePool with v1beta2 references: the v1.14 manager")
    with live_pool(live, DOCKER, replicas=1) as pool:
        pool.wait_running(1)
        _with_kubeadm_config(pool)
        pool.wait_running(1)
        before = pool.instances()

        # A KubeadmConfig changed under its name: rolls none, and none rolls.
        code, document = _diff(pool, tmp_path, [_kubeadm_config(pool, "58")])
        found = _pool_of(document)
        assert (code, found["effect"]) == (1, "RollsNone"), found
        assert "#10496" in found["surprise"]
        [config] = found["objects"]
        assert config["comparedBy"].startswith("server-side dry-run apply"), config
        pool.patch(
            pool.api.path_of(_kubeadm_config(pool, "58"), "pool-config"),
            {"spec": _kubeadm_config(pool, "58")["spec"]},
        )
        assert _held_for(pool, PASSES) == before

        # replicas: scales.
        code, document = _diff(pool, tmp_path, [_machine_pool(pool, {"replicas": 2})])
        assert (code, _pool_of(document)["effect"]) == (1, "Scales")

        # clusterName: the MachinePool webhook refuses it, and says so.
        code, document = _diff(pool, tmp_path, [_machine_pool(pool, {"clusterName": "other"})])
        [refused] = _pool_of(document)["objects"]
        assert (code, _pool_of(document)["effect"]) == (3, "Refused")
        assert "immutable" in refused["refused"]

        # A new version: rolls every instance, and every instance is replaced.
        budget = _blocking_budget(pool)
        new = _machine_pool(pool, {"template": {"version": NEW}})
        code, document = _diff(pool, tmp_path, [new])
        found = _pool_of(document)
        assert (code, found["effect"], found["rolls"]) == (2, "RollsAll", True), found
        roll = found["roll"]
        # The workload server is shared by the worker's tests: their budgets count too.
        ours = [b for b in roll["blockingBudgets"] if b.startswith(f"{pool.namespace}/")]
        assert (roll["instances"], ours) == (1, [f"{pool.namespace}/blocked"])
        assert "dockermachinepool" in found["source"].lower()
        # The budget would hold the drain forever (nothing recreates an evicted pod here).
        pool.api.request("DELETE", budget)
        version = {"spec": {"template": {"spec": {"version": NEW}}}}
        pool.patch(pool.path("machinepools", pool.name), version)
        pool.wait(
            "every instance replaced by one of the new version",
            lambda: (
                set(pool.instances().values()) == {NEW} and not set(pool.instances()) & set(before)
            ),
            timeout=200,
        )
