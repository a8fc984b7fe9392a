"""fix with the shipped roles on the real API server (issue 46): it takes what its steps'
commands take. On the seeded CAPD pool, paused by `rollout pause`, its one step is `rollout
resume`: a reader, or a reader with the deleter role, is refused by resume's own plan (exit 3,
nothing written, the step named); with the operator role it is sent as a server dry run (nothing
kept), then the pool is resumed. Of two pools, a user who may patch one infra pool only has the
first resumed and the second refused: the run ends there, saying which step was done."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.controlplane import ControlPlane
from support.management import create_scenario, delete_nodes, management_cluster
from support.roles import (
    DELETER,
    INFRA,
    OPERATOR,
    POOL,
    READER,
    Obj,
    Seeded,
    apply,
    bind,
    cli,
    install_roles,
    seed,
    unseed,
)
from support.scenarios import VARIANTS

CAPI = "cluster.x-k8s.io"
PAUSED = f"{CAPI}/paused"
RECORD = "kubectl-machinepool/paused"


@pytest.fixture(scope="module")
def seeded(control_plane: ControlPlane) -> Iterator[tuple[Seeded, dict[str, Obj]]]:
    mgmt = management_cluster(control_plane, "v1beta2")
    roles = install_roles(mgmt)
    found = seed(mgmt, roles)
    yield found, roles
    unseed(found)


def _paths(found: Seeded) -> tuple[str, str]:
    ns = found.namespace
    return (
        f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machinepools/{POOL}",
        f"/apis/{INFRA}/v1beta2/namespaces/{ns}/dockermachinepools/{POOL}",
    )


def _annotations(found: Seeded) -> tuple[Any, ...]:
    return tuple(
        found.mgmt.api.request("GET", path)["metadata"].get("annotations") or {}
        for path in _paths(found)
    )


def _paused_by_the_tool(found: Seeded) -> None:
    """As `rollout pause` leaves the pool: both annotated, the record on the MachinePool."""
    pool, infra = _paths(found)
    record = f"DockerMachinePool/{POOL},MachinePool/{POOL}"
    for path, values in ((infra, {PAUSED: ""}), (pool, {PAUSED: "", RECORD: record})):
        found.mgmt.api.request(
            "PATCH", path, {"metadata": {"annotations": values}}, "application/merge-patch+json"
        )


def test_fix_takes_what_its_steps_commands_take(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    found, roles = seeded
    ns = found.namespace
    _paused_by_the_tool(found)
    before = _annotations(found)
    step = f"fix step 1 of 1: kubectl machinepool rollout resume {POOL} -n {ns}; failed: step 1)"
    for name, extra in (("reader", ()), ("deleter", (roles[DELETER],))):
        user = found.user(f"fix-{name}", roles[READER], *extra)
        refused = cli(capsys, user, "fix", "-n", ns, "--yes")
        assert refused.code == 3, refused.out + refused.err
        [line] = [x for x in refused.err.splitlines() if x.startswith("error: ")]
        assert line.startswith(f"error: refused: you may not patch dockermachinepools.{INFRA}")
        assert line.endswith(f"nothing was written ({step}"), line
        assert f"Step 1 of 1: kubectl machinepool rollout resume {POOL}" in refused.out
        assert "Steps:\n  1. failed (refused: you may not patch" in refused.out
        assert _annotations(found) == before
    operator = found.user("fix-operator", roles[READER], roles[OPERATOR])
    dry = cli(capsys, operator, "fix", "-n", ns, "--dry-run=server")
    assert dry.code == 0, dry.out + dry.err
    assert dry.out.count("annotated (server dry run)") == 2
    assert f"1. dry run: kubectl machinepool rollout resume {POOL}" in dry.out
    assert _annotations(found) == before
    done = cli(capsys, operator, "fix", "-n", ns, "--yes")
    assert done.code == 0, done.out + done.err
    assert f"1. done: kubectl machinepool rollout resume {POOL} -n {ns}" in done.out
    mp, infra = _annotations(found)
    assert not {PAUSED, RECORD} & set(mp)
    assert PAUSED not in infra
    again = cli(capsys, operator, "fix", "-n", ns, "-o", "json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["steps"] == []
    assert again.err == "Nothing to do: no finding that this tool's writes remedy is planned.\n"


def _both_paused(namespace: str) -> list[Obj]:
    """Two pools of one Cluster, each as `rollout pause` leaves it."""
    objects = VARIANTS["capd-two-pools"]("v1beta2", namespace, namespace.removeprefix("t-"))
    for pool in ("dev-mp-0", "dev-mp-1"):
        record = f"DockerMachinePool/{pool},MachinePool/{pool}"
        for kind, values in (
            ("DockerMachinePool", {PAUSED: ""}),
            ("MachinePool", {RECORD: record, PAUSED: ""}),
        ):
            obj = next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == pool)
            obj["metadata"].setdefault("annotations", {}).update(values)
    return objects


def test_a_failing_step_ends_the_run_saying_what_was_done(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    found, roles = seeded
    mgmt = found.mgmt
    ns = mgmt.new_namespace()
    objects = _both_paused(ns)
    create_scenario(mgmt, objects)
    try:
        user = found.user("fix-one-infra", roles[READER])
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "resume-dev-mp-0", "namespace": ns},
            "rules": [
                {"apiGroups": [CAPI], "resources": ["machinepools"], "verbs": ["get", "patch"]},
                {"apiGroups": [INFRA], "resources": ["dockermachinepools"], "verbs": ["get"]},
                {"apiGroups": [INFRA], "resources": ["dockermachinepools"], "verbs": ["patch"],
                 "resourceNames": ["dev-mp-0"]},
            ],
        }  # fmt: skip
        apply(mgmt, role)
        bind(mgmt, user.name, role)
        result = cli(capsys, user, "fix", "-n", ns, "--yes")
        assert result.code == 3, result.out + result.err
        [line] = [x for x in result.err.splitlines() if x.startswith("error: ")]
        assert line.startswith(f"error: refused: you may not patch dockermachinepools.{INFRA}")
        assert line.endswith(
            f"(fix step 2 of 2: kubectl machinepool rollout resume dev-mp-1 -n {ns}; done: "
            "step 1; failed: step 2)"
        ), line
        steps = result.out.partition("\nSteps:\n")[2]
        assert steps.startswith(f"  1. done: kubectl machinepool rollout resume dev-mp-0 -n {ns}")
        base = f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machinepools"
        left = {
            name: mgmt.api.request("GET", f"{base}/{name}")["metadata"].get("annotations") or {}
            for name in ("dev-mp-0", "dev-mp-1")
        }
        assert PAUSED not in left["dev-mp-0"]
        assert left["dev-mp-1"][RECORD] == "DockerMachinePool/dev-mp-1,MachinePool/dev-mp-1"
    finally:
        delete_nodes(mgmt, objects)
