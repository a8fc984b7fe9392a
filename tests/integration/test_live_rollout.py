"""rollout status against the real controllers: a version change rolled to its end, and one that
cannot finish.

The MachinePool's version is changed as an operator would; the Cluster API manager reconciles
the pool and its Machines, and support.provider rolls the instances as CAPZ's default strategy
does (one new instance beside the old ones, an old one removed once the new one's Node is
Ready; its kubelet runs the new version). Nothing below writes a status.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.live import LiveCluster
from support.livepool import LivePool, live_pool
from support.provider import AWS, AZURE, Personality
from support.run import start_plugin

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

BOTH = pytest.mark.parametrize("personality", [AZURE, AWS], ids=lambda p: p.name)
NEW = "v1.37.0"


def _upgrade(pool: LivePool) -> None:
    pool.patch(
        pool.path("machinepools", pool.name), {"spec": {"template": {"spec": {"version": NEW}}}}
    )


def _rollout_status(pool: LivePool, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    kubeconfig = str(pool.live.server.admin.kubeconfig)
    args = ["rollout", "status", pool.name, "-n", pool.namespace, "--kubeconfig", kubeconfig]
    plugin = start_plugin([*args, *extra], tmp_path)
    try:
        out, err = plugin.communicate(timeout=240)
    finally:
        plugin.kill()
    return plugin.returncode, out, err


@BOTH
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


@BOTH
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
        code, out, err = _rollout_status(pool, tmp_path, "--stuck-after", "10s")
        assert code == 1, (out, err)
        assert f'MachinePool "{pool.namespace}/{pool.name}" rollout is stuck' in err
        assert "2 old instances left" in err
