"""The whole-pool writes planned from a dump that lacks what their run reads again (its Nodes):
refused as live, with the dump's own reason; and every permission a dump cannot ask said to be
unasked, the run's later writes' too (a restart's record removed at its end)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.objects import NOW
from support.rollouts import dump, find, objects_of
from support.run import run_cli
from support.snapshots import NAMESPACE

from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.restartrecord import STARTED

WITHOUT = "the input holds no Node objects, so Nodes are not shown"
POOL = "dev-mp-0"


def without_nodes(tmp_path: Path) -> str:
    objects = [o for o in objects_of("capd", "v1beta2") if o["kind"] != "Node"]
    return dump(objects, tmp_path / "dump.yaml")


def planned(capsys: pytest.CaptureFixture[str], path: str, *args: str) -> tuple[int, str, str]:
    result = run_cli(
        capsys, *args, "-n", NAMESPACE, "-f", path, "--dry-run=client", "--now", format_time(NOW)
    )
    return result.code, " ".join(result.out.split()), result.err


def test_restart_from_a_dump_without_nodes_is_refused_as_live(capsys, tmp_path: Path) -> None:
    code, out, err = planned(capsys, without_nodes(tmp_path), "rollout", "restart", POOL)
    assert code == 3
    assert err == (
        f"error: refused: the Nodes of Cluster {NAMESPACE}/dev could not be read ({WITHOUT}): "
        "before each replacement the restart judges from them which instances are unavailable; "
        "nothing was written\n"
    )
    assert "Ready Node" not in out


def test_upgrade_from_a_dump_without_nodes_says_why_and_what_goes_ahead(
    capsys, tmp_path: Path
) -> None:
    path = without_nodes(tmp_path)
    upgrade = ("upgrade", POOL, "--version", "v1.34.1")
    code, _, err = planned(capsys, path, *upgrade)
    assert code == 3
    assert "(--no-wait writes without following it) (and 1 more above)" in err
    code, out, err = planned(capsys, path, *upgrade, "--no-wait")
    assert code == 3
    assert err.startswith(
        "error: refused: whether the pool's current rollout is done is unknown: the Nodes of "
        f"Cluster {NAMESPACE}/dev could not be read ({WITHOUT})"
    )
    assert "progressing" not in out
    code, out, _ = planned(capsys, path, *upgrade, "--no-wait", "--force")
    assert code == 0
    assert "readiness is known (--force: going ahead)" in out


def test_a_restart_gone_on_with_from_a_dump_does_not_ask_for_its_record_removal(
    capsys, tmp_path: Path
) -> None:
    objects = objects_of("capd", "v1beta2")
    find(objects, "MachinePool")["metadata"]["annotations"] = {STARTED: format_time(NOW)}
    code, out, _ = planned(capsys, dump(objects, tmp_path / "d.yaml"), "rollout", "restart", POOL)
    assert code == 0
    assert (
        "warning not asked, planned from a dump: whether you may patch "
        f"machinepools.cluster.x-k8s.io in namespace {NAMESPACE}"
    ) in out
    assert "could not check" not in out
