"""diff with one fault at each request, against the real server (support.faultmatrix): every
request of a clean run (the manifest's objects read by name, each dry-run apply and its forced
retry, the pools' LIST, the infra pool, the workload Secret and PodDisruptionBudgets) faulted by
every kind, and the run held to what a read command owes: exit 0 with the clean output, or a
different output that says why (a `warning:` line, or the comparison it fell back to), or one
`error:` line (exit 1); never a traceback, and nothing stored (its only PATCHes are dryRun=All).

The capd scenario's DockerMachinePool gets a new custom image (rolls every instance, so the roll
reads the workload cluster's budgets) and its KubeadmConfig a changed spec.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from support.faultjudge import (
    AFTER_APPLIED,
    LATE,
    REQUEST_TIMEOUT,
    Problem,
    cells_for,
    problem,
    record,
    report,
)
from support.faultmatrix import Cell, Matrix, Outcome, changes_state
from support.faultproxy import Fault

pytestmark = pytest.mark.xdist_group("fault-matrix")

POOL = "dev-mp-0"
# What the output says when a faulted dry run made it compare another way.
FELL_BACK = {
    Fault.FORBIDDEN: "client-side: no permission to patch",
    Fault.CONFLICT: "server-side dry-run apply, forced:",
}


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> str:
    objects = [
        {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
            "kind": "DockerMachinePool",
            "metadata": {"name": POOL},
            "spec": {"template": {"customImage": "kindest/node:v1.34.1"}},
        },
        {
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
            "kind": "KubeadmConfig",
            "metadata": {"name": POOL},
            "spec": {"joinConfiguration": {"nodeRegistration": {"taints": []}}},
        },
    ]
    path = tmp_path_factory.mktemp("diff-manifest") / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def diff_problems(outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages: list[str] = []
    code, out, err = outcome.code, outcome.out, outcome.err
    fault = outcome.cell.fault
    if "Traceback" in err or "Traceback" in out:
        messages.append("a Python traceback")
    if code not in (0, 1):
        messages.append(f"exit {code}: without --exit-code diff ends 0 or 1")
    if fault and outcome.fired is None:
        messages.append("the faulted request was not sent, unlike in the clean run")
    said = "warning:" in err or (fault in FELL_BACK and FELL_BACK[fault] in out)
    if code == 0 and out != outcome.clean_out and not said:
        messages.append("exit 0 with output unlike a clean run's, and nothing says why")
    if code == 1:
        lines = [line for line in err.splitlines() if not line.startswith("warning:")]
        shape_ok = (
            len(lines) in (1, 2) and lines[0].startswith("error: ")
            and (len(lines) == 1 or lines[1].startswith("hint: "))
        )  # fmt: skip
        if not shape_ok:
            messages.append("exit 1 without exactly one error: line (and at most a hint: line)")
    stored = [str(s) for s in outcome.log if changes_state(s) and "dryRun=All" not in s.query]
    if stored or outcome.changed:
        messages.append(f"diff changed state: {', '.join(stored)}")
    messages += [f"proxy: {e}" for e in outcome.proxy_errors]
    return [problem(outcome, clean, m) for m in messages]


def test_diff_says_what_it_could_not_read_or_compare(matrix: Matrix, manifest: str) -> None:
    argv = ("diff", "-f", manifest, "--request-timeout", REQUEST_TIMEOUT)

    def make(**fault: Any) -> Cell:
        return Cell("v1beta2", "capd", argv, read_only=True, **fault)

    clean, paged = matrix.run([make(), make(paging=1)])
    for run in (clean, paged):
        assert (run.code, diff_problems(run, clean)) == (0, []), run.err
        assert run.out == run.clean_out
    assert "rolls every instance" in clean.out
    assert next(s.query for s in clean.log if s.method == "PATCH").count("dryRun=All") == 1
    # A dry run stores nothing: the faults that hold a write's answer or deliver it late are
    # the plain ones here.
    skipped = {*AFTER_APPLIED, *LATE}
    cells = [c for c in cells_for(make, clean, paged) if c.fault not in skipped]
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += diff_problems(outcome, paged if outcome.cell.paging else clean)
    record("diff", outcomes, problems)
    if problems:
        pytest.fail(report(f"diff (K={len(clean.log)})", problems, len(cells)), pytrace=False)
