"""upgrade against the real Cluster API controllers and support.provider: the plan, the writes
through the write engine, and the rollout followed to its end or to stuck."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import GALLERY, INFRA_GROUP, LivePool, live_pool
from support.provider import AWS, AZURE, Personality

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

BOTH = pytest.mark.parametrize("personality", [AZURE, AWS], ids=lambda p: p.name)
NEW = "v1.37.0"


def _upgrade(pool: LivePool, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return pool.run_plugin(tmp_path, "upgrade", "--version", NEW, "--yes", *extra)


@BOTH
def test_an_upgrade_is_planned_written_and_followed_to_the_end(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        code, out, err = _upgrade(pool, tmp_path, "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert f"Upgrade MachinePool {pool.namespace}/{pool.name}" in out
        assert f"machinepool.cluster.x-k8s.io/{pool.name} patched" in out
        assert out.splitlines()[-1] == (
            f'MachinePool "{pool.namespace}/{pool.name}" successfully rolled out'
        )
        assert pool.machine_pool()["spec"]["template"]["spec"]["version"] == NEW
        kubelets = {n["status"]["nodeInfo"]["kubeletVersion"] for n in pool.nodes()}
        assert kubelets == {NEW}


@BOTH
def test_a_client_dry_run_shows_the_plan_and_writes_nothing(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=1) as pool:
        pool.wait_running(1)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        before = _spec_and_annotations(pool.machine_pool())
        code, out, err = _upgrade(pool, tmp_path, "--dry-run=client")
        assert code == 0, (out, err)
        assert f"machinepool.cluster.x-k8s.io/{pool.name} patched (dry run)" in out
        # Not resourceVersion: the controllers keep writing status meanwhile.
        assert _spec_and_annotations(pool.machine_pool()) == before


def _spec_and_annotations(obj: dict[str, Any]) -> tuple[Any, ...]:
    """What upgrade would write; the MachinePool controller also writes spec.providerIDList."""
    return obj["spec"]["template"], obj["metadata"].get("annotations")


def test_a_server_dry_run_has_every_write_judged_and_none_kept(
    live: LiveCluster, tmp_path: Path
) -> None:
    with live_pool(live, AZURE, replicas=1, infra_spec=GALLERY) as pool:
        pool.wait_running(1)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        infra = pool.path("azuremachinepools", pool.name, INFRA_GROUP)
        before = (pool.machine_pool(), pool.api.request("GET", infra))
        code, out, err = _upgrade(pool, tmp_path, "--dry-run=server")
        assert code == 0, (out, err)
        # Four writes sent with dryRun=All: pause, version, image, unpause.
        assert out.count("(server dry run)") == 4, out
        after = (pool.machine_pool(), pool.api.request("GET", infra))

        # The controllers write meanwhile: what upgrade would write is as it was.
        def written(mp: dict[str, Any], azure: dict[str, Any]) -> tuple[Any, ...]:
            version = mp["spec"]["template"]["spec"]["version"]
            return version, azure["spec"]["template"], azure["metadata"].get("annotations")

        assert written(*after) == written(*before) == ("v1.36.3", GALLERY["template"], None)


@BOTH
def test_an_upgrade_whose_new_instance_never_joins_is_stuck(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(
        live, personality, replicas=2, setup=lambda p: p.never_join.add("pool-2")
    ) as pool:
        pool.wait_running(2)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        code, out, err = _upgrade(pool, tmp_path, "--stuck-after", "10s")
        assert code == 1, (out, err)
        assert f'MachinePool "{pool.namespace}/{pool.name}" rollout is stuck' in err


def test_the_version_and_the_image_change_as_one_model(live: LiveCluster, tmp_path: Path) -> None:
    with live_pool(live, AZURE, replicas=2, infra_spec=GALLERY) as pool:
        pool.wait_running(2)
        pool.control_plane_to(NEW)
        pool.at_rest(tmp_path)
        code, out, err = _upgrade(pool, tmp_path, "--timeout", "200s")
        assert code == 0, (out, err, pool.provider.errors[-3:])
        assert "spec.template.image.computeGallery.version: 1.36.3 -> 1.37.0" in out
        infra = pool.api.request("GET", pool.path("azuremachinepools", pool.name, INFRA_GROUP))
        assert "cluster.x-k8s.io/paused" not in infra["metadata"].get("annotations", {})
        # One model change: the provider never saw the new version with the old image.
        assert pool.provider.pools["pool"].models == [("v1.36.3", "1.36.3"), (NEW, "1.37.0")]


def test_without_upgrade_the_same_change_is_two_models(live: LiveCluster, tmp_path: Path) -> None:
    """What cluster-api#7248 is about, shown on the same provider: the version, then the image."""
    with live_pool(live, AZURE, replicas=2, infra_spec=GALLERY) as pool:
        pool.wait_running(2)
        pool.patch(
            pool.path("machinepools", pool.name), {"spec": {"template": {"spec": {"version": NEW}}}}
        )
        pool.wait("the new version rolled", lambda: len(pool.provider.pools["pool"].models) == 2)
        image = {"spec": {"template": {"image": {"computeGallery": {"version": "1.37.0"}}}}}
        pool.patch(pool.path("azuremachinepools", pool.name, INFRA_GROUP), image)
        pool.wait("the new image rolled", lambda: len(pool.provider.pools["pool"].models) == 3)
        assert pool.provider.pools["pool"].models[1] == (NEW, "1.36.3")  # the mismatched pair


@BOTH
def test_a_topology_owned_pool_is_refused_and_nothing_is_written(
    live: LiveCluster, personality: Personality, tmp_path: Path
) -> None:
    with live_pool(live, personality, replicas=1) as pool:
        pool.wait_running(1)
        pool.patch(
            pool.path("machinepools", pool.name),
            {"metadata": {"labels": {"topology.cluster.x-k8s.io/owned": ""}}},
        )
        pool.control_plane_to(NEW)
        before = pool.machine_pool()["spec"]["template"]["spec"]["version"]
        code, out, err = _upgrade(pool, tmp_path)
        assert code == 3, (out, err)
        assert "refused: the topology controller owns this pool" in err
        assert "nothing was written" in err
        assert pool.machine_pool()["spec"]["template"]["spec"]["version"] == before
