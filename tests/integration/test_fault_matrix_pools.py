"""The whole-pool writes with one fault at each request, against the real server, in both API
generations: upgrade and scale.

The capd pool (MachinePool and DockerMachinePool at v1.34.0, kindest/node:v1.34.0) goes to
v1.34.1: pause the DockerMachinePool, set the MachinePool's version, set its customImage,
unpause. Every fault kind at every request of the clean run (support.faultjudge.cells_for) is
held to the write contract, and to what is upgrade's own: the version and the image are never
left half-paired, nor the infra pool paused, without exit 5 (or the Ctrl-C report) naming the
objects; exit 0 means both fields are new and the pool is unpaused. rollout undo of that upgrade
(capd-upgraded: v1.34.0, recorded as from v1.33.4) makes the same four writes back to v1.33.4
and is held to the same contract, in v1beta2 from its access review on (its reads are
upgrade's). Both, and scale, leave a new revision exactly when they leave its change
(support.revisionjudge), or name the MachinePool.

scale (2 to 3 replicas, one write to /scale), rollout pause (the DockerMachinePool, then the
MachinePool with the record) and rollout resume (of a pool this tool paused, in the reverse
order) are held to the write contract field by field. Their reads are upgrade's
(app/planning.py), faulted there: their cells start at the access review unless
FAULT_MATRIX_FULL=1.

scale and rollout pause of two pools in one batch (capd-two-pools: dev-mp-0 and dev-mp-1 in
one Cluster) are held to the same contract, pool by pool: a fault at the second pool's write
finds the first's made. Their cells start at the batch's first write (before it, a batch asks
and reads what one pool's run does, once per pool: the cells above fault those), and run in
v1beta2 only: the batch is the same code in both generations, and the single-pool
configurations cover what differs between them.

fix of the pool this tool paused (capd-paused: its one step is rollout resume, through resume's
own plan and the write engine) is held to resume's contract, from its first write on (before
it, fix reads what diagnose reads, then what resume reads, each faulted in its own cells); in
v1beta2 only, as it is resume's code in both generations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from support.faultjudge import (
    CAPI,
    FULL,
    REQUEST_TIMEOUT,
    Problem,
    cells_for,
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
from support.revisionjudge import revision_problems

pytestmark = pytest.mark.xdist_group("fault-matrix")

POOL = "dev-mp-0"
INFRA = "infrastructure.cluster.x-k8s.io"
PAUSED = "cluster.x-k8s.io/paused"
RECORD = "kubectl-machinepool/paused"
OLD, NEW = "v1.34.0", "v1.34.1"
REVISIONS = "kubectl-machinepool/revisions"
# upgrade, and rollout undo of one: scenario, command line, the version it ends at.
ROLLS = {
    "upgrade": ("capd", ("upgrade", POOL, "--version", NEW), NEW),
    "undo": ("capd-upgraded", ("rollout", "undo", POOL), "v1.33.4"),
}
VERSION = ("spec", "template", "spec", "version")
IMAGE = ("spec", "template", "customImage")
EXIT_CODES = {0, 1, 3, 5}


def _cell(generation: str, roll: str = "upgrade", **fault: Any) -> Cell:
    # Interrupted: no request timeout, so Ctrl-C and not a timeout ends the held request.
    timeout = "0" if fault.get("interrupt") else REQUEST_TIMEOUT
    scenario, command, _ = ROLLS[roll]
    argv = (*command, "--yes", "--no-wait", "--request-timeout", timeout)
    return Cell(generation, scenario, argv, **fault)


def _keys(ns: str) -> tuple[ObjectKey, ObjectKey]:
    return ObjectKey("MachinePool", CAPI, ns, POOL), ObjectKey("DockerMachinePool", INFRA, ns, POOL)


def _planned(key: ObjectKey) -> list[tuple[str, ...]] | None:
    if key.name != POOL:
        return None
    if key.kind == "MachinePool" and key.group == CAPI:
        return [VERSION, ("metadata", "annotations", REVISIONS)]
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


def _not_applied(outcome: Outcome, target: str) -> list[str]:
    version, image, paused = _state(outcome)
    missing = []
    if version != target:
        missing.append(f"exit 0 but the MachinePool's version is {version!r}, not {target}")
    if image != f"kindest/node:{target}":
        missing.append(f"exit 0 but the customImage is {image!r}")
    if paused:
        missing.append("exit 0 but the DockerMachinePool is left paused")
    return missing


def _pairing_problems(outcome: Outcome, target: str) -> list[str]:
    """Half-paired, or paused: only with the objects named (exit 5, or the Ctrl-C report)."""
    version, image, paused = _state(outcome)
    half = (version == target) != (image == f"kindest/node:{target}")
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


def _access_review(seen: Seen) -> bool:
    return seen.path.endswith("accessreviews")


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


ROLLED = {
    ("MachinePool", CAPI): [".".join(VERSION)],
    ("DockerMachinePool", INFRA): [".".join(IMAGE)],
}


def upgrade_problems(outcome: Outcome, clean: Outcome, roll: str = "upgrade") -> list[Problem]:
    target = ROLLS[roll][2]
    messages = write_problems(
        outcome,
        planned=_planned,
        codes=EXIT_CODES,
        not_applied=lambda run: _not_applied(run, target),
        step_of=_step,
    )
    messages += _pairing_problems(outcome, target)
    messages += revision_problems(outcome, (POOL,), ROLLED)
    return [problem(outcome, clean, m) for m in messages]


@pytest.mark.parametrize(
    ("roll", "generation"),
    [("upgrade", "v1beta2"), ("upgrade", "v1beta1"), ("undo", "v1beta2")],
    ids=["v1beta2", "v1beta1", "undo-v1beta2"],
)
def test_upgrade_keeps_its_word_under_every_fault(
    matrix: Matrix, roll: str, generation: str
) -> None:
    clean, paged = matrix.run([_cell(generation, roll), _cell(generation, roll, paging=1)])
    for run in (clean, paged):
        assert (run.code, upgrade_problems(run, clean, roll)) == (0, []), run.err
    writes = [s.method for s in clean.log if s.method == "PATCH"]
    assert writes == ["PATCH"] * 4, "pause, version, image, unpause: " + "; ".join(
        clean.label(i) for i in range(1, len(clean.log) + 1)
    )

    def make(**fault: Any) -> Cell:
        return _cell(generation, roll, **fault)

    # undo reads what upgrade reads (app/planning.read_pools), faulted in upgrade's cells.
    start = (
        1 if FULL or roll == "upgrade" else next(s.index for s in clean.log if _access_review(s))
    )
    cells = cells_for(make, clean, paged, start)
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += upgrade_problems(outcome, paged if outcome.cell.paging else clean, roll)
    record(f"{roll}-{generation}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"{roll} {generation} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )


# -- scale, rollout pause, rollout resume ---------------------------------------------------------


@dataclass(frozen=True)
class PoolWrite:
    """A whole-pool write of few requests: what it runs on, what it may change, what exit 0
    must leave, and which request is which step; of one pool, or of several in one batch."""

    name: str
    scenario: str
    argv: tuple[str, ...]
    # (kind, group) -> the fields the command may change in each pool's object of that kind.
    fields: dict[tuple[str, str], list[tuple[str, ...]]]
    # (kind, group, path) -> the value exit 0 must leave in each pool's object (None: absent;
    # "{pool}" in a string stands for the pool's name).
    applied: dict[tuple[str, str, tuple[str, ...]], Any]
    # The requests that are its steps, per pool: (method, plural, subresource).
    steps: tuple[tuple[str, str, str], ...]
    pools: tuple[str, ...] = (POOL,)
    generations: tuple[str, ...] = ("v1beta2", "v1beta1")
    # Its reads are other commands' (fix: diagnose's, then the step's), faulted in their cells:
    # faulted from its first write on, its paged reads left to theirs.
    from_writes: bool = False
    # The dotted fields its revision records, by kind and group (none: it records none).
    recorded: dict[tuple[str, str], list[str]] | None = None

    def cell(self, generation: str, **fault: Any) -> Cell:
        timeout = "0" if fault.get("interrupt") else REQUEST_TIMEOUT
        argv = (*self.argv, "--yes", "--request-timeout", timeout)
        return Cell(generation, self.scenario, argv, **fault)

    def planned(self, key: ObjectKey) -> list[tuple[str, ...]] | None:
        return self.fields.get((key.kind, key.group)) if key.name in self.pools else None

    def not_applied(self, outcome: Outcome) -> list[str]:
        missing = []
        for pool in self.pools:
            for (kind, group, path), value in self.applied.items():
                wanted = value.format(pool=pool) if isinstance(value, str) else value
                found = _get(now(outcome, ObjectKey(kind, group, outcome.namespace, pool)), path)
                if found != wanted:
                    missing.append(
                        f"exit 0 but {kind} {pool} {'.'.join(path)} is {found!r}, not {wanted!r}"
                    )
        return missing

    def step(self, seen: Seen, ns: str) -> tuple[str, list[str]] | None:
        for pool in self.pools:
            for method, plural, sub in self.steps:
                path = f"/namespaces/{ns}/{plural}/{pool}" + (f"/{sub}" if sub else "")
                if seen.method == method and seen.path.endswith(path):
                    kind = "MachinePool" if plural == "machinepools" else "DockerMachinePool"
                    return f"{method} {plural}", [f"{kind} {ns}/{pool}"]
        return None

    def problems(self, outcome: Outcome, clean: Outcome) -> list[Problem]:
        messages = write_problems(
            outcome,
            planned=self.planned,
            codes=EXIT_CODES,
            not_applied=self.not_applied,
            step_of=self.step,
        )
        if self.recorded is not None:
            messages += revision_problems(outcome, self.pools, self.recorded)
        return [problem(outcome, clean, m) for m in messages]


MP, DMP = ("MachinePool", CAPI), ("DockerMachinePool", INFRA)
ANNOTATION = ("metadata", "annotations")
# scale: its revision recorded in a patch of the pool, then /scale.
SIZE = {MP: [("spec", "replicas"), (*ANNOTATION, REVISIONS)]}
SCALE_STEPS = (("PATCH", "machinepools", ""), ("PUT", "machinepools", "scale"))
RESIZED = {MP: ["spec.replicas"]}
RECORDED = "DockerMachinePool/{pool},MachinePool/{pool}"
PAUSE_FIELDS = {MP: [(*ANNOTATION, PAUSED), (*ANNOTATION, RECORD)], DMP: [(*ANNOTATION, PAUSED)]}
PATCHES = (("PATCH", "dockermachinepools", ""), ("PATCH", "machinepools", ""))
SCALED = {(*MP, ("spec", "replicas")): 3}
PAUSED_BY_US = {(*MP, (*ANNOTATION, PAUSED)): "", (*MP, (*ANNOTATION, RECORD)): RECORDED,
                (*DMP, (*ANNOTATION, PAUSED)): ""}  # fmt: skip
RESUMED = {(*MP, (*ANNOTATION, PAUSED)): None, (*MP, (*ANNOTATION, RECORD)): None,
           (*DMP, (*ANNOTATION, PAUSED)): None}  # fmt: skip
# Two pools in one batch: their cells start at the batch's first write.
TWO = ("dev-mp-0", "dev-mp-1")
POOL_WRITES = [
    PoolWrite(
        "scale", "capd", ("scale", POOL, "--replicas", "3"), SIZE, SCALED, SCALE_STEPS,
        recorded=RESIZED,
    ),
    PoolWrite("pause", "capd", ("rollout", "pause", POOL), PAUSE_FIELDS, PAUSED_BY_US, PATCHES),
    PoolWrite("resume", "capd-paused", ("rollout", "resume", POOL), PAUSE_FIELDS, RESUMED, PATCHES),
    PoolWrite(
        "fix-resume", "capd-paused", ("fix", POOL), PAUSE_FIELDS, RESUMED, PATCHES,
        generations=("v1beta2",), from_writes=True,
    ),
    PoolWrite(
        "scale-2-pools", "capd-two-pools", ("scale", *TWO, "--replicas", "3"), SIZE, SCALED,
        SCALE_STEPS, pools=TWO, generations=("v1beta2",), recorded=RESIZED,
    ),
    PoolWrite(
        "pause-2-pools", "capd-two-pools", ("rollout", "pause", *TWO), PAUSE_FIELDS,
        PAUSED_BY_US, PATCHES, pools=TWO, generations=("v1beta2",),
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("write", "generation"),
    [pytest.param(w, g, id=f"{w.name}-{g}") for w in POOL_WRITES for g in w.generations],
)
def test_pool_writes_keep_their_word_under_every_fault(
    matrix: Matrix, write: PoolWrite, generation: str
) -> None:
    clean, paged = matrix.run([write.cell(generation), write.cell(generation, paging=1)])
    for run in (clean, paged):
        assert (run.code, write.problems(run, clean)) == (0, []), run.err
    changing = [s for s in clean.log if s.method in ("PUT", "PATCH")]
    assert len(changing) == len(write.steps) * len(write.pools), [str(s) for s in changing]

    def make(**fault: Any) -> Cell:
        return write.cell(generation, **fault)

    # Up to its access review each reads what upgrade reads (app/planning.read_pools), and
    # upgrade's matrix faults those requests; up to its first write, a batch of pools asks and
    # reads again what one pool's does, for each pool, and the single pool's cells fault those.
    # FAULT_MATRIX_FULL=1 faults them here too.
    first = changes_state if len(write.pools) > 1 or write.from_writes else _access_review
    start = 1 if FULL else next(s.index for s in clean.log if first(s))
    cells = cells_for(make, clean, paged, start)
    if write.from_writes and not FULL:
        cells = [c for c in cells if not c.paging]
    outcomes = matrix.run(cells)
    problems = []
    for outcome in outcomes:
        problems += write.problems(outcome, paged if outcome.cell.paging else clean)
    record(f"{write.name}-{generation}", outcomes, problems)
    if problems:
        pytest.fail(
            report(f"{write.name} {generation} (K={len(clean.log)})", problems, len(cells)),
            pytrace=False,
        )
