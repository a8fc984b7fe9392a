"""Several pools scaled in one batch (app/planning.py, kube/writing.py) over the fake server: each
/scale write leaves its pool at the new size, which the next pool's write relies on.

The fault matrix's two-pool scale (tests/integration/test_fault_matrix_pools.py) found a clean
run failing: the second pool's write saw the first pool "changed (spec.replicas) since" the
batch's own /scale write, and stopped with exit 5, the first pool left scaled.
"""

from __future__ import annotations

import pytest
from support.fakeapi import MANAGEMENT, WORKLOAD, FakeAPI, FakeServer, kubeconfig_secret
from support.objects import NOW
from support.scenarios import VARIANTS

from kubectl_machinepool.app import planning, scaling
from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.base.errors import ClusterAccessError, IncompleteError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.plans.scale import ScaleRequest

NAMESPACE = "capi-dev"
POOLS = ("dev-mp-0", "dev-mp-1")


def _served(api: FakeAPI) -> FakeServer:
    objects = VARIANTS["capd-two-pools"]("v1beta2", NAMESPACE)
    secret = kubeconfig_secret(NAMESPACE, "dev", WORKLOAD, "token")
    api.serve(FakeServer(WORKLOAD, [o for o in objects if o["kind"] == "Node"]))
    management = [o for o in objects if o["kind"] != "Node"] + [secret]
    return api.serve(FakeServer(MANAGEMENT, management, capi="v1beta2"))


def _scale(kube: Kube, lines: list[str]) -> None:
    request = ScaleRequest(3, None, False)
    ground = planning.Live(kube, NOW)
    plans = scaling.plans_for(ground, scaling.Scale(POOLS, NAMESPACE, request), warn=pytest.fail)
    ui = Callbacks(lines.append, lines.append, pytest.fail, confirm=lambda: True)
    planning.carry_out(kube, plans, DryRun.NONE, ui)


def _replicas(server: FakeServer) -> list[object]:
    return [(server.get("MachinePool", NAMESPACE, p) or {})["spec"]["replicas"] for p in POOLS]


def test_each_pool_of_a_batch_is_scaled(fake_api: FakeAPI) -> None:
    server = _served(fake_api)
    lines: list[str] = []
    _scale(fake_api.kube(), lines)
    assert _replicas(server) == [3, 3]
    assert [line for line in lines if line.endswith("scaled")] == [
        f"machinepool.cluster.x-k8s.io/{pool} scaled" for pool in POOLS
    ]


def test_a_refused_second_pool_leaves_the_first_scaled_and_says_so(fake_api: FakeAPI) -> None:
    """A size is not taken back (the provider may be acting on it already): exit 5, named."""
    server = _served(fake_api)
    server.fail(
        lambda asked: asked.method == "PUT" and asked.path.endswith(f"/{POOLS[1]}/scale"),
        ClusterAccessError("forbidden", status=403),
    )
    with pytest.raises(IncompleteError) as failed:
        _scale(fake_api.kube(), [])
    assert _replicas(server) == [3, 2]
    # Each pool's revision is recorded just before its /scale write: the second's is taken
    # back with its failure, the first stays with its size.
    record = "record revision 1 (kubectl-machinepool/revisions) on MachinePool"
    assert failed.value.message == (
        f"step 4 of 4 (scale MachinePool {NAMESPACE}/{POOLS[1]} from 2 to 3 replicas (/scale)) "
        f"failed: forbidden. Taken back: MachinePool {NAMESPACE}/{POOLS[1]}: set "
        f"kubectl-machinepool/revisions back. Left changed: {record} {NAMESPACE}/{POOLS[0]}: "
        f"done; scale MachinePool {NAMESPACE}/{POOLS[0]} from 2 to 3 replicas (/scale): done"
    )
