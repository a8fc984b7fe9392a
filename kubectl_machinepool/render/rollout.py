"""rollout status as text (kubectl's lines, after a block per pool) and as a document."""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.diagnostics.rules import RULES
from kubectl_machinepool.model.rollout import (
    OLD,
    PAUSED,
    UNKNOWN,
    UP_TO_DATE,
    InstanceRollout,
    PoolRollout,
)
from kubectl_machinepool.render.structured import SCHEMA_VERSION
from kubectl_machinepool.render.wrap import line_width, wrap

# Old and unknown instances are listed one by one up to this many per pool; the rest counted.
LISTED_INSTANCES = 20
# A stuck rollout's error names this many of the instances that hold it; the rest counted.
NAMED_HOLDING = 5
# Without a width (piped output) text wraps here.
WIDTH = 100
INDENT = " " * 16


def _pool(rollout: PoolRollout) -> str:
    return f'MachinePool "{escape(rollout.namespace)}/{escape(rollout.name)}"'


def _target(rollout: PoolRollout) -> str:
    t = rollout.target
    parts = [escape(t.version) if t.version else "no version"]
    parts += [escape(f) for f in t.infra_fields]
    if t.bootstrap:
        parts.append(f"bootstrap {escape(t.bootstrap)}")
    if t.generation is not None:
        seen = "?" if t.observed_generation is None else str(t.observed_generation)
        parts.append(f"generation {t.generation}, observed {seen}")
    return "; ".join(parts)


def _counts(rollout: PoolRollout) -> str:
    wanted = rollout.desired if rollout.desired is not None else len(rollout.instances)
    return (
        f"{rollout.available} of {wanted} up to date and Ready; "
        f"{rollout.count(UP_TO_DATE)} up to date, {rollout.count(OLD)} old, "
        f"{rollout.count(UNKNOWN)} unknown"
    )


def block(report: Report, width: int | None = None) -> str:
    """The whole picture, once: target, counts, each instance not up to date, what it waits for."""
    room = line_width(width, WIDTH)
    lines = []

    def field(label: str, text: str) -> None:
        lines.extend(wrap(text, room, f"  {label:<13} ", INDENT))

    for rollout in report.rollouts:
        lines.append(f"{_pool(rollout)} (Cluster {escape(rollout.cluster)})")
        field("State:", _state(rollout))
        field("Target:", _target(rollout))
        field("Instances:", _counts(rollout))
        if rollout.target.counted:
            counted = ", ".join(f"{escape(v)} ({n})" for v, n in rollout.target.counted)
            field("Counted:", f"{counted}, as Cluster API last counted them (status.versions)")
        behind = [i for i in rollout.instances if not i.counts]
        for instance in behind[:LISTED_INSTANCES]:
            evidence = "; ".join(escape(e) for e in (*instance.evidence, *instance.problems))
            lines.append(f"    {instance.state:<10} {escape(instance.name)}  {evidence}")
        if len(behind) > LISTED_INSTANCES:
            lines.append(f"    ... and {len(behind) - LISTED_INSTANCES} more")
        strays = report.strays.get((rollout.namespace, rollout.name), ())
        if strays:
            field(
                "Not listed:",
                f"{', '.join(escape(n) for n in strays)}: most likely this pool's, but not in "
                "spec.providerIDList, so not counted",
            )
        if rollout.waiting_for:
            field("Waiting for:", "; ".join(escape(w) for w in rollout.waiting_for))
        if rollout.last_change is not None:
            ago = human_duration(report.now - rollout.last_change)
            field("Last change:", f"{format_time(rollout.last_change)} ({ago} ago)")
    return "\n".join(lines)


def _state(rollout: PoolRollout) -> str:
    if rollout.state == PAUSED:
        return f"paused by {escape(rollout.paused_by or '')}: not done, and not judged stuck"
    return rollout.state


def progress(rollout: PoolRollout) -> str:
    """kubectl rollout status's line for this pool now."""
    if rollout.done:
        return f"{_pool(rollout)} successfully rolled out"
    if rollout.state == PAUSED:
        return (
            f"Waiting for {_pool(rollout)} rollout: paused by {escape(rollout.paused_by or '')}; "
            f"{_where(rollout)}..."
        )
    if not rollout.nodes_read:
        return (
            f"Waiting for {_pool(rollout)} rollout: {escape(rollout.waiting_for[0])}, so no "
            "instance's version or readiness is known..."
        )
    return f"Waiting for {_pool(rollout)} rollout to finish: {_where(rollout)}..."


def _where(rollout: PoolRollout) -> str:
    wanted = rollout.desired if rollout.desired is not None else len(rollout.instances)
    old, unknown = rollout.count(OLD), rollout.count(UNKNOWN)
    where = f"{rollout.available} of {wanted} instances up to date and Ready"
    where += f", {old} old" if old else ""
    where += f", {unknown} of unknown version" if unknown else ""
    if rollout.available >= wanted and not old and not unknown and rollout.waiting_for:
        where += f"; {escape(rollout.waiting_for[0])}"  # the instances are there: what is not
    return where


def stuck(rollout: PoolRollout, report: Report) -> str:
    """The error for a pool whose rollout stopped moving, with the findings that say why."""
    since = ""
    if rollout.last_change is not None:
        since = f" for {human_duration(report.now - rollout.last_change)}"
    titles = {rule.code: rule.title for rule in RULES}
    codes = [f"{f.code} ({titles.get(f.code, f.rule)})" for f in report.about(rollout)]
    why = f"; findings: {', '.join(dict.fromkeys(codes))}" if codes else ""
    waiting = "; ".join(escape(w) for w in rollout.waiting_for)
    return (
        f"{_pool(rollout)} rollout is stuck: nothing moved{since}; waiting for {waiting}"
        f"{_held_by(rollout.holding)}{why}"
    )


def _held_by(holding: tuple[InstanceRollout, ...]) -> str:
    named = [
        f"{escape(i.name)} ({'; '.join([i.state, *(escape(p) for p in i.problems)])})"
        for i in holding[:NAMED_HOLDING]
    ]
    more = f" and {len(holding) - NAMED_HOLDING} more" if len(holding) > NAMED_HOLDING else ""
    return f"; held by {', '.join(named)}{more}" if named else ""


def document(report: Report, end: str) -> dict[str, Any]:
    return {
        "schemaVersion": SCHEMA_VERSION,
        "kind": "RolloutStatus",
        "now": format_time(report.now),
        "end": end,
        "notes": list(report.notes),
        "pools": [_pool_doc(r, report) for r in report.rollouts],
    }


def _pool_doc(rollout: PoolRollout, report: Report) -> dict[str, Any]:
    t = rollout.target
    return {
        "namespace": rollout.namespace,
        "name": rollout.name,
        "cluster": rollout.cluster,
        "state": rollout.state,
        "pausedBy": rollout.paused_by,
        "done": rollout.done,
        "stuck": rollout.stuck,
        "nodesRead": rollout.nodes_read,
        "target": {
            "version": t.version,
            "infraFields": list(t.infra_fields),
            "bootstrap": t.bootstrap,
            "statusVersions": [{"version": v, "replicas": n} for v, n in t.counted],
            "generation": t.generation,
            "observedGeneration": t.observed_generation,
            "infraGeneration": t.infra_generation,
            "infraObservedGeneration": t.infra_observed_generation,
        },
        "counts": {
            "desired": rollout.desired,
            "upToDateAndReady": rollout.available if rollout.nodes_read else None,
            "upToDate": rollout.count(UP_TO_DATE),
            "old": rollout.count(OLD),
            "unknown": rollout.count(UNKNOWN),
        },
        "instances": [
            {
                "name": i.name,
                "state": i.state,
                "evidence": list(i.evidence),
                "ready": i.ready if rollout.nodes_read else None,
                "deleting": i.deleting,
                "problems": list(i.problems),
            }
            for i in rollout.instances
        ],
        "holding": [i.name for i in rollout.holding],
        "waitingFor": list(rollout.waiting_for),
        "lastChange": format_time(rollout.last_change) if rollout.last_change else None,
        "findings": [f.code for f in report.about(rollout)],
        "unlistedNodes": list(report.strays.get((rollout.namespace, rollout.name), ())),
    }
