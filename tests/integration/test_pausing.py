"""rollout pause and resume against the real API server, both API generations: the annotations
set and recorded, resume lifting exactly those, a pause of someone else's left alone, the dry
runs writing nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
PAUSED = f"{CAPI}/paused"
RECORD = "kubectl-machinepool/paused"
POOL = "dev-mp-0"


@pytest.fixture
def namespace(mgmt: ManagementCluster) -> Iterator[str]:
    ns = mgmt.new_namespace()
    objects = SCENARIOS["capd"](mgmt.generation, ns, ns.removeprefix("t-"))
    create_scenario(mgmt, objects)
    yield ns
    delete_nodes(mgmt, objects)


def rollout(mgmt: ManagementCluster, capsys, verb: str, ns: str, *args: str) -> Result:
    return run_cli(
        capsys, "rollout", verb, POOL, "-n", ns, "--kubeconfig", str(mgmt.kubeconfig), *args
    )


def annotations(mgmt: ManagementCluster, ns: str) -> tuple[dict[str, str], dict[str, str]]:
    """The MachinePool's and the DockerMachinePool's annotations."""
    mp = mgmt.api.request(
        "GET", f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/machinepools/{POOL}"
    )
    dmp = mgmt.api.request(
        "GET", f"/apis/{INFRA}/v1beta2/namespaces/{ns}/dockermachinepools/{POOL}"
    )
    return mp["metadata"].get("annotations") or {}, dmp["metadata"].get("annotations") or {}


def test_pause_then_resume(mgmt, capsys, namespace) -> None:
    before = annotations(mgmt, namespace)
    paused = rollout(mgmt, capsys, "pause", namespace, "--yes")
    assert paused.code == 0, paused.out + paused.err
    assert f"Pause MachinePool {namespace}/{POOL} and DockerMachinePool" in paused.out
    mp, dmp = annotations(mgmt, namespace)
    assert mp[PAUSED] == ""
    assert dmp[PAUSED] == ""
    assert mp[RECORD] == f"DockerMachinePool/{POOL},MachinePool/{POOL}"
    again = rollout(mgmt, capsys, "pause", namespace, "--yes")
    assert again.code == 0, again.err
    assert f"Nothing to do: {POOL} already paused." in again.err
    resumed = rollout(mgmt, capsys, "resume", namespace, "--yes")
    assert resumed.code == 0, resumed.out + resumed.err
    assert annotations(mgmt, namespace) == before


def test_resume_leaves_someone_elses_pause(mgmt, capsys, namespace) -> None:
    path = f"/apis/{CAPI}/{mgmt.generation}/namespaces/{namespace}/machinepools/{POOL}"
    mgmt.api.request(
        "PATCH",
        path,
        {"metadata": {"annotations": {PAUSED: "ops"}}},
        "application/merge-patch+json",
    )
    assert rollout(mgmt, capsys, "pause", namespace, "--yes").code == 0
    mp, dmp = annotations(mgmt, namespace)
    assert (mp[PAUSED], mp[RECORD], dmp[PAUSED]) == ("ops", f"DockerMachinePool/{POOL}", "")
    resumed = rollout(mgmt, capsys, "resume", namespace, "--yes")
    assert resumed.code == 0, resumed.err
    assert "paused by someone else, left as it is: MachinePool/dev-mp-0" in " ".join(
        resumed.out.split()
    )
    mp, dmp = annotations(mgmt, namespace)
    assert mp.get(PAUSED) == "ops"
    assert RECORD not in mp
    assert PAUSED not in dmp


@pytest.mark.parametrize("dry_run", ["client", "server"])
def test_dry_runs_write_nothing(mgmt, capsys, namespace, dry_run) -> None:
    before = annotations(mgmt, namespace)
    result = rollout(mgmt, capsys, "pause", namespace, f"--dry-run={dry_run}")
    assert result.code == 0, result.err
    assert result.out.count("annotated (") == 2, result.out
    assert annotations(mgmt, namespace) == before
