"""rollout restart against the real Cluster API controllers and support.provider, both
personalities: the VMSS one (single instances replaced) restarts a pool of three, refused first
while a PodDisruptionBudget blocks the first drain (another allows one eviction), then with
--drain-timeout, stopped by Ctrl-C after the first replacement and gone on with by the same
command, every instance new at the end and never more than one unavailable (sampled all along);
the ASG one is refused with what rolls it."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import LivePool, budgeted_pods, live_pool
from support.provider import AWS, AZURE
from support.run import Lines, start_plugin

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

Obj = dict[str, Any]
STARTED = "kubectl-machinepool/restart-started"
REPLICAS = 3


class Availability:
    """The pool's available instances (a Machine not going whose Node is Ready), sampled in a
    thread until stopped: the fewest seen."""

    def __init__(self, pool: LivePool) -> None:
        self.pool = pool
        self.fewest = REPLICAS
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _available(self) -> int:
        ready = {
            n["metadata"]["name"]
            for n in self.pool.nodes()
            if not n["metadata"].get("deletionTimestamp")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (n.get("status") or {}).get("conditions") or []
            )
        }
        return sum(
            1
            for m in self.pool.machines()
            if not m["metadata"].get("deletionTimestamp")
            and ((m.get("status") or {}).get("nodeRef") or {}).get("name") in ready
        )

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.fewest = min(self.fewest, self._available())
            self.samples += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _started(pool: LivePool) -> str | None:
    return (pool.machine_pool()["metadata"].get("annotations") or {}).get(STARTED)


def test_a_restart_replaces_every_instance_one_at_a_time_and_goes_on_after_ctrl_c(
    live: LiveCluster, tmp_path: Path
) -> None:
    with live_pool(live, AZURE, replicas=REPLICAS) as pool:
        pool.wait_running(REPLICAS)
        before = set(pool.instances())
        budgeted_pods(pool)
        code, out, err = pool.run_plugin(tmp_path, "rollout restart", "--yes")
        assert code == 3, (out, err)
        assert "the first replacement, machine pool-0" in out
        assert "nothing was written" in err
        assert _started(pool) is None

        watching = Availability(pool)
        try:
            args = pool.plugin_args("rollout restart", "--yes", "--drain-timeout", "5s")
            with Lines(start_plugin(args, tmp_path)) as lines:
                lines.until("machine.cluster.x-k8s.io/pool-0 deleted", timeout=120)
                lines.plugin.send_signal(signal.SIGINT)
                _, err = lines.end(timeout=60)
            assert lines.plugin.returncode == 130, err
            assert "run the same command again to go on" in err
            recorded = _started(pool)
            assert recorded is not None

            code, out, err = pool.run_plugin(
                tmp_path, "rollout restart", "--yes", "--drain-timeout", "5s", "--timeout", "200s"
            )
            assert code == 0, (out, err, pool.provider.errors[-3:])
            assert f"going on with the restart begun at {recorded}" in out
            assert f"machinepool.cluster.x-k8s.io/{pool.name} restarted" in out
        finally:
            watching.stop()
        after = set(pool.instances())
        assert len(after) == REPLICAS
        assert after.isdisjoint(before)
        assert _started(pool) is None
        assert watching.samples > 0
        assert watching.fewest >= REPLICAS - 1


def test_a_pool_that_cannot_replace_one_instance_is_refused_live(
    live: LiveCluster, tmp_path: Path
) -> None:
    with live_pool(live, AWS, replicas=1) as pool:
        pool.wait_running(1)
        code, out, err = pool.run_plugin(tmp_path, "rollout restart", "--yes")
        assert code == 3, (out, err)
        assert "single instances of this pool cannot be replaced" in err
        assert "what rolls it: a new launch template version" in err
        assert _started(pool) is None
