"""delete-machine and the read commands with one fault at each request, against the real server.

For each configuration a fault-free run through the proxy first gives the clean request
sequence 1..K; then every fault kind is injected at every index, one run each, and the run is
held to the write contract: what the exit code says must be what the namespace holds, object
by object (0: every planned write took effect; 1 and 3: the namespace is as before, "nothing
was written" or "taken back"; 5: each object left changed is named, with a hint). The
`<cluster>-kubeconfig` Secret of each scenario points at the proxy as well, so the workload
reads (Nodes, Pods, budgets) are counted and faulted like the management reads, and the proxy
sees every request the plugin makes.

Every write is also held past the client's timeout and delivered to the server afterwards
(late: after the command ended; late-after-read: right after the plugin's next read of the
object), once with the timeout ending the request and once with Ctrl-C (SIGINT when the write
arrives, no request timeout): what the plugin reported must still hold once the write landed
or failed. A run spoiled by a busy machine (a request timed out before the fault was reached)
is run again with a longer timeout (faultmatrix.Matrix.run): the verdict never depends on speed.

Kinds not injected where they cannot differ from another: reset-after and stall-after only on
requests that change state (on a GET or an access review the client sees exactly what
reset-before and stall give, and the server holds the same); 410 Expired only on list
requests with a continue token (the proxy asks for one-item pages of namespaced lists in
those runs, so there are some).

To stay at minutes, two kinds of configuration skip requests another one covers:
- without --drain-timeout: start at the first request where the clean sequence departs from the
  same configuration with it (up to there both send the same requests, in any order: the
  planning reads go side by side);
- on azure-vmss: start at the first access review, where planning turns to permissions, the
  drain and the writes. Up to there it reads what capd reads, under other kind names; what
  sets the provider apart (the annotation alone deletes the instance) is in the writes.
The skips hold under CI too: they leave out only requests another configuration faults, and
every index of every configuration took the suite past its 20 minutes on 2 cores (the matrix
alone 565 s against 438 s). FAULT_MATRIX_FULL=1 runs every index of every configuration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from support.faultjudge import (
    AFTER_APPLIED,
    CAPI,
    FULL,
    REQUEST_TIMEOUT,
    Problem,
    cells_for,
    departs,
    now,
    patch_body,
    problem,
    record,
    report,
    write_problems,
)
from support.faultmatrix import Cell, Matrix, Outcome, changes_state
from support.faultproxy import Seen
from support.faultstate import ObjectKey

from kubectl_machinepool.providers.registry import annotation_deletes

# Its own process pool keeps the cores busy: under xdist the matrix stays on one worker.
pytestmark = pytest.mark.xdist_group("fault-matrix")

DELETE_ANNOTATION = "cluster.x-k8s.io/delete-machine"
DELETE_EXIT_CODES = {0, 1, 3, 5}
NOW = "2030-01-01T00:00:00Z"  # read commands: ages and durations that do not move


# -- configurations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    generation: str
    scenario: str
    machine: str
    pool: str
    mode: str
    drain: bool

    @property
    def id(self) -> str:
        return "-".join(
            [self.generation, self.scenario, self.mode.lstrip("-")]
            + (["drain"] if self.drain else [])
        )

    @property
    def scale_down(self) -> bool:
        return self.mode == "--scale-down"

    @property
    def annotation_deletes(self) -> bool:
        """The provider deletes the instance on the annotation alone (CAPZ)."""
        return self.scenario == "azure-vmss" and annotation_deletes("AzureMachinePool")

    def argv(self, timeout: str = REQUEST_TIMEOUT) -> tuple[str, ...]:
        drain = ("--drain-timeout", "5m") if self.drain else ()
        return (
            "delete-machine", self.machine, self.mode, *drain,
            "--yes", "--no-wait", "--request-timeout", timeout,
        )  # fmt: skip

    def cell(self, **fault: Any) -> Cell:
        # Interrupted: no request timeout, so Ctrl-C and not a timeout ends the held request.
        argv = self.argv("0" if fault.get("interrupt") else REQUEST_TIMEOUT)
        return Cell(self.generation, self.scenario, argv, **fault)

    @property
    def with_drain(self) -> Config:
        return Config(self.generation, self.scenario, self.machine, self.pool, self.mode, True)


PROVIDERS = [
    ("capd", "dev-mp-0-x7q2p", "dev-mp-0"),  # the annotation only picks the instance
    ("azure-vmss", "vmss-workers-1", "vmss-workers"),  # the annotation alone deletes it
]
CONFIGS = [
    Config("v1beta2", scenario, machine, pool, mode, drain)
    for scenario, machine, pool in PROVIDERS
    for mode in ("--replace", "--scale-down")
    for drain in (False, True)
] + [
    # v1beta1 differs in the drain timeout field (a duration string) and the served version;
    # the configuration with the most writes (and so the most undo paths) covers both.
    Config("v1beta1", "capd", "dev-mp-0-x7q2p", "dev-mp-0", "--scale-down", True),
]


# -- what an outcome must satisfy ------------------------------------------------------------------


def _planned_fields(config: Config, key: ObjectKey) -> list[tuple[str, ...]] | None:
    """The fields the plan may change in this object; None: the plan does not touch it."""
    if key.group != CAPI:
        return None
    if key.kind == "Machine" and key.name == config.machine:
        fields: list[tuple[str, ...]] = []
        if config.drain:
            fields += [
                ("spec", "deletion", "nodeDrainTimeoutSeconds"),
                ("spec", "nodeDrainTimeout"),
            ]
        if config.scale_down:
            fields.append(("metadata", "annotations", DELETE_ANNOTATION))
        else:
            fields += [
                ("metadata", "deletionTimestamp"),
                ("metadata", "deletionGracePeriodSeconds"),
            ]
        return fields
    if key.kind == "MachinePool" and key.name == config.pool and config.scale_down:
        return [("spec", "replicas")]
    return None


def _seconds(value: Any) -> float | None:
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str) and value:
        units = {"h": 3600, "m": 60, "s": 1}
        total, number = 0.0, ""
        for char in value:
            if char.isdigit() or char == ".":
                number += char
            elif char in units and number:
                total, number = total + float(number) * units[char], ""
            else:
                return None
        return total if not number else None
    return None


def _not_applied(config: Config, outcome: Outcome) -> list[str]:
    """Exit 0: every planned write took effect."""
    ns = outcome.namespace
    machine_key = ObjectKey("Machine", CAPI, ns, config.machine)
    machine = now(outcome, machine_key) or {}
    meta, spec = machine.get("metadata") or {}, machine.get("spec") or {}
    missing = []
    if config.drain:
        stored = spec.get("nodeDrainTimeout") or (spec.get("deletion") or {}).get(
            "nodeDrainTimeoutSeconds"
        )
        if _seconds(stored) != 300:
            missing.append(f"exit 0 but the drain timeout is {stored!r}, not 5m")
    lines = outcome.out.splitlines()
    if config.scale_down:
        if DELETE_ANNOTATION not in (meta.get("annotations") or {}):
            missing.append("exit 0 but the Machine carries no delete-machine annotation")
        pool_key = ObjectKey("MachinePool", CAPI, ns, config.pool)
        before = (outcome.before.get(pool_key) or {}).get("spec", {}).get("replicas")
        after = (now(outcome, pool_key) or {}).get("spec", {}).get("replicas")
        if before is None or after != before - 1:
            missing.append(f"exit 0 but spec.replicas went {before} -> {after}, not one lower")
        for line in (
            f"machine.{CAPI}/{config.machine} annotated",
            f"machinepool.{CAPI}/{config.pool} scaled",
        ):
            if line not in lines:
                missing.append(f"exit 0 but stdout lacks {line!r}")
    else:
        if machine and not meta.get("deletionTimestamp"):
            missing.append("exit 0 but the Machine is not being deleted")
        if f"machine.{CAPI}/{config.machine} deleted" not in lines:
            missing.append("exit 0 but stdout lacks the 'deleted' line")
    return missing


def _step(config: Config, seen: Seen, ns: str) -> tuple[str, list[str]] | None:
    """The plan step a write request is, and the words stderr must name it with."""
    machine = f"/namespaces/{ns}/machines/{config.machine}"
    if seen.path.endswith(machine) and seen.method == "DELETE":
        return "delete", [f"delete Machine {ns}/{config.machine}"]
    if seen.path.endswith(machine) and seen.method == "PATCH":
        if _sets_annotation(seen):
            return "annotate", [f"annotate Machine {ns}/{config.machine}"]
        return "drain timeout", ["nodeDrainTimeout", f"Machine {ns}/{config.machine}"]
    if seen.path.endswith(f"/machinepools/{config.pool}/scale") and seen.method == "PUT":
        return "scale", [f"scale MachinePool {ns}/{config.pool}"]
    return None


def _sets_annotation(seen: Seen) -> bool:
    """A PATCH that puts the delete-machine annotation on (its undo sets it to null)."""
    value = ((patch_body(seen).get("metadata") or {}).get("annotations") or {}).get(
        DELETE_ANNOTATION
    )
    return isinstance(value, str)


def _annotation_problems(config: Config, outcome: Outcome) -> list[str]:
    """Where the annotation alone deletes the instance, it cannot be taken back."""
    if not (config.annotation_deletes and config.scale_down):
        return []
    if not any(_sets_annotation(s) for s in outcome.forwarded_writes):
        return []
    machine = f"Machine {outcome.namespace}/{config.machine}"
    if outcome.code in (1, 3):
        return [
            f"exit {outcome.code} after the annotation took effect: on this provider it alone "
            "deletes the instance, so taking it back restores nothing (expected exit 5)"
        ]
    if outcome.code == 5 and machine not in outcome.err:
        return [f"exit 5 without naming {machine}, whose instance may be gone"]
    return []


def delete_problems(config: Config, outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages = write_problems(
        outcome,
        planned=lambda key: _planned_fields(config, key),
        codes=DELETE_EXIT_CODES,
        not_applied=lambda o: _not_applied(config, o),
        step_of=lambda seen, ns: _step(config, seen, ns),
    )
    messages += _annotation_problems(config, outcome)
    return [problem(outcome, clean, m) for m in messages]


# -- delete-machine ------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.id)
def test_delete_machine_keeps_its_word_under_every_fault(matrix: Matrix, config: Config) -> None:
    clean, paged, twin = matrix.run(
        [config.cell(), config.cell(paging=1), config.with_drain.cell()]
    )
    for run in (clean, paged):
        assert (run.code, delete_problems(config, run, clean)) == (0, []), run.err
    assert len(paged.log) > len(clean.log), "one-item pages made no continue requests"
    start = 1
    if not FULL and config.scenario == "azure-vmss":
        start = next(s.index for s in clean.log if s.path.endswith("accessreviews"))
    if not FULL and not config.drain:
        start = max(start, departs(clean, twin))
    cells = cells_for(config.cell, clean, paged, start)
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        base = paged if outcome.cell.paging else clean
        problems += delete_problems(config, outcome, base)
    record(f"delete-{config.id}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"delete-machine {config.id} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )


# -- read commands ---------------------------------------------------------------------------------

READ_COMMANDS = [
    ("describe", "dev-mp-0"),
    ("describe", "dev-mp-0", "-o", "json"),
    ("diagnose",),
    ("diagnose", "-o", "json"),
    ("diff-metadata", "dev-mp-0"),
    ("diff-metadata", "dev-mp-0", "-o", "json"),
    ("list",),
    ("list", "-o", "json"),
]


def read_problems(outcome: Outcome, clean: Outcome) -> list[Problem]:
    messages: list[str] = []
    code, out, err = outcome.code, outcome.out, outcome.err
    if "Traceback" in err or "Traceback" in out:
        messages.append("a Python traceback")
    if code not in (0, 1):
        messages.append(f"exit {code}: a read command ends 0 (maybe partial) or 1")
    if outcome.cell.fault and outcome.fired is None:
        messages.append("the faulted request was not sent, unlike in the clean run")
    if code == 0:
        if out != outcome.clean_out and "warning:" not in err:
            messages.append("exit 0 with output unlike a clean run's, and no warning: line")
        if "-o" in outcome.cell.argv:
            try:
                json.loads(out)
            except ValueError:
                messages.append("exit 0 with -o json output that is not JSON")
    if code == 1:
        lines = [line for line in err.splitlines() if not line.startswith("warning:")]
        shape_ok = (
            len(lines) in (1, 2) and lines[0].startswith("error: ")
            and (len(lines) == 1 or lines[1].startswith("hint: "))
        )  # fmt: skip
        if not shape_ok:
            messages.append("exit 1 without exactly one error: line (and at most a hint: line)")
    wrote = [str(s) for s in outcome.log if changes_state(s)]
    if wrote or outcome.changed:
        messages.append(f"a read command changed state: {', '.join(wrote)}")
    messages += [f"proxy: {e}" for e in outcome.proxy_errors]
    return [problem(outcome, clean, m) for m in messages]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=" ".join)
def test_read_commands_say_what_they_could_not_read(
    matrix: Matrix, command: tuple[str, ...]
) -> None:
    argv = (*command, "--request-timeout", REQUEST_TIMEOUT, "--now", NOW)

    def make(**fault: Any) -> Cell:
        return Cell("v1beta2", "capd", argv, read_only=True, **fault)

    clean, paged = matrix.run([make(), make(paging=1)])
    for run in (clean, paged):
        assert (run.code, read_problems(run, clean)) == (0, []), run.err
        assert run.out == run.clean_out
    cells = [c for c in cells_for(make, clean, paged) if c.fault not in AFTER_APPLIED]
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += read_problems(outcome, paged if outcome.cell.paging else clean)
    record("read-" + "-".join(command).replace("/", "_"), outcomes, problems)
    if problems:
        pytest.fail(
            report(" ".join(command) + f" (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )
