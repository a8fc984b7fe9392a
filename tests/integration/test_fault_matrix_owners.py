"""The owner read under every fault, on the real API server (issue 50): scale of a pool tracked by
an Argo CD Application that self-heals (capd-argo), each fault kind at the GET of the Application.

A refused owner read is "unknown owner state", never no owner: without --ignore-owner the scale
is refused (exit 3, nothing written) saying either that state or, where the client's retry got
the answer after all, that a self-heal sync reverts the write; with --ignore-owner it is made
(exit 0, spec.replicas alone changed) and the plan keeps that same line as a warning. Only the
owner read is faulted: every other request is the scale's own, which test_fault_matrix_pools.py
faults. v1beta2 only: the read is the same in both generations.
"""

from __future__ import annotations

import pytest
from support.controlplane import ControlPlane
from support.faultjudge import CAPI, EVERY_INDEX, REQUEST_TIMEOUT, common_problems
from support.faultmatrix import Cell, Matrix, Outcome
from support.faultproxy import Fault
from support.faultstate import ObjectKey
from support.gitops import install_gitops_crds
from support.management import management_cluster

pytestmark = pytest.mark.xdist_group("fault-matrix")

POOL = "dev-mp-0"
SCALE = ("scale", POOL, "--replicas", "3", "--yes", "--request-timeout", REQUEST_TIMEOUT)
# The owner read as the matrix names a request (the namespace generic), the first of its kind.
OWNER_GET = "GET /apis/argoproj.io/v1alpha1/namespaces/{ns}/applications/prod-pools"
UNKNOWN = "unknown owner state: Application {ns}/prod-pools could not be read"
REVERTS = "a self-heal sync reverts this write"


@pytest.fixture(scope="module")
def crds(control_plane: ControlPlane) -> None:
    """Before the matrix's workers list the server's kinds and make the scenario's namespaces."""
    install_gitops_crds(management_cluster(control_plane, "v1beta2"))


def said(text: str) -> str:
    return " ".join(text.split())


def problems(outcome: Outcome, ignore: bool) -> list[str]:
    found = common_problems(outcome)
    owner = said(outcome.out + outcome.err)
    unknown = UNKNOWN.format(ns=outcome.namespace)
    if unknown not in owner and REVERTS not in owner:
        found.append("neither the owner's state nor that it is unknown is said")
    fired = outcome.fired
    # 403 and 404 are answers no client retries: the state can only be unknown.
    answered = fired is not None and fired.fault in (Fault.FORBIDDEN, Fault.NOT_FOUND)
    if answered and unknown not in owner:
        found.append("a refused owner read is not unknown owner state")
    pool = ObjectKey("MachinePool", CAPI, outcome.namespace, POOL)
    if not ignore:
        if outcome.code != 3 or outcome.changed:
            found.append(f"exit {outcome.code} with {len(outcome.changed)} changed, not refused")
        return found
    if outcome.code != 0 or set(outcome.changed) != {pool}:
        return [*found, f"exit {outcome.code}, {sorted(k.display for k in outcome.changed)}"]
    after = outcome.changed[pool][1] or {}
    if after.get("spec", {}).get("replicas") != 3 or "--ignore-owner: writing anyway" not in owner:
        found.append("--ignore-owner did not scale with the warning kept")
    return found


def test_an_unreadable_owner_is_unknown_owner_state(crds: None, matrix: Matrix) -> None:
    """Both command lines, clean and under each fault, in one batch over the workers."""
    cells = [
        Cell("v1beta2", "capd-argo", argv, **fault)
        for argv in (SCALE, (*SCALE, "--ignore-owner"))
        for fault in [
            {},
            *({"fault": f, "index": 0, "request": (OWNER_GET, 1)} for f in EVERY_INDEX),
        ]
    ]
    outcomes = matrix.run(cells)
    for clean in (outcomes[0], outcomes[len(EVERY_INDEX) + 1]):
        assert REVERTS in said(clean.out + clean.err), clean.err
    wrong = [
        f"{o.cell.argv[-1]} {o.cell.fault.value if o.cell.fault else 'clean'}: {p}"
        for o in outcomes
        for p in problems(o, ignore=o.cell.argv[-1] == "--ignore-owner")
    ]
    assert not wrong, "\n".join(wrong)
