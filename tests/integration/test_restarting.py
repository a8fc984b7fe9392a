"""rollout restart against the real API server, both API generations, with no controllers (the
live tests have them): the start recorded, the first old instance replaced through delete-machine's
replace path, then (--no-wait) a stop while it is unavailable; run again, the same restart goes
on; refusals and the client dry run write nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
CAPI = "cluster.x-k8s.io"
STARTED = "kubectl-machinepool/restart-started"
POOL = "dev-mp-0"


@pytest.fixture
def namespace(mgmt: ManagementCluster) -> Iterator[str]:
    ns = mgmt.new_namespace()
    objects = SCENARIOS["capd"](mgmt.generation, ns, ns.removeprefix("t-"))
    create_scenario(mgmt, objects)
    _after_the_second_they_were_made()
    yield ns
    delete_nodes(mgmt, objects)


def _after_the_second_they_were_made() -> None:
    """Instances made in the second a restart begins are new (the server counts whole seconds):
    the scenario's are made old by beginning in a later second."""
    made = datetime.now(UTC).replace(microsecond=0)
    while datetime.now(UTC).replace(microsecond=0) <= made:
        time.sleep(0.05)


def restart(mgmt: ManagementCluster, capsys, ns: str, *args: str, pool: str = POOL) -> Result:
    kubeconfig = str(mgmt.kubeconfig)
    return run_cli(capsys, "rollout", "restart", pool, "-n", ns, "--kubeconfig", kubeconfig, *args)


def _get(mgmt: ManagementCluster, ns: str, plural: str, name: str) -> Obj | None:
    answer = mgmt.api.request("GET", f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/{plural}")
    return next((o for o in answer["items"] if o["metadata"]["name"] == name), None)


def oldest_first(mgmt: ManagementCluster, ns: str) -> list[str]:
    """The pool's Machines in the order a restart takes them: oldest first, names breaking
    ties. Which is oldest depends on the seconds the server stamped them in: read, not assumed."""
    answer = mgmt.api.request("GET", f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/machines")
    mine = [m["metadata"] for m in answer["items"] if m["metadata"]["name"].startswith(POOL)]
    return [m["name"] for m in sorted(mine, key=lambda m: (m["creationTimestamp"], m["name"]))]


def started(mgmt: ManagementCluster, ns: str) -> str | None:
    mp = _get(mgmt, ns, "machinepools", POOL) or {}
    return (mp["metadata"].get("annotations") or {}).get(STARTED)


def going(mgmt: ManagementCluster, ns: str, name: str) -> bool:
    """Deleted, or held by its finalizers."""
    machine = _get(mgmt, ns, "machines", name)
    return machine is None or "deletionTimestamp" in machine["metadata"]


def test_a_restart_replaces_the_first_then_goes_on_when_run_again(mgmt, capsys, namespace) -> None:
    oldest, second = oldest_first(mgmt, namespace)
    first = restart(mgmt, capsys, namespace, "--yes", "--no-wait")
    assert first.code == 0, first.out + first.err
    assert f"Restart MachinePool {namespace}/{POOL}" in first.out
    assert "beginning now" in first.out
    assert f"1. machine {oldest}" in first.out
    assert f"2. machine {second}" in first.out
    recorded = started(mgmt, namespace)
    assert recorded is not None
    assert f"machine.cluster.x-k8s.io/{oldest} deleted" in first.out
    assert going(mgmt, namespace, oldest)
    assert not going(mgmt, namespace, second)
    assert "run the same command again to go on" in first.err

    again = restart(mgmt, capsys, namespace, "--yes", "--no-wait")
    assert again.code == 0, again.out + again.err
    assert f"going on with the restart begun at {recorded}" in again.out
    assert f"1. machine {second}" in again.out
    assert oldest not in again.out.split("Writes")[0]
    assert started(mgmt, namespace) == recorded
    assert not going(mgmt, namespace, second)  # one is unavailable already: --max-unavailable 1


def test_the_client_dry_run_and_a_refusal_write_nothing(mgmt, capsys, namespace) -> None:
    oldest, _ = oldest_first(mgmt, namespace)
    dry = restart(mgmt, capsys, namespace, "--dry-run=client")
    assert dry.code == 0, dry.err
    assert f"machine.cluster.x-k8s.io/{oldest} replaced (dry run)" in dry.out
    assert started(mgmt, namespace) is None
    assert not going(mgmt, namespace, oldest)
    path = f"/apis/{CAPI}/{mgmt.generation}/namespaces/{namespace}/machinepools/{POOL}"
    mgmt.api.request(
        "PATCH",
        path,
        {"metadata": {"annotations": {f"{CAPI}/paused": ""}}},
        "application/merge-patch+json",
    )
    refused = restart(mgmt, capsys, namespace, "--yes")
    assert refused.code == 3, refused.out + refused.err
    assert "the pool is paused" in refused.err
    assert "nothing was written" in refused.err
    assert started(mgmt, namespace) is None
    assert not going(mgmt, namespace, oldest)


def test_a_pool_without_single_instance_replacement_is_refused_with_what_rolls_it(
    mgmt, capsys
) -> None:
    ns = mgmt.new_namespace()
    objects = SCENARIOS["aws-asg"](mgmt.generation, ns, ns.removeprefix("t-"))
    create_scenario(mgmt, objects)
    try:
        refused = restart(mgmt, capsys, ns, "--yes", pool="asg-workers")
        assert refused.code == 3, refused.out + refused.err
        assert "single instances of this pool cannot be replaced" in refused.err
        assert "what rolls it: a new launch template version" in refused.out
    finally:
        delete_nodes(mgmt, objects)
