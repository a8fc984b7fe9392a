"""fix against the real Cluster API v1.14 controllers and support.provider (CAPZ's personality,
with Machines): a forgotten `rollout pause` resumed, a version/image split upgraded to a pair the
provider rolls once, and a surge instance that holds a stuck rollout deleted; each step through
its own command's plan, preflight and write engine, the pool diagnosed again between steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import GALLERY, INFRA_GROUP, LivePool, live_pool
from support.provider import AZURE

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]
V1_14 = pytest.mark.parametrize("live", ["v1beta2"], indirect=True)

NEW = "v1.37.0"
CAPI = "cluster.x-k8s.io"
BOUNDS = (("min", "2"), ("max", "3"))
PAUSED = "cluster.x-k8s.io/paused"
RECORD = "kubectl-machinepool/paused"


def _fix(pool: LivePool, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return pool.run_plugin(tmp_path, "fix", "--yes", *extra)


def _state(pool: LivePool, tmp_path: Path, *extra: str) -> str:
    _, out, _ = pool.run_plugin(tmp_path, "rollout status", "-w=false", "-o", "json", *extra)
    return str(json.loads(out)["pools"][0]["state"])


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


@V1_14
def test_a_forgotten_pause_is_resumed(live: LiveCluster, tmp_path: Path) -> None:
    with live_pool(live, AZURE, replicas=1) as pool:
        pool.wait_running(1)
        code, out, err = pool.run_plugin(tmp_path, "rollout pause", "--yes")
        assert code == 0, (out, err)
        pool.held_for(1)
        code, out, err = _fix(pool, tmp_path)
        assert code == 0, (out, err)
        line = f"kubectl machinepool rollout resume {pool.name} -n {pool.namespace}"
        assert f"1. {line}" in out
        assert "fixes:  MP0001" in out
        assert f"Step 1 of 1: {line}" in out
        assert f"Resume MachinePool {pool.namespace}/{pool.name}" in out  # resume's own plan
        assert f"1. done: {line}" in " ".join(out.split("\n  "))
        assert not {PAUSED, RECORD} & set(_annotations(pool.machine_pool()))
        infra = pool.api.request("GET", pool.path("azuremachinepools", pool.name, INFRA_GROUP))
        assert PAUSED not in _annotations(infra)


@V1_14
def test_a_version_image_split_is_upgraded_once_the_rollout_before_it_is_done(
    live: LiveCluster, tmp_path: Path
) -> None:
    """Two steps: the scale into the autoscaler's bounds (not disruptive) first, then the
    upgrade, which the pool diagnosed again holds back while the scale's new instance rolls in;
    run again, fix upgrades the pool to the pair."""
    with live_pool(live, AZURE, replicas=1, infra_spec=GALLERY) as pool:
        pool.wait_running(1)
        pool.control_plane_to(NEW)
        # The version alone, as cluster-api#7248 tells: rolled to the new version, old image.
        version = {"spec": {"template": {"spec": {"version": NEW}}}}
        pool.patch(pool.path("machinepools", pool.name), version)
        pool.wait("the split rolled out", lambda: _state(pool, tmp_path) == "done")
        bounds = {f"{CAPI}/cluster-api-autoscaler-node-group-{k}-size": v for k, v in BOUNDS}
        pool.patch(pool.path("machinepools", pool.name), {"metadata": {"annotations": bounds}})
        code, out, err = _fix(pool, tmp_path, "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        scale = f"scale {pool.name} -n {pool.namespace} --replicas 2 --current-replicas 1"
        upgrade = f"upgrade {pool.name} -n {pool.namespace} --version {NEW}"
        assert f"1. kubectl machinepool {scale}" in out
        assert f"2. kubectl machinepool {upgrade}" in out
        steps = " ".join(out.partition("\nSteps:\n")[2].split())
        assert steps.startswith(f"1. done: kubectl machinepool {scale} 2. skipped (held back now:")
        assert "and this step rolls the pool: run fix again once it is done): kubectl" in steps
        assert pool.provider.pools["pool"].models[-1] == (NEW, "1.36.3")

        pool.wait("the scale rolled in", lambda: _state(pool, tmp_path) == "done")
        code, out, err = _fix(pool, tmp_path, "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert f"Step 1 of 1: kubectl machinepool {upgrade}" in out, out
        assert "spec.template.image.computeGallery.version: 1.36.3 -> 1.37.0" in out
        assert f'MachinePool "{pool.namespace}/{pool.name}" successfully rolled out' in out
        # The version did not change, so the followed rollout can be done before the provider
        # takes up the image: its next model is the pair, never one of the two changed alone.
        models = pool.provider.pools["pool"].models
        pool.wait("the pair taken up", lambda: len(models) > 2)
        assert models == [("v1.36.3", "1.36.3"), (NEW, "1.36.3"), (NEW, "1.37.0")]
        code, out, err = pool.run_plugin(tmp_path, "diagnose", "-o", "json")
        assert "MP1301" not in {f["code"] for f in json.loads(out)["findings"]}


@V1_14
def test_a_surge_instance_holding_a_stuck_rollout_is_deleted(
    live: LiveCluster, tmp_path: Path
) -> None:
    # pool-0 and pool-1 come first; pool-2 is the rollout's first new one, and never joins.
    with live_pool(live, AZURE, replicas=2, setup=lambda p: p.never_join.add("pool-2")) as pool:
        pool.wait_running(2)
        pool.control_plane_to(NEW)
        version = {"spec": {"template": {"spec": {"version": NEW}}}}
        pool.patch(pool.path("machinepools", pool.name), version)
        holder = pool.wait("the Machine of pool-2", lambda: _machine_of(pool, "pool-2"))
        stuck = ("--stuck-after", "10s")
        pool.wait("the rollout stuck", lambda: _state(pool, tmp_path, *stuck) == "stuck")
        code, out, err = _fix(pool, tmp_path, *stuck, "--timeout", "120s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        line = f"kubectl machinepool delete-machine {holder} -n {pool.namespace} --pool {pool.name}"
        assert f"Step 1 of 1: {line}" in out
        assert "no Node for" in out  # the cause, read before the deletion
        assert f"machine.cluster.x-k8s.io/{holder} deleted" in out
        assert holder not in {m["metadata"]["name"] for m in pool.machines()}


def _machine_of(pool: LivePool, infra_machine: str) -> str | None:
    for machine in pool.machines():
        if machine["spec"]["infrastructureRef"]["name"] == infra_machine:
            return str(machine["metadata"]["name"])
    return None
