"""rollout history and rollout undo against the real Cluster API controllers and
support.provider: an upgrade undone puts the version and the image back with the provider
rolling once; a restart undone puts nothing back; a scale undone puts the size back, but not
over a size changed from outside since, which is refused with nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import GALLERY, INFRA_GROUP, LivePool, live_pool
from support.provider import AZURE

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]
# The generation makes no difference to a size or a restart: one is enough for them.
V1BETA2 = pytest.mark.parametrize("live", ["v1beta2"], indirect=True)

NEW = "v1.37.0"


def _causes(pool: LivePool, home: Path) -> list[str]:
    code, out, err = pool.run_plugin(home, "rollout history", "-o", "json")
    assert code == 0, (out, err)
    return [r["cause"] for r in json.loads(out)["revisions"]]


def _written(pool: LivePool) -> tuple[Any, ...]:
    """What undo writes on the MachinePool: its spec and annotations (the controllers write
    status, and resourceVersion with it, meanwhile)."""
    mp = pool.machine_pool()
    return mp["spec"]["replicas"], mp["spec"]["template"], mp["metadata"].get("annotations")


def test_an_upgrade_undone_rolls_once_back_to_the_start(live: LiveCluster, tmp_path: Path) -> None:
    with live_pool(live, AZURE, replicas=1, infra_spec=GALLERY) as pool:
        pool.wait_running(1)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        code, out, err = pool.run_plugin(tmp_path, "upgrade", "--version", NEW, "--yes")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        code, out, err = pool.run_plugin(tmp_path, "rollout undo", "--yes", "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert "spec.template.image.computeGallery.version: 1.37.0 -> 1.36.3" in out
        assert out.splitlines()[-1] == (
            f'MachinePool "{pool.namespace}/{pool.name}" successfully rolled out'
        )
        assert pool.machine_pool()["spec"]["template"]["spec"]["version"] == "v1.36.3"
        infra = pool.api.request("GET", pool.path("azuremachinepools", pool.name, INFRA_GROUP))
        assert infra["spec"]["template"] == GALLERY["template"]
        assert "cluster.x-k8s.io/paused" not in infra["metadata"].get("annotations", {})
        # One model change each way: the provider never saw a mismatched pair.
        assert pool.provider.pools["pool"].models == [
            ("v1.36.3", "1.36.3"),
            (NEW, "1.37.0"),
            ("v1.36.3", "1.36.3"),
        ]
        assert {i for i in pool.instances().values()} == {"v1.36.3"}
        assert _causes(pool, tmp_path) == [f"upgrade --version {NEW}", "rollout undo"]


@V1BETA2
def test_a_restart_puts_nothing_back_a_scale_its_size_unless_changed_since(
    live: LiveCluster, tmp_path: Path
) -> None:
    with live_pool(live, AZURE, replicas=1) as pool:
        pool.wait_running(1)
        code, out, err = pool.run_plugin(tmp_path, "rollout restart", "--yes", "--no-wait")
        assert code == 0, (out, err)
        before = _written(pool)
        code, out, err = pool.run_plugin(tmp_path, "rollout undo", "--yes")
        assert (code, err.splitlines()[-1]) == (
            0,
            f"Nothing to do: no field of {pool.name} to put back.",
        )
        assert "revision 1 (rollout restart) replaced instances, which cannot be brought back" in (
            " ".join(out.split())
        )
        assert _written(pool) == before

        code, out, err = pool.run_plugin(tmp_path, "scale", "--replicas", "2", "--yes")
        assert code == 0, err
        path = pool.path("machinepools", pool.name)
        # At rest first, so that the undo's own rollout is what --no-wait leaves behind.
        pool.wait_running(2)
        # The provider held while the outside change comes and goes: a scale-out and back in
        # would add nothing here but the v1.14 scale-in race that leaves a Machine for a
        # vanished infra machine (MP1601), which would keep the pool from ever being at rest.
        with pool.provider.paused():
            pool.patch(path, {"spec": {"replicas": 3}})  # from outside: kubectl edit, an autoscaler
            before = _written(pool)
            code, out, err = pool.run_plugin(tmp_path, "rollout undo", "--yes")
            assert code == 3, (out, err)
            assert (
                f'error: refused: MachinePool {pool.name} spec.replicas is "3" now, not "2" as '
                "revision 2 left it: changed from outside since, and undo would write over it; "
                "nothing was written"
            ) in err
            assert _written(pool) == before
            pool.patch(path, {"spec": {"replicas": 2}})
        code, out, err = pool.run_plugin(tmp_path, "rollout undo", "--yes", "--no-wait")
        assert code == 0, (out, err)
        assert pool.machine_pool()["spec"]["replicas"] == 1
        assert _causes(pool, tmp_path) == ["rollout restart", "scale --replicas 2", "rollout undo"]
