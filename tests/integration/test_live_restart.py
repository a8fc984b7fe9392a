"""rollout restart against the real Cluster API controllers and support.provider, both
personalities: the VMSS one (single instances replaced) restarts a pool of three, refused first
while a PodDisruptionBudget blocks the first drain (another allows one eviction), then with
--drain-timeout, stopped by Ctrl-C after the first replacement and gone on with by the same
command: every instance new at the end, and never more than one unavailable after any change
the watches of the Machines and the Nodes sent. The ASG one is refused with what rolls it."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
    """The pool's available instances (a Machine not going whose Node is Ready) after every
    change the API server sends on watches of the Machines and the Nodes: the fewest seen."""

    def __init__(self, pool: LivePool) -> None:
        self.pool = pool
        self.fewest = REPLICAS
        self.events = 0
        self._lock = threading.Lock()
        self._machines: dict[str, Obj] = {}
        self._nodes: dict[str, Obj] = {}
        self._open: list[tuple[http.client.HTTPSConnection, http.client.HTTPResponse]] = []
        self._threads = [
            self._watch(pool.path("machines"), self._machines, lambda _: True),
            self._watch("/api/v1/nodes", self._nodes, lambda n: n.startswith(pool.namespace)),
        ]

    def _watch(self, path: str, into: dict[str, Obj], mine: Any) -> threading.Thread:
        listed = self.pool.api.request("GET", path)
        for obj in listed["items"]:
            if mine(obj["metadata"]["name"]):
                into[obj["metadata"]["name"]] = obj
        version = listed["metadata"]["resourceVersion"]
        where = urlsplit(self.pool.api.server)
        conn = http.client.HTTPSConnection(
            where.hostname or "", where.port, context=self.pool.api.context, timeout=300
        )
        conn.request("GET", f"{path}?watch=1&resourceVersion={version}")
        response = conn.getresponse()
        self._open.append((conn, response))

        def follow() -> None:
            try:
                for line in response:
                    event = json.loads(line)
                    obj, name = event["object"], event["object"]["metadata"]["name"]
                    if not mine(name):
                        continue
                    with self._lock:
                        if event["type"] == "DELETED":
                            into.pop(name, None)
                        else:
                            into[name] = obj
                        self.fewest = min(self.fewest, self._available())
                        self.events += 1
            except (OSError, ValueError, AttributeError):
                pass  # stopped: its socket was shut down

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        return thread

    def _available(self) -> int:
        ready = {
            name
            for name, n in self._nodes.items()
            if not n["metadata"].get("deletionTimestamp")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (n.get("status") or {}).get("conditions") or []
            )
        }
        return sum(
            1
            for m in self._machines.values()
            if not m["metadata"].get("deletionTimestamp")
            and ((m.get("status") or {}).get("nodeRef") or {}).get("name") in ready
        )

    def stop(self) -> None:
        # Shut down, not closed: a read blocked in the other thread returns at once.
        for conn, _ in self._open:
            with suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(10)
        for conn, response in self._open:
            response.close()
            conn.close()


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
        assert watching.events > 0
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
