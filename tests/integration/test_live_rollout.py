"""rollout status against the real controllers: a version change rolled to its end, and one that
cannot finish.

The MachinePool's version is changed as an operator would; the Cluster API manager reconciles
the pool and its Machines, and support.provider rolls the instances as CAPZ's default strategy
does (one new instance beside the old ones, an old one removed once the new one's Node is
Ready; its kubelet runs the new version). Nothing below writes a status. A rollout is paused
as an operator would (the Cluster's spec.paused): the manager and support.provider both leave the
pool alone until it is lifted, the kubelets keep posting.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import INFRA_GROUP, LivePool, live_pool
from support.provider import AWS, AZURE, Personality
from support.run import start_plugin
from support.waiting import polls

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


@pytest.fixture
def personality(live: LiveCluster) -> Personality:
    """One personality per manager: the Machines' (CAPZ) on v1.14, the providerIDs' (CAPA) on
    v1.10. test_live_upgrade follows a rollout to its end, and one that never joins, with
    both on both."""
    return AZURE if live.generation == "v1beta2" else AWS


NEW = "v1.37.0"


def _upgrade(pool: LivePool) -> None:
    pool.patch(
        pool.path("machinepools", pool.name), {"spec": {"template": {"spec": {"version": NEW}}}}
    )


def _rollout_status(pool: LivePool, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return pool.run_plugin(tmp_path, "rollout status", *extra)


def _pool_doc(out: str) -> dict[str, Any]:
    """The one pool of `rollout status -o json`."""
    pools = json.loads(out)["pools"]
    assert len(pools) == 1, pools
    return pools[0]  # type: ignore[no-any-return]


def _pause_cluster(pool: LivePool, paused: bool) -> None:
    pool.patch(pool.path("clusters", pool.cluster), {"spec": {"paused": paused}})


def _machine_of(pool: LivePool, infra_machine: str) -> str | None:
    """The name of the Machine whose infrastructureRef is this infra machine, once it exists."""
    for machine in pool.machines():
        if machine["spec"]["infrastructureRef"]["name"] == infra_machine:
            return str(machine["metadata"]["name"])
    return None


def test_a_version_change_is_followed_to_the_end(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        _upgrade(pool)
        code, out, err = _rollout_status(pool, tmp_path, "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert "Waiting for" in out  # it did wait: the old instances were there at first
        assert out.splitlines()[-1] == (
            f'MachinePool "{pool.namespace}/{pool.name}" successfully rolled out'
        )
        kubelets = {n["status"]["nodeInfo"]["kubeletVersion"] for n in pool.nodes()}
        assert kubelets == {NEW}


def test_a_rollout_whose_new_instance_never_joins_is_stuck(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    # Instances pool-0 and pool-1 come first; pool-2 is the rollout's first new one.
    with live_pool(
        live, personality, replicas=2, setup=lambda p: p.never_join.add("pool-2")
    ) as pool:
        pool.wait_running(2)
        _upgrade(pool)
        pool.wait("the new instance", lambda: "pool-2" in pool.provider.pools["pool"].instances)
        # The plugin names an instance by its Machine, else its Node, else its providerID.
        if personality.machine_kind:
            holder = pool.wait("the Machine of pool-2", lambda: _machine_of(pool, "pool-2"))
        else:
            holder = pool.provider.pools["pool"].instances["pool-2"].provider_id
        code, out, err = _rollout_status(pool, tmp_path, "--stuck-after", "10s")
        assert code == 1, (out, err)
        assert f'MachinePool "{pool.namespace}/{pool.name}" rollout is stuck' in err
        assert "2 old instances left" in err
        assert holder in err  # the instance that holds it, by name
        # Nothing has moved since: once, it is stuck too, and says which instances hold it.
        code, out, err = _rollout_status(
            pool, tmp_path, "-w=false", "-o", "json", "--stuck-after", "10s"
        )
        assert code == 1, (out, err)
        shown = _pool_doc(out)
        assert shown["state"] == "stuck", shown
        assert holder in shown["holding"], shown


def test_a_paused_rollout_is_paused_not_stuck(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        _upgrade(pool)
        # Paused between two passes of the provider as soon as it has begun to roll: a new
        # instance beside old ones, and the rollout held half way.
        for _ in polls(0.05):
            with pool.provider.paused() as provider:
                state = provider.pools["pool"]
                versions = {i.version for i in state.instances.values()}
                if NEW in versions:
                    assert versions != {NEW}, "rolled out before it could be paused"
                    _pause_cluster(pool, True)
                    at_pause = {i.name: i.version for i in state.instances.values()}
                    break
        else:
            raise AssertionError(f"no new instance: {pool.instances()}, {pool.provider.errors}")
        # The provider leaves the pool alone from its next pass on: nothing created or removed,
        # nothing written to the infra pool.
        pool.held_for(2)
        plural = personality.pool_kind.lower() + "s"
        infra = pool.path(plural, pool.name, group=INFRA_GROUP)
        before = (pool.instances(), pool.api.request("GET", infra)["metadata"]["resourceVersion"])
        pool.held_for(4)
        time.sleep(2)  # longer than --stuck-after below: would be stuck, were it not paused
        after = (pool.instances(), pool.api.request("GET", infra)["metadata"]["resourceVersion"])
        assert before[0] == at_pause
        assert after == before
        assert set(at_pause.values()) == {NEW, "v1.36.3"}, at_pause  # half way

        code, out, err = _rollout_status(
            pool, tmp_path, "-w=false", "-o", "json", "--stuck-after", "1s"
        )
        assert code == 0, (out, err)
        assert _pool_doc(out)["state"] == "paused", out
        code, out, err = _rollout_status(pool, tmp_path, "-w=false", "--stuck-after", "1s")
        assert code == 0, (out, err)
        assert "paused" in out

        # Followed, it waits out the pause however long nothing moves, and ends once it is
        # lifted and the rollout has gone on to its end.
        plugin = start_plugin(
            pool.plugin_args("rollout status", "--stuck-after", "5s", "--timeout", "200s"), tmp_path
        )
        try:
            try:
                plugin.wait(timeout=15)  # three stuck windows
            except subprocess.TimeoutExpired:
                pass
            else:
                out, err = plugin.communicate()
                raise AssertionError(f"ended while paused ({plugin.returncode}): {out} {err}")
            assert pool.instances() == before[0]
            _pause_cluster(pool, False)
            out, err = plugin.communicate(timeout=240)
        finally:
            plugin.kill()
        assert plugin.returncode == 0, (out, err, pool.provider.errors[-3:])
        assert out.splitlines()[-1] == (
            f'MachinePool "{pool.namespace}/{pool.name}" successfully rolled out'
        )
        assert set(pool.instances().values()) == {NEW}
        kubelets = {n["status"]["nodeInfo"]["kubeletVersion"] for n in pool.nodes()}
        assert kubelets == {NEW}
