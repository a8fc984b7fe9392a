"""rollout restart against the real API server, both API generations, with no controllers (the
live tests have them): the start recorded, the first old instance replaced through delete-machine's
replace path, then (--no-wait) a stop while it is unavailable; run again, the same restart goes
on; refusals and the client dry run write nothing. The start is the server's time whatever the
tool's clock says (injected minutes ahead and behind, the test playing the Machine controller);
a recorded start later than it is refused, and a record that names no time is said."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

from kubectl_machinepool.cli.environment import Environment

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


@pytest.fixture
def capd(v1beta2: ManagementCluster) -> Iterator[tuple[str, list[Obj]]]:
    """The scenario in one generation, with its objects: the test makes replacements of them."""
    ns = v1beta2.new_namespace()
    objects = SCENARIOS["capd"](v1beta2.generation, ns, ns.removeprefix("t-"))
    create_scenario(v1beta2, objects)
    _after_the_second_they_were_made()
    yield ns, objects
    delete_nodes(v1beta2, objects)


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


def _annotate(mgmt: ManagementCluster, ns: str, value: str) -> Obj:
    path = f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/machinepools/{POOL}"
    return mgmt.api.request(  # type: ignore[no-any-return]
        "PATCH",
        path,
        {"metadata": {"annotations": {STARTED: value}}},
        "application/merge-patch+json",
    )


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _skewed(monkeypatch: pytest.MonkeyPatch, by: timedelta) -> None:
    """The tool's clock `by` off the server's (this machine's): injected where each run builds
    its environment, as a client machine's clock would be off."""
    built = Environment.from_process

    def skewed(_cls: type[Environment]) -> Environment:
        return built()._replace(clock=lambda: datetime.now(UTC).replace(microsecond=0) + by)

    monkeypatch.setattr(Environment, "from_process", classmethod(skewed))


def _replaced(mgmt: ManagementCluster, ns: str, objects: list[Obj], name: str) -> datetime:
    """What the Machine controller and the provider do once a Machine is deleted, shortened:
    the Machine goes (its finalizer removed) and one of the same name comes, on the same Node.
    Returns when the server made it."""
    path = f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/machines/{name}"
    mgmt.api.request(
        "PATCH", path, {"metadata": {"finalizers": None}}, "application/merge-patch+json"
    )
    assert _get(mgmt, ns, "machines", name) is None
    pool = _get(mgmt, ns, "machinepools", POOL) or {}
    [fixture] = [o for o in objects if o["kind"] == "Machine" and o["metadata"]["name"] == name]
    fixture_pool_uid = next(o["metadata"]["uid"] for o in objects if o["kind"] == "MachinePool")
    machine = json.loads(json.dumps(fixture).replace(fixture_pool_uid, pool["metadata"]["uid"]))
    for key in ("uid", "creationTimestamp"):
        machine["metadata"].pop(key)
    mgmt.api.create(machine)
    made = _get(mgmt, ns, "machines", name) or {}
    return _time(made["metadata"]["creationTimestamp"])


@pytest.mark.parametrize(
    "skew", [timedelta(minutes=-10), timedelta(minutes=10)], ids=["behind", "ahead"]
)
def test_the_start_is_the_servers_time_with_the_tools_clock_ahead_or_behind(
    v1beta2, capsys, monkeypatch, capd, skew: timedelta
) -> None:
    """Behind, the client's time made every instance young enough to keep ("Nothing to do");
    ahead, every replacement older than the start, so the restart and rollout status never
    ended. Both are judged against the time the server gave, here, each step of the way."""
    ns, objects = capd
    _skewed(monkeypatch, skew)
    oldest, second = oldest_first(v1beta2, ns)
    first = restart(v1beta2, capsys, ns, "--yes", "--no-wait")
    assert first.code == 0, first.out + first.err
    assert "beginning now" in first.out
    assert f"1. machine {oldest}" in first.out
    assert f"2. machine {second}" in first.out
    recorded = started(v1beta2, ns)
    assert recorded is not None
    made = [_time(m["metadata"]["creationTimestamp"]) for m in _machines(v1beta2, ns)]
    assert max(made) < _time(recorded)
    assert going(v1beta2, ns, oldest)
    assert _replaced(v1beta2, ns, objects, oldest) >= _time(recorded)

    again = restart(v1beta2, capsys, ns, "--yes", "--no-wait")
    assert again.code == 0, again.out + again.err
    assert f"going on with the restart begun at {recorded}" in again.out
    assert f"1. machine {second}" in again.out
    assert oldest not in again.out.split("Writes")[0]  # the replacement is new
    assert going(v1beta2, ns, second)
    assert not going(v1beta2, ns, oldest)
    _replaced(v1beta2, ns, objects, second)

    kubeconfig = str(v1beta2.kubeconfig)
    status = run_cli(
        capsys, "rollout", "status", POOL, "-n", ns, "--kubeconfig", kubeconfig, "-w=false"
    )
    assert status.code == 0, status.out + status.err
    assert "successfully rolled out" in status.out, status.out
    assert started(v1beta2, ns) == recorded  # done with the record still there: all new

    last = restart(v1beta2, capsys, ns, "--yes")
    assert last.code == 0, last.out + last.err
    assert f"machinepool.cluster.x-k8s.io/{POOL} restarted" in last.out
    assert started(v1beta2, ns) is None


def _machines(mgmt: ManagementCluster, ns: str) -> list[Obj]:
    answer = mgmt.api.request("GET", f"/apis/{CAPI}/{mgmt.generation}/namespaces/{ns}/machines")
    return [m for m in answer["items"] if m["metadata"]["name"].startswith(POOL)]


def test_a_recorded_start_later_than_the_servers_time_is_refused(v1beta2, capsys, capd) -> None:
    ns, _ = capd
    before = _annotate(v1beta2, ns, "2099-01-01T00:00:00Z")["metadata"]["resourceVersion"]
    refused = restart(v1beta2, capsys, ns, "--yes")
    assert refused.code == 3, refused.out + refused.err
    [error] = [line for line in refused.err.splitlines() if line.startswith("error:")]
    assert error.startswith(
        f'error: refused: the {STARTED} annotation is "2099-01-01T00:00:00Z", later than the API '
        "server's time 20"
    ), error
    assert error.endswith("nothing was written"), error
    pool = _get(v1beta2, ns, "machinepools", POOL) or {}
    assert pool["metadata"]["resourceVersion"] == before
    assert not any(going(v1beta2, ns, name) for name in oldest_first(v1beta2, ns))


def test_a_record_that_names_no_time_is_said_in_the_plan_and_written_over(
    v1beta2, capsys, capd
) -> None:
    ns, _ = capd
    _annotate(v1beta2, ns, "last tuesday\x1b[2J")
    oldest, _ = oldest_first(v1beta2, ns)
    result = restart(v1beta2, capsys, ns, "--yes", "--no-wait")
    assert result.code == 0, result.out + result.err
    plan = " ".join(result.out.split())  # the check's line wrapped
    assert f'the {STARTED} annotation is "last tuesday\\x1b[2J", which is no RFC 3339 time' in plan
    assert "\x1b[2J" not in result.out + result.err
    recorded = started(v1beta2, ns)
    assert recorded is not None
    assert _time(recorded) > max(
        _time(m["metadata"]["creationTimestamp"]) for m in _machines(v1beta2, ns)
    )
    assert going(v1beta2, ns, oldest)
