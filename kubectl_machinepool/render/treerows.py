"""describe's tree rows: what a row is, and how its headline condition and health are chosen.
treeview.py builds the tree of them; tree.py draws it."""

from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Any

from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.model.conditions import Condition
from kubectl_machinepool.model.states import ObjectState

# Where a long providerID was shortened; the printer shows it with its glyph set's ellipsis.
ELLIPSIS = "\u2026"


class Health(enum.Enum):
    OK = "ok"
    # Unknown status, or a v1beta1 condition of severity Info or Warning.
    WARNING = "warning"
    ERROR = "error"
    # Nothing says: no condition, or a group whose Nodes were not read.
    UNKNOWN = "unknown"


class RowKind(enum.Enum):
    CLUSTER = "cluster"
    POOL = "pool"
    OBJECT = "object"  # bootstrap config, infra pool, infra machine
    MACHINE = "machine"
    PROVIDER_ID = "providerID"  # an instance of a pool without Machines
    NODE = "node"
    GROUP = "group"  # healthy instances folded into one row
    CONDITION = "condition"  # one condition of the row above (--show-conditions)


@record
class Headline:
    """The condition that says most about a row: the CONDITION to SINCE columns."""

    type: str
    status: str
    reason: str
    severity: str
    # How long ago it last changed, at the description's now.
    age: timedelta | None
    message: str
    # "v1beta1" or "v1beta2" (Cluster API's two sets; Nodes' read as v1beta2), or "status" when
    # the row shows status.ready because the object has no conditions.
    condition_set: str
    health: Health


@record
class TreeRow:
    kind: RowKind
    label: str
    ready: str = ""
    available: str = ""
    phase: str = ""
    version: str = ""
    headline: Headline | None = None
    message: str = ""
    # The message reports a problem (failure, deletion, an instance's problems).
    problem: bool = False
    # Codes of the findings that concern this row, sorted, each once.
    codes: tuple[str, ...] = ()
    health: Health = Health.UNKNOWN
    children: tuple[TreeRow, ...] = ()


@record
class TreeModel:
    """One root row per Cluster, and the findings listed below its tree."""

    roots: tuple[tuple[TreeRow, tuple[Finding, ...]], ...]


# -- headlines --------------------------------------------------------------------------------


def condition_health(cond: Condition) -> Health:
    if cond.good:
        return Health.OK
    if cond.status == "Unknown" or cond.severity in ("Info", "Warning"):
        return Health.WARNING
    return Health.ERROR


def headline(cond: Condition, now: datetime, condition_set: str | None = None) -> Headline:
    return Headline(
        type=cond.type,
        status=cond.status,
        reason=cond.reason,
        severity=cond.severity,
        age=now - cond.since if cond.since else None,
        message=cond.message,
        condition_set=condition_set or cond.generation,
        health=condition_health(cond),
    )


# The condition that says most about each kind; others fall back to Ready, then Available.
_HEADLINE = {"Cluster": ("Available", "Ready"), "Machine": ("Ready",), "Node": ("Ready",)}


def _important(state: ObjectState) -> Condition | None:
    if state.deleting_since is not None and state.conditions.get("Deleting"):
        return state.conditions.get("Deleting")
    found = state.conditions.first(*_HEADLINE.get(state.kind, ("Ready", "Available")))
    if found is not None:
        return found
    # Anything unhealthy is more telling than nothing.
    return next((c for c in state.conditions.all if not c.good), None)


def object_headline(state: ObjectState, now: datetime) -> Headline | None:
    cond = _important(state)
    if cond is not None:
        return headline(cond, now)
    # Objects without conditions (e.g. AzureASOManagedMachinePool) still say status.ready.
    if state.ready is None:
        return None
    return headline(Condition("status.ready", "True" if state.ready else "False"), now, "status")


def health_of(head: Headline | None, problem: bool) -> Health:
    if problem:
        return Health.ERROR
    return head.health if head is not None else Health.UNKNOWN


def make_row(
    kind: RowKind,
    label: str,
    head: Headline | None = None,
    *,
    message: str | None = None,
    problem: bool = False,
    **cells: Any,
) -> TreeRow:
    """A row whose message is its headline's unless told otherwise; health follows both."""
    if message is None:
        message = head.message if head is not None else ""
    health = health_of(head, problem)
    return TreeRow(
        kind, label, headline=head, message=message, problem=problem, health=health, **cells
    )
