"""scale, rollout pause and resume against the real Cluster API controllers and support.provider,
both personalities: scaled, the pool runs the new count of Nodes, and each owner of the size
refuses it; paused, a new version is not rolled (the provider leaves the pool alone pass after
pass); resumed, the rollout runs to its end."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.live import LiveCluster
from support.livepool import live_pool
from support.provider import AWS, AZURE, Personality

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

NEW = "v1.37.0"
BOTH = pytest.mark.parametrize("personality", [AZURE, AWS], ids=lambda p: p.name)
CAPI = "cluster.x-k8s.io"


@BOTH
def test_pause_holds_the_rollout_and_resume_lets_it_run(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        code, out, err = pool.run_plugin(tmp_path, "rollout pause", "--yes")
        assert code == 0, (out, err)
        assert f"machinepool.cluster.x-k8s.io/{pool.name} annotated" in out
        pool.held_for(2)
        before = pool.instances()
        version = {"spec": {"template": {"spec": {"version": NEW}}}}
        pool.patch(pool.path("machinepools", pool.name), version)
        pool.held_for(4)
        assert pool.instances() == before  # nothing rolled while paused
        code, out, err = pool.run_plugin(tmp_path, "rollout resume", "--yes")
        assert code == 0, (out, err)
        code, out, err = pool.run_plugin(tmp_path, "rollout status", "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert set(pool.instances().values()) == {NEW}
        annotations = pool.machine_pool()["metadata"].get("annotations") or {}
        assert "cluster.x-k8s.io/paused" not in annotations
        assert "kubectl-machinepool/paused" not in annotations


@BOTH
def test_scale_runs_the_new_count_and_each_owner_of_the_size_refuses(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=1) as pool:
        pool.wait_running(1)
        code, out, err = pool.run_plugin(tmp_path, "scale", "--replicas", "2", "--yes")
        assert code == 0, (out, err)
        assert f"machinepool.{CAPI}/{pool.name} scaled" in out
        pool.wait_running(2)
        path = pool.path("machinepools", pool.name)
        owners = [
            ({f"{CAPI}/replicas-managed-by": "external-autoscaler"}, "replicas are managed by"),
            (
                {f"{CAPI}/cluster-api-autoscaler-node-group-min-size": "1",
                 f"{CAPI}/cluster-api-autoscaler-node-group-max-size": "2"},
                "3 is above its maximum 2",
            ),
        ]  # fmt: skip
        for annotations, refusal in owners:
            pool.patch(path, {"metadata": {"annotations": annotations}})
            code, out, err = pool.run_plugin(tmp_path, "scale", "--replicas", "3", "--yes")
            assert code == 3, (out, err)
            assert refusal in " ".join(err.split()), err
            pool.patch(path, {"metadata": {"annotations": dict.fromkeys(annotations)}})
        assert pool.machine_pool()["spec"]["replicas"] == 2
