"""The whole-pool writes with one fault at each request, against the real server, in both API
generations: upgrade and scale.

The capd pool (MachinePool and DockerMachinePool at v1.34.0, kindest/node:v1.34.0) goes to
v1.34.1: pause the DockerMachinePool, set the MachinePool's version, set its customImage,
unpause. Every fault kind at every request of the clean run (support.faultjudge.cells_for) is
held to the write contract, and to what is upgrade's own: the version and the image are never
left half-paired, nor the infra pool paused, without exit 5 (or the Ctrl-C report) naming the
objects; exit 0 means both fields are new and the pool is unpaused.

scale (2 to 3 replicas) is one write to /scale: exit 0 means spec.replicas is 3, anything else
that it is 2 or that the MachinePool is named. Its reads are upgrade's (app/planning.py), faulted
there: scale's cells start at its access review unless FAULT_MATRIX_FULL=1.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.faultjudge import (
    CAPI,
    FULL,
    REQUEST_TIMEOUT,
    Problem,
    cells_for,
    common_problems,
    exit_problems,
    now,
    patch_body,
    problem,
    record,
    report,
    step_problems,
    unplanned,
)
from support.faultmatrix import Cell, Matrix, Outcome
from support.faultproxy import Seen
from support.faultstate import ObjectKey

pytestmark = pytest.mark.xdist_group("fault-matrix")

POOL = "dev-mp-0"
INFRA = "infrastructure.cluster.x-k8s.io"
PAUSED = "cluster.x-k8s.io/paused"
OLD, NEW = "v1.34.0", "v1.34.1"
VERSION = ("spec", "template", "spec", "version")
IMAGE = ("spec", "template", "customImage")
EXIT_CODES = {0, 1, 3, 5}


def _cell(generation: str, **fault: Any) -> Cell:
    # Interrupted: no request timeout, so Ctrl-C and not a timeout ends the held request.
    timeout = "0" if fault.get("interrupt") else REQUEST_TIMEOUT
    argv = ("upgrade", POOL, "--version", NEW, "--yes", "--no-wait", "--request-timeout", timeout)
    return Cell(generation, "capd", argv, **fault)


def _keys(ns: str) -> tuple[ObjectKey, ObjectKey]:
    return ObjectKey("MachinePool", CAPI, ns, POOL), ObjectKey("DockerMachinePool", INFRA, ns, POOL)


def _planned(key: ObjectKey) -> list[tuple[str, ...]] | None:
    if key.name != POOL:
        return None
    if key.kind == "MachinePool" and key.group == CAPI:
        return [VERSION]
    if key.kind == "DockerMachinePool" and key.group == INFRA:
        return [IMAGE, ("metadata", "annotations", PAUSED)]
    return None


def _get(obj: dict[str, Any] | None, path: tuple[str, ...]) -> Any:
    for name in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(name)
    return obj


def _state(outcome: Outcome) -> tuple[Any, Any, bool]:
    """The MachinePool's version, the infra pool's image, and whether it is paused."""
    mp_key, infra_key = _keys(outcome.namespace)
    infra = now(outcome, infra_key)
    annotations = _get(infra, ("metadata", "annotations")) or {}
    return _get(now(outcome, mp_key), VERSION), _get(infra, IMAGE), PAUSED in annotations


def _not_applied(outcome: Outcome) -> list[str]:
    version, image, paused = _state(outcome)
    missing = []
    if version != NEW:
        missing.append(f"exit 0 but the MachinePool's version is {version!r}, not {NEW}")
    if image != f"kindest/node:{NEW}":
        missing.append(f"exit 0 but the customImage is {image!r}")
    if paused:
        missing.append("exit 0 but the DockerMachinePool is left paused")
    return missing


def _pairing_problems(outcome: Outcome) -> list[str]:
    """Half-paired, or paused: only with the objects named (exit 5, or the Ctrl-C report)."""
    version, image, paused = _state(outcome)
    half = (version == NEW) != (image == f"kindest/node:{NEW}")
    if not (half or paused) or outcome.code == 0:
        return []
    messages = []
    if outcome.code not in (5, 130):
        messages.append(f"exit {outcome.code} with the pool half-paired or paused, not 5")
    names = [f"{kind} {outcome.namespace}/{POOL}" for kind in ("MachinePool", "DockerMachinePool")]
    if half:
        messages += [f"half-paired without naming {n}" for n in names if n not in outcome.err]
    if paused and names[1] not in outcome.err:
        messages.append("the DockerMachinePool is left paused, and stderr does not say so")
    return messages


def _step(seen: Seen, ns: str) -> tuple[str, list[str]] | None:
    if seen.method != "PATCH":
        return None
    if seen.path.endswith(f"/namespaces/{ns}/machinepools/{POOL}"):
        return "version", [f"MachinePool {ns}/{POOL}"]
    if seen.path.endswith(f"/namespaces/{ns}/dockermachinepools/{POOL}"):
        body = patch_body(seen)
        paused = ((body.get("metadata") or {}).get("annotations") or {}).get(PAUSED, "-")
        step = "image" if paused == "-" else "pause" if paused is not None else "unpause"
        return step, [f"DockerMachinePool {ns}/{POOL}"]
    return None


def upgrade_problems(outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages = common_problems(outcome)
    messages += unplanned(_planned, outcome)
    messages += exit_problems(outcome, EXIT_CODES, _not_applied)
    messages += step_problems(_step, outcome)
    messages += _pairing_problems(outcome)
    return [problem(outcome, clean, m) for m in messages]


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_upgrade_keeps_its_word_under_every_fault(matrix: Matrix, generation: str) -> None:
    clean, paged = matrix.run([_cell(generation), _cell(generation, paging=1)])
    for run in (clean, paged):
        assert (run.code, upgrade_problems(run, clean)) == (0, []), run.err
    writes = [s.method for s in clean.log if s.method == "PATCH"]
    assert writes == ["PATCH"] * 4, "pause, version, image, unpause: " + "; ".join(
        clean.label(i) for i in range(1, len(clean.log) + 1)
    )

    def make(**fault: Any) -> Cell:
        return _cell(generation, **fault)

    cells = cells_for(make, clean, paged)
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += upgrade_problems(outcome, paged if outcome.cell.paging else clean)
    record(f"upgrade-{generation}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"upgrade {generation} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )


# -- scale ----------------------------------------------------------------------------------------


def _scale_cell(generation: str, **fault: Any) -> Cell:
    timeout = "0" if fault.get("interrupt") else REQUEST_TIMEOUT
    argv = ("scale", POOL, "--replicas", "3", "--yes", "--request-timeout", timeout)
    return Cell(generation, "capd", argv, **fault)


def _scale_planned(key: ObjectKey) -> list[tuple[str, ...]] | None:
    if (key.kind, key.group, key.name) == ("MachinePool", CAPI, POOL):
        return [("spec", "replicas")]
    return None


def _scaled(outcome: Outcome) -> list[str]:
    mp_key, _ = _keys(outcome.namespace)
    size = _get(now(outcome, mp_key), ("spec", "replicas"))
    missing = [] if size == 3 else [f"exit 0 but spec.replicas is {size!r}, not 3"]
    if f"machinepool.{CAPI}/{POOL} scaled" not in outcome.out.splitlines():
        missing.append("exit 0 but stdout lacks the 'scaled' line")
    return missing


def _scale_step(seen: Seen, ns: str) -> tuple[str, list[str]] | None:
    if seen.method == "PUT" and seen.path.endswith(f"/namespaces/{ns}/machinepools/{POOL}/scale"):
        return "scale", [f"MachinePool {ns}/{POOL}"]
    return None


def scale_problems(outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages = common_problems(outcome)
    messages += unplanned(_scale_planned, outcome)
    messages += exit_problems(outcome, EXIT_CODES, _scaled)
    messages += step_problems(_scale_step, outcome)
    return [problem(outcome, clean, m) for m in messages]


@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"])
def test_scale_keeps_its_word_under_every_fault(matrix: Matrix, generation: str) -> None:
    clean, paged = matrix.run([_scale_cell(generation), _scale_cell(generation, paging=1)])
    for run in (clean, paged):
        assert (run.code, scale_problems(run, clean)) == (0, []), run.err
    assert [s.method for s in clean.log if s.method == "PUT"] == ["PUT"]

    def make(**fault: Any) -> Cell:
        return _scale_cell(generation, **fault)

    # Up to its access review scale reads what upgrade reads (app/planning.read_pools), and
    # upgrade's matrix faults those requests; FAULT_MATRIX_FULL=1 faults them here too.
    start = 1 if FULL else next(s.index for s in clean.log if s.path.endswith("accessreviews"))
    cells = cells_for(make, clean, paged, start)
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += scale_problems(outcome, paged if outcome.cell.paging else clean)
    record(f"scale-{generation}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"scale {generation} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )
