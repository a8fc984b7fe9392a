"""scale on the real API server (issue 49, items 6 and 9): cluster-autoscaler bounds it cannot
use are refused with nothing written unless --force; a 429 with Retry-After to the /scale write
is sent again when the wait fits in the request timeout, and reported when it does not; a size
spec.replicas cannot hold never leaves the client.

One aws-asg pool (bounds 1..10) for the module, reached through the fault proxy; each test sets
the annotations it needs and compares the pool before and after."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from support.autoscalerbounds import MAX_SIZE, MIN_SIZE, unusable
from support.controlplane import ControlPlane
from support.faultproxy import Fault, FaultProxy, Injection, Seen
from support.management import ManagementCluster, create_scenario, delete_nodes, management_cluster
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

POOL = "asg-workers"
MERGE = "application/merge-patch+json"
REFUSED = "cluster-autoscaler cannot use this pool's node-group bounds: "


@dataclass(frozen=True)
class Pool:
    cluster: ManagementCluster
    proxy: FaultProxy
    kubeconfig: str
    namespace: str

    @property
    def path(self) -> str:
        generation = self.cluster.generation
        return (
            f"/apis/cluster.x-k8s.io/{generation}/namespaces/{self.namespace}/machinepools/{POOL}"
        )

    def read(self) -> dict[str, Any]:
        return self.cluster.api.request("GET", self.path)  # type: ignore[no-any-return]

    def bound(self, low: str | None, high: str | None) -> dict[str, Any]:
        """Both annotations set as given (None: removed); the pool as it is then."""
        annotations = {MIN_SIZE: low, MAX_SIZE: high}
        body = {"metadata": {"annotations": annotations}}
        return self.cluster.api.request("PATCH", self.path, body, MERGE)  # type: ignore[no-any-return]

    def scale(self, capsys: pytest.CaptureFixture[str], *args: str) -> Result:
        return run_cli(
            capsys, "scale", POOL, "-n", self.namespace, "--kubeconfig", self.kubeconfig,
            "--yes", *args,
        )  # fmt: skip

    def writes(self) -> list[Seen]:
        """What the proxy saw written to the pool (an access review is a POST, not a write)."""
        return [s for s in self.proxy.log if s.is_write and s.path.startswith(self.path)]

    def is_scale(self, seen: Seen) -> bool:
        return seen.method == "PUT" and seen.path == f"{self.path}/scale"


@pytest.fixture(scope="module")
def pool(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    cluster = management_cluster(control_plane, "v1beta2")
    namespace = cluster.new_namespace()
    objects = SCENARIOS["aws-asg"]("v1beta2", namespace, namespace.removeprefix("t-"), healthy=True)
    create_scenario(cluster, objects)
    workdir = tmp_path_factory.mktemp("scale-bounds")
    with FaultProxy.for_apiserver(cluster.server, cluster.server.admin, workdir) as proxy:
        kubeconfig = proxy.write_kubeconfig(workdir / "kubeconfig", cluster.server.admin)
        yield Pool(cluster, proxy, str(kubeconfig), namespace)
        assert not proxy.errors
    delete_nodes(cluster, objects)


def said(result: Result) -> str:
    return " ".join((result.out + result.err).split())


@unusable()
def test_bounds_the_autoscaler_cannot_use_refuse_with_nothing_written(
    pool: Pool, capsys, low: str, high: str, named: str
) -> None:
    before = pool.bound(low, high)
    pool.proxy.arm()
    result = pool.scale(capsys, "--replicas", str(before["spec"]["replicas"] + 1))
    assert result.code == 3, result.out + result.err
    assert f"error: refused: {REFUSED}" in result.err
    assert named in said(result)
    assert "fix the annotations, or --force to scale anyway; nothing was written" in said(result)
    assert "\x1b" not in result.out + result.err
    assert "below its minimum" not in said(result)
    assert pool.writes() == []
    assert pool.read()["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_force_scales_past_unusable_bounds_and_says_so(pool: Pool, capsys) -> None:
    before = pool.bound("1.0", "10")
    to = before["spec"]["replicas"] + 1
    result = pool.scale(capsys, "--replicas", str(to), "--force")
    assert result.code == 0, result.out + result.err
    assert f'{REFUSED}{MIN_SIZE} is "1.0", not a whole number' in said(result)
    assert "--force: going ahead without them" in said(result)
    assert result.out.splitlines()[-1] == f"machinepool.cluster.x-k8s.io/{POOL} scaled"
    assert pool.read()["spec"]["replicas"] == to


def busy_once(pool: Pool, capsys, retry_after: int, timeout: str) -> tuple[Result, int, str]:
    """Scale by one within the bounds, the first /scale write answered 429 with this
    Retry-After: the result, the size asked for and the resourceVersion before."""
    before = pool.bound("1", "10")
    to = before["spec"]["replicas"] % 10 + 1
    pool.proxy.retry_after = retry_after
    pool.proxy.arm(Injection(Fault.TOO_MANY_REQUESTS, match=pool.is_scale))
    result = pool.scale(capsys, "--replicas", str(to), "--request-timeout", timeout)
    return result, to, before["metadata"]["resourceVersion"]


def test_a_429_to_the_scale_write_is_sent_again_within_the_timeout(pool: Pool, capsys) -> None:
    result, to, _ = busy_once(pool, capsys, 1, "30s")
    assert result.code == 0, result.out + result.err
    assert result.out.splitlines()[-1] == f"machinepool.cluster.x-k8s.io/{POOL} scaled"
    # The revision is recorded first (a Scale carries no annotation), then the /scale write.
    assert [(s.fault, s.forwarded, s.upstream_status) for s in pool.writes()] == [
        (None, True, 200),
        (Fault.TOO_MANY_REQUESTS, False, None),
        (None, True, 200),
    ]
    assert pool.read()["spec"]["replicas"] == to


def test_a_429_whose_wait_is_past_the_timeout_is_reported(pool: Pool, capsys) -> None:
    before = pool.bound("1", "10")  # as busy_once sets them: a test before may have left others
    result, _, _ = busy_once(pool, capsys, 5, "2s")
    assert result.code == 1, result.out + result.err
    assert (
        "failed: too many requests, please try again later (fault injected by the test proxy "
        f"into PUT {pool.path}/scale) (HTTP 429); asked to try again in 5s, past the request "
        f"timeout (2s). Taken back: MachinePool {pool.namespace}/{POOL}: set "
        "kubectl-machinepool/revisions back; the cluster is as before"
    ) in said(result)
    # The revision recorded before the /scale write, and taken back after it.
    assert [(s.fault, s.forwarded) for s in pool.writes()] == [
        (None, True),
        (Fault.TOO_MANY_REQUESTS, False),
        (None, True),
    ]
    after = pool.read()
    assert after["spec"] == before["spec"]
    assert after["metadata"].get("annotations") == before["metadata"].get("annotations")


@pytest.mark.parametrize("replicas", ["2147483648", "99999999999999999999", "-1"])
def test_a_size_spec_replicas_cannot_hold_never_leaves_the_client(
    pool: Pool, capsys, replicas: str
) -> None:
    before = pool.read()
    pool.proxy.arm()
    result = pool.scale(capsys, "--replicas", replicas)
    assert result.code == 2, result.out + result.err
    assert result.err.splitlines() == [
        f"error: invalid value for '--replicas': {replicas} is not in the range 0<=x<=2147483647",
        "hint: see 'kubectl machinepool scale --help'",
    ]
    assert pool.proxy.log == []
    assert pool.read()["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
