"""What every write command owes under the fault matrix, and the cells that test it.

A write command's contract, object by object against what the namespace holds after the run
(0: every planned write took effect; 1 and 3: the namespace is as before, "nothing was written"
or "taken back"; 5: each object left changed is named, with a hint; 130 after Ctrl-C: what is
left is named). The command-specific part, which fields a plan may change and what "took
effect" means, is passed in by each matrix test; the cells and the report are shared.
"""

from __future__ import annotations

import copy
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .faultmatrix import Cell, Outcome, changes_state
from .faultproxy import Fault, Seen
from .faultstate import ObjectKey

# A stalled request costs one second; a run a busy machine spoils is run again with more.
REQUEST_TIMEOUT = "1s"
# Stalls leave a worker waiting: more workers than cores keep the cores busy meanwhile.
WORKERS = int(os.environ.get("FAULT_MATRIX_WORKERS", "4"))
FULL = os.environ.get("FAULT_MATRIX_FULL", "") not in ("", "0")
# When set, every cell's outcome is written there as JSON lines (for a report).
RESULTS = os.environ.get("FAULT_MATRIX_RESULTS")
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
INTERRUPTED = 130

# The fields a plan may change in an object; None: the plan does not touch it.
PlannedFields = Callable[[ObjectKey], list[tuple[str, ...]] | None]
# The plan step a write request is, and the words stderr must name it with.
StepOf = Callable[[Seen, str], tuple[str, list[str]] | None]


@dataclass(frozen=True)
class Problem:
    fault: str
    index: int
    request: str
    code: int
    message: str
    stderr: str


def problem(outcome: Outcome, clean: Outcome, message: str) -> Problem:
    index = outcome.cell.index or 0
    errors = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    tail = outcome.err.strip().splitlines()[-1:] or [""]
    stderr = errors[0] if errors else tail[0]
    fault = outcome.cell.fault.value if outcome.cell.fault else "none"
    return Problem(
        fault, index, clean.label(index) if index else "-", outcome.code,
        outcome.generic(message), outcome.generic(stderr)[:300],
    )  # fmt: skip


def remove(obj: dict[str, Any] | None, paths: list[tuple[str, ...]]) -> dict[str, Any] | None:
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


def now(outcome: Outcome, key: ObjectKey) -> dict[str, Any] | None:
    """The object as the run left it."""
    if key in outcome.changed:
        return outcome.changed[key][1]
    return outcome.before.get(key)


def unplanned(planned: PlannedFields, outcome: Outcome) -> list[str]:
    found = []
    for key, (before, after) in outcome.changed.items():
        fields = planned(key)
        if fields is None:
            found.append(f"unplanned change of {key.display}")
        elif remove(before, fields) != remove(after, fields):
            found.append(f"{key.display} changed outside the planned fields")
    return found


def exit_problems(
    outcome: Outcome, codes: set[int], not_applied: Callable[[Outcome], list[str]]
) -> list[str]:
    """What the exit code promises about the namespace, checked against it."""
    code, err, messages = outcome.code, outcome.err, []
    if outcome.cell.interrupt:
        return interrupt_problems(outcome)
    if code not in codes:
        messages.append(f"exit {code} is not a documented exit code of the command")
    if code == 0:
        messages += not_applied(outcome)
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


def interrupt_problems(outcome: Outcome) -> list[str]:
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


def step_problems(step_of: StepOf, outcome: Outcome) -> list[str]:
    fired = outcome.fired
    step = step_of(fired, outcome.namespace) if fired is not None else None
    if outcome.code != 0 and step is not None and not all(w in outcome.err for w in step[1]):
        return [f"the failed {step[0]} step is not named in stderr"]
    return []


def common_problems(outcome: Outcome) -> list[str]:
    """What no run may show, whatever the command."""
    messages = []
    if "Traceback" in outcome.err or "Traceback" in outcome.out:
        messages.append("a Python traceback")
    if outcome.cell.fault and outcome.fired is None:
        messages.append("the faulted request was not sent, unlike in the clean run")
    return messages + [f"proxy: {e}" for e in outcome.proxy_errors]


def write_problems(
    outcome: Outcome,
    *,
    planned: PlannedFields,
    codes: set[int],
    not_applied: Callable[[Outcome], list[str]],
    step_of: StepOf,
) -> list[str]:
    """What a write command's run must hold, whatever the command: no traceback, only planned
    fields changed, the exit code's promise, the failed step named."""
    messages = common_problems(outcome)
    messages += unplanned(planned, outcome)
    messages += exit_problems(outcome, codes, not_applied)
    return messages + step_problems(step_of, outcome)


def patch_body(seen: Seen) -> dict[str, Any]:
    try:
        body = json.loads(seen.body or b"{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


# -- cells and reports -----------------------------------------------------------------------------


def cells_for(make: Any, clean: Outcome, paged: Outcome, start: int = 1) -> list[Cell]:
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


def departs(ours: Outcome, other: Outcome) -> int:
    """The first index from which two clean runs no longer send the same requests. Reads that
    go out side by side arrive in any order, so the runs are compared as multisets: before the
    index, each sent every label as often as the other, and a cell (a label and the how-manieth)
    names the same request in both."""
    left: Counter[str] = Counter()
    same = 0
    for index in range(1, min(len(ours.log), len(other.log)) + 1):
        left[ours.label(index)] += 1
        left[other.label(index)] -= 1
        if not any(left.values()):
            same = index
    return same + 1


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


def record(name: str, outcomes: list[Outcome], problems: list[Problem]) -> None:
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
