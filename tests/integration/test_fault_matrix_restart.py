"""rollout restart with one fault at each request, against the real server, both API
generations: the capd pool's two instances, replaced together (--max-unavailable 2, --no-wait:
with no controllers here, both Machines stay going), each with a drain timeout.

The restart records its start on the MachinePool, then sends each replacement through
delete-machine's engine: three batches. Held to the write contract object by object (0: the
record set, both Machines going with the drain timeout, both "deleted" lines; 1 and 3: the
namespace as before; 5: the record and every Machine left changed named, with a hint; 130 after
Ctrl-C: what is left named), wherever the fault lands: in the record's batch, between batches,
or in a replacement's. Its reads are upgrade's and delete-machine's (app/planning.read_pools,
app/deleting.plan_for), faulted with every kind in their matrices: here the cells start at the
first access review, and a read or an access review gets one kind (403), unless
FAULT_MATRIX_FULL=1.
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
    now,
    problem,
    record,
    report,
    write_problems,
)
from support.faultmatrix import Cell, Matrix, Outcome, changes_state
from support.faultproxy import Fault, Seen
from support.faultstate import ObjectKey

pytestmark = pytest.mark.xdist_group("fault-matrix")

POOL = "dev-mp-0"
MACHINES = ("dev-mp-0-k9d4m", "dev-mp-0-x7q2p")
STARTED = "kubectl-machinepool/restart-started"
REVISIONS = "kubectl-machinepool/revisions"
EXIT_CODES = {0, 1, 3, 5}
MACHINE_FIELDS = [
    ("spec", "deletion", "nodeDrainTimeoutSeconds"),
    ("spec", "nodeDrainTimeout"),
    ("metadata", "deletionTimestamp"),
    ("metadata", "deletionGracePeriodSeconds"),
]


def _cell(generation: str, **fault: Any) -> Cell:
    timeout = "0" if fault.get("interrupt") else REQUEST_TIMEOUT
    argv = (
        "rollout", "restart", POOL, "--max-unavailable", "2", "--drain-timeout", "5m",
        "--no-wait", "--yes", "--request-timeout", timeout,
    )  # fmt: skip
    return Cell(generation, "capd", argv, **fault)


def _planned(key: ObjectKey) -> list[tuple[str, ...]] | None:
    if key.group != CAPI:
        return None
    if key.kind == "MachinePool" and key.name == POOL:
        # The start, and the restart's revision written with it (issue 43).
        return [("metadata", "annotations", STARTED), ("metadata", "annotations", REVISIONS)]
    if key.kind == "Machine" and key.name in MACHINES:
        return MACHINE_FIELDS
    return None


def _not_applied(outcome: Outcome) -> list[str]:
    ns, missing = outcome.namespace, []
    mp = now(outcome, ObjectKey("MachinePool", CAPI, ns, POOL)) or {}
    if STARTED not in (mp.get("metadata") or {}).get("annotations", {}):
        missing.append("exit 0 but the MachinePool has no restart record")
    for name in MACHINES:
        machine = now(outcome, ObjectKey("Machine", CAPI, ns, name))
        if machine is not None and not machine["metadata"].get("deletionTimestamp"):
            missing.append(f"exit 0 but Machine {name} is not being deleted")
        if f"machine.{CAPI}/{name} deleted" not in outcome.out:
            missing.append(f"exit 0 but stdout lacks {name}'s 'deleted' line")
    return missing


def _step(seen: Seen, ns: str) -> tuple[str, list[str]] | None:
    if seen.method == "PATCH" and seen.path.endswith(f"/namespaces/{ns}/machinepools/{POOL}"):
        return "record", [f"MachinePool {ns}/{POOL}"]
    for name in MACHINES:
        if seen.path.endswith(f"/namespaces/{ns}/machines/{name}") and seen.method != "GET":
            return f"{seen.method} machine", [f"Machine {ns}/{name}"]
    return None


def _problems(outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages = write_problems(
        outcome, planned=_planned, codes=EXIT_CODES, not_applied=_not_applied, step_of=_step
    )
    return [problem(outcome, clean, m) for m in messages]


def _kept(cell: Cell, clean: Outcome) -> bool:
    """Every fault on the requests that write; on a read or an access review, one refusal
    (403): each ends the restart the same way whatever fails it (after the record: exit 5, the
    record named), and every kind on these requests is faulted in the upgrade and
    delete-machine matrices."""
    if cell.paging is not None:
        return True
    return changes_state(clean.log[(cell.index or 1) - 1]) or cell.fault is Fault.FORBIDDEN


# v1beta1 sends the same requests under other versions; FAULT_MATRIX_FULL=1 runs it too.
@pytest.mark.parametrize("generation", ["v1beta2", "v1beta1"] if FULL else ["v1beta2"])
def test_restart_keeps_its_word_under_every_fault(matrix: Matrix, generation: str) -> None:
    clean, paged = matrix.run([_cell(generation), _cell(generation, paging=1)])
    for run in (clean, paged):
        assert (run.code, _problems(run, clean)) == (0, []), run.err
    changing = ("PATCH", "PUT", "DELETE")
    writes = [f"{s.method} {s.path.rsplit('/', 2)[-2]}" for s in clean.log if s.method in changing]
    assert writes == ["PATCH machinepools", *(["PATCH machines", "DELETE machines"] * 2)], writes

    def make(**fault: Any) -> Cell:
        return _cell(generation, **fault)

    start = 1 if FULL else next(s.index for s in clean.log if s.path.endswith("accessreviews"))
    cells = [c for c in cells_for(make, clean, paged, start) if FULL or _kept(c, clean)]
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += _problems(outcome, paged if outcome.cell.paging else clean)
    record(f"restart-{generation}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"restart {generation} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )
