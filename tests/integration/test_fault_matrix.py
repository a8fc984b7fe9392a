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
  same configuration with it (up to there both send the same requests);
- on azure-vmss: start at the first access review, where planning turns to permissions, the
  drain and the writes. Up to there it reads what capd reads, under other kind names; what
  sets the provider apart (the annotation alone deletes the instance) is in the writes.
The skips hold under CI too: they leave out only requests another configuration faults, and
every index of every configuration took the suite past its 20 minutes on 2 cores (the matrix
alone 565 s against 438 s). FAULT_MATRIX_FULL=1 runs every index of every configuration.
"""

from __future__ import annotations

import copy
import json
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.controlplane import ControlPlane
from support.faultmatrix import Cell, Matrix, Outcome, Server, changes_state
from support.faultproxy import Fault, Seen
from support.faultstate import ObjectKey
from support.management import management_cluster

from kubectl_machinepool.providers.registry import annotation_deletes

# Its own process pool keeps the cores busy: under xdist the matrix stays on one worker.
pytestmark = pytest.mark.xdist_group("fault-matrix")

# A stalled request costs one second; a run a busy machine spoils is run again with more.
REQUEST_TIMEOUT = "1s"
# Stalls leave a worker waiting: more workers than cores keep the cores busy meanwhile.
WORKERS = int(os.environ.get("FAULT_MATRIX_WORKERS", "4"))
FULL = os.environ.get("FAULT_MATRIX_FULL", "") not in ("", "0")
# When set, every cell's outcome is written there as JSON lines (for a report).
RESULTS = os.environ.get("FAULT_MATRIX_RESULTS")
DELETE_ANNOTATION = "cluster.x-k8s.io/delete-machine"
CAPI = "cluster.x-k8s.io"
EVERY_INDEX = (
    Fault.FORBIDDEN, Fault.NOT_FOUND, Fault.CONFLICT, Fault.SERVER_ERROR,
    Fault.TOO_MANY_REQUESTS, Fault.RESET_BEFORE, Fault.STALL,
)  # fmt: skip
# Only where a request changes state: elsewhere they are reset-before and stall again.
AFTER_APPLIED = (Fault.RESET_AFTER, Fault.STALL_AFTER)
# Only on writes: held past the client's timeout or Ctrl-C, delivered to the server later.
LATE = (Fault.LATE, Fault.LATE_AFTER_READ)
LOST_REPLY = frozenset(AFTER_APPLIED) | frozenset(LATE)
DELETE_EXIT_CODES = {0, 1, 3, 5}
INTERRUPTED = 130
NOW = "2030-01-01T00:00:00Z"  # read commands: ages and durations that do not move


@pytest.fixture(scope="module")
def matrix(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Matrix]:
    servers = []
    for generation in ("v1beta2", "v1beta1"):
        server = management_cluster(control_plane, generation).server
        servers.append(Server(generation, server.port, server.ca_file, server.admin))
    pool = Matrix(servers, tmp_path_factory.mktemp("fault-matrix"), WORKERS)
    yield pool
    pool.close()


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


@dataclass(frozen=True)
class Problem:
    fault: str
    index: int
    request: str
    code: int
    message: str
    stderr: str


def _problem(outcome: Outcome, clean: Outcome, message: str) -> Problem:
    index = outcome.cell.index or 0
    errors = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    tail = outcome.err.strip().splitlines()[-1:] or [""]
    stderr = errors[0] if errors else tail[0]
    fault = outcome.cell.fault.value if outcome.cell.fault else "none"
    return Problem(
        fault, index, clean.label(index) if index else "-", outcome.code,
        outcome.generic(message), outcome.generic(stderr)[:300],
    )  # fmt: skip


def _remove(obj: dict[str, Any] | None, paths: list[tuple[str, ...]]) -> dict[str, Any] | None:
    """The object without these fields, and without maps emptied by their removal."""
    if obj is None:
        return None
    result = copy.deepcopy(obj)
    for path in paths:
        parents = [result]
        for name in path[:-1]:
            child = parents[-1].get(name)
            if not isinstance(child, dict):
                break
            parents.append(child)
        else:
            parents[-1].pop(path[-1], None)
            for parent, name in zip(reversed(parents[:-1]), reversed(path[:-1]), strict=True):
                if parent.get(name) == {}:
                    parent.pop(name)
    return result


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


def _unplanned(config: Config, outcome: Outcome) -> list[str]:
    found = []
    for key, (before, after) in outcome.changed.items():
        fields = _planned_fields(config, key)
        if fields is None:
            found.append(f"unplanned change of {key.display}")
        elif _remove(before, fields) != _remove(after, fields):
            found.append(f"{key.display} changed outside the planned fields")
    return found


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


def _now(outcome: Outcome, key: ObjectKey) -> dict[str, Any] | None:
    if key in outcome.changed:
        return outcome.changed[key][1]
    return outcome.before.get(key)


def _not_applied(config: Config, outcome: Outcome) -> list[str]:
    """Exit 0: every planned write took effect."""
    ns = outcome.namespace
    machine_key = ObjectKey("Machine", CAPI, ns, config.machine)
    machine = _now(outcome, machine_key) or {}
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
        after = (_now(outcome, pool_key) or {}).get("spec", {}).get("replicas")
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
    try:
        body = json.loads(seen.body or b"{}")
    except ValueError:
        return False
    value = ((body.get("metadata") or {}).get("annotations") or {}).get(DELETE_ANNOTATION)
    return isinstance(value, str)


def _exit_problems(config: Config, outcome: Outcome) -> list[str]:
    """What the exit code promises about the namespace, checked against it."""
    code, err, messages = outcome.code, outcome.err, []
    if outcome.cell.interrupt:
        return _interrupt_problems(outcome)
    if code not in DELETE_EXIT_CODES:
        messages.append(f"exit {code} is not a documented delete-machine exit code")
    if code == 0:
        messages += _not_applied(config, outcome)
        fired = outcome.fired
        lost = fired is not None and fired.fault in LOST_REPLY and changes_state(fired)
        if lost and "warning:" not in err:
            messages.append("exit 0 after a lost reply, without a warning: line")
    if code in (1, 3):
        if outcome.changed:
            left = ", ".join(k.display for k in outcome.changed)
            messages.append(f"exit {code} but the cluster is left changed: {left}")
        # The phrases, wherever a sentence puts them ("Nothing was written", "Taken back:").
        if "nothing was written" not in err.lower() and "taken back" not in err.lower():
            messages.append(f"exit {code} without 'nothing was written' or 'taken back'")
    if code == 5:
        messages += [
            f"exit 5 without naming {key.display}, which is left changed"
            for key in outcome.changed
            if key.display not in err
        ]
        if "hint:" not in err:
            messages.append("exit 5 without a hint: to check the objects")
    if code != 0 and "error:" not in err:
        messages.append("a failure without an error: line")
    return messages


def _interrupt_problems(outcome: Outcome) -> list[str]:
    """Ctrl-C while a write was in flight: exit 130, and the report says what the namespace
    holds (the held write was delivered to the server after the command ended)."""
    code, err, messages = outcome.code, outcome.err.lower(), []
    if code != INTERRUPTED:
        messages.append(f"exit {code} after Ctrl-C during a write, not {INTERRUPTED}")
    if "interrupted:" not in err:
        messages.append("an interrupted run without an interrupted: line")
    if "sigint during" not in err:
        messages.append("Ctrl-C during a request not reported as 'SIGINT during' it")
    if outcome.changed and ("nothing was written" in err or "cluster is as before" in err):
        left = ", ".join(k.display for k in outcome.changed)
        messages.append(f"says nothing is left changed, but the cluster is: {left}")
    if "every write was made" not in err:
        messages += [
            f"interrupted without naming {key.display}, which is left changed"
            for key in outcome.changed
            if key.display.lower() not in err
        ]
    return messages


def _step_problems(config: Config, outcome: Outcome) -> list[str]:
    fired = outcome.fired
    step = _step(config, fired, outcome.namespace) if fired is not None else None
    if outcome.code != 0 and step is not None and not all(w in outcome.err for w in step[1]):
        return [f"the failed {step[0]} step is not named in stderr"]
    return []


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
    messages: list[str] = []
    if "Traceback" in outcome.err or "Traceback" in outcome.out:
        messages.append("a Python traceback")
    if outcome.cell.fault and outcome.fired is None:
        messages.append("the faulted request was not sent, unlike in the clean run")
    messages += _unplanned(config, outcome)
    messages += _exit_problems(config, outcome)
    messages += _step_problems(config, outcome)
    messages += _annotation_problems(config, outcome)
    messages += [f"proxy: {e}" for e in outcome.proxy_errors]
    return [_problem(outcome, clean, m) for m in messages]


# -- reporting -----------------------------------------------------------------------------------


def _ranges(indices: list[int]) -> str:
    parts, run = [], [indices[0]]
    for i in indices[1:]:
        if i == run[-1] + 1:
            run.append(i)
            continue
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(parts)


def report(title: str, problems: list[Problem], cells: int) -> str:
    """Failing cells grouped by what is wrong, then by request, with the fault kinds and exits."""
    by_message: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        by_message[p.message].append(p)
    lines = [f"{title}: {len({(p.fault, p.index) for p in problems})} of {cells} cells fail"]
    for message, group in sorted(by_message.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"* {message}  [{len(group)} cells]")
        by_request: dict[tuple[int, str], list[Problem]] = defaultdict(list)
        for p in group:
            by_request[(p.index, p.request)].append(p)
        for (index, request), cells_here in sorted(by_request.items()):
            kinds = ",".join(sorted({p.fault for p in cells_here}))
            exits = ",".join(str(c) for c in sorted({p.code for p in cells_here}))
            lines.append(f"    #{index} {request}: {kinds} -> exit {exits}")
        lines.append(f"    e.g. stderr: {group[0].stderr}")
    return "\n".join(lines)


def _record(name: str, outcomes: list[Outcome], problems: list[Problem]) -> None:
    if not RESULTS:
        return
    directory = Path(RESULTS)
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"{name}.jsonl").open("w") as out:
        for o in outcomes:
            cell = {"fault": o.cell.fault.value if o.cell.fault else None, "index": o.cell.index}
            out.write(json.dumps({
                **cell, "request": o.label(o.cell.index) if o.cell.index else None,
                "code": o.code, "seconds": round(o.seconds, 3), "err": o.generic(o.err),
                "changed": [k.display for k in o.changed],
            }) + "\n")  # fmt: skip
        for p in problems:
            out.write(json.dumps({"problem": p.__dict__}) + "\n")


def _cells_for(make: Any, clean: Outcome, paged: Outcome, start: int = 1) -> list[Cell]:
    """A cell per fault kind and request of the clean run, naming the request by what it asks
    (reads go out side by side, so its place in the order may differ from run to run)."""
    cells = [
        make(fault=kind, index=i, request=clean.request(i))
        for i in range(start, len(clean.log) + 1)
        for kind in EVERY_INDEX
    ]
    cells += [
        make(fault=kind, index=s.index, request=clean.request(s.index))
        for s in clean.log[start - 1 :]
        if changes_state(s)
        for kind in AFTER_APPLIED
    ]
    # Every write, held and delivered late, after a timeout and after Ctrl-C.
    cells += [
        make(fault=kind, index=s.index, request=clean.request(s.index), **interrupted)
        for s in clean.log
        if changes_state(s)
        for kind in LATE
        for interrupted in ({}, {"interrupt": True})
    ]
    # Few: every continue request of the paged run, wherever the shared prefix ends.
    cells += [
        make(fault=Fault.GONE, index=s.index, paging=1, request=paged.request(s.index))
        for s in paged.log
        if "continue" in s.params
    ]
    return cells


def _departs(ours: Outcome, other: Outcome) -> int:
    """The first index where two clean runs send different requests."""
    for index in range(1, len(ours.log) + 1):
        if ours.label(index) != other.label(index):
            return index
    return len(ours.log) + 1


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
        start = max(start, _departs(clean, twin))
    cells = _cells_for(config.cell, clean, paged, start)
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        base = paged if outcome.cell.paging else clean
        problems += delete_problems(config, outcome, base)
    _record(f"delete-{config.id}", outcomes, problems)
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
    return [_problem(outcome, clean, m) for m in messages]


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
    cells = [c for c in _cells_for(make, clean, paged) if c.fault not in AFTER_APPLIED]
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += read_problems(outcome, paged if outcome.cell.paging else clean)
    _record("read-" + "-".join(command).replace("/", "_"), outcomes, problems)
    if problems:
        pytest.fail(
            report(" ".join(command) + f" (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )
