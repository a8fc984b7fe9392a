"""rollout undo's plan: the fields the revisions after N changed, put back as they were at
revision N, in one batch of the write engine, recorded as a revision of its own.

Revision N's state is what the history says the fields held right after it: for each field a
later revision wrote, the value before the first of those writes. Default N: the revision before
the last, so the last is undone (as kubectl's undo), and an undo of an undo goes forward again.
Each field must still hold what the last revision that wrote it left there: anything else was
changed from outside since, and is refused with the field and its value now (no --force: undo
would write over a change it cannot see the reason for). A restart's start is put back never:
its replaced instances cannot come back, and its record is the restart's own bookkeeping.

The writes are upgrade's (the infra pool paused, the MachinePool patched, the infra fields set,
unpaused: the provider rolls once) with the size in the same MachinePool patch; its checks are
upgrade's preflight for a version or image put back (skew, topology, a pool paused, deleting or
rolling) and scale's for a size (who else owns it, the autoscaler's bounds). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.kubeversion import shown
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.revisions import (
    REPLICAS,
    START,
    VERSION,
    Change,
    History,
    Revision,
    Value,
    read_history,
)
from kubectl_machinepool.model.rollout import pool_rollout
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level, nodes_unread, permission_checks, refused
from kubectl_machinepool.plans.fieldpaths import values_at
from kubectl_machinepool.plans.recording import on_pool, record_revision
from kubectl_machinepool.plans.scalechecks import scale_checks
from kubectl_machinepool.plans.upgrade import ROLLOUT_WINDOW, FieldChange, upgrade_writes
from kubectl_machinepool.plans.upgradechecks import preflight
from kubectl_machinepool.plans.writes import Access, Write


@record
class UndoRequest:
    # --to-revision N; None: the revision before the last.
    to_revision: int | None = None
    # --force: go ahead although the pool is paused or rolling, or outside the autoscaler's
    # bounds, as upgrade's and scale's --force do; never over an outside change.
    force: bool = False


@record
class PutBack:
    """A field undo writes: its value now (as the last revision to write it left it) and at
    the revision gone back to."""

    change: Change  # before: now; after: as at the revision gone back to
    # The last revision that wrote it, which an outside change is measured against.
    last: int


@record
class UndoPlan:
    pool: PoolDescription
    # The revision gone back to (None: before the oldest kept), and those undone, oldest first.
    to: int | None
    undone: tuple[Revision, ...]
    fields: tuple[PutBack, ...]
    checks: tuple[Check, ...]
    writes: tuple[Write, ...]
    planned: tuple[RawObject, ...]

    @property
    def refusals(self) -> tuple[str, ...]:
        return refused(self.checks)

    @property
    def restarts(self) -> tuple[Revision, ...]:
        """The restarts undone, whose replaced instances stay."""
        return tuple(r for r in self.undone if any(c.path == START for c in r.changes))

    @property
    def nothing_to_do(self) -> bool:
        return not self.fields and not self.refusals


def _undone(history: History, to: int | None) -> tuple[int | None, tuple[Revision, ...], str]:
    """The revision gone back to, the revisions after it, or why there is none."""
    last = history.last
    if history.unusable:
        return None, (), f"no usable revision history: {history.unusable}"
    if last is None:
        return None, (), "no revision is recorded on the pool: there is nothing to go back to"
    kept = [r.number for r in history.revisions]
    if to is None:
        return (kept[-2] if len(kept) > 1 else None), (last,), ""
    if to not in kept:
        which = "no longer kept" if to < kept[0] else "not recorded"
        return None, (), f"revision {to} is {which}: the pool keeps {', '.join(map(str, kept))}"
    return to, tuple(r for r in history.revisions if r.number > to), ""


def put_back(undone: tuple[Revision, ...]) -> tuple[PutBack, ...]:
    """Each field the undone revisions changed (a restart's start aside), from the value the
    last of them left to the one before the first."""
    found: dict[tuple[str, str, str, str], PutBack] = {}
    for revision in undone:
        for c in revision.changes:
            if c.path == START:
                continue
            key = (c.group, c.kind, c.name, c.path)
            first = found[key].change.after if key in found else c.before
            found[key] = PutBack(
                Change(c.kind, c.group, c.name, c.path, c.after, first), revision.number
            )
    return tuple(p for p in found.values() if p.change.before != p.change.after)


def _now(field: Change, pool_raw: RawObject, infra_raw: RawObject | None) -> Value | str:
    """The field's value as read; a field through a list whose items differ is their list."""
    obj = pool_raw if field.on_pool else infra_raw
    found = values_at(obj, field.path)
    if len(set(map(repr, found))) > 1:
        return repr(found)
    return found[0] if found else None


def outside_changes(
    pool: PoolDescription,
    fields: tuple[PutBack, ...],
    pool_raw: RawObject,
    infra_raw: RawObject | None,
) -> list[Check]:
    """A field not as its last revision left it, or on an object no longer the pool's."""
    ref = pool.pool.infrastructure_ref
    found = []
    for put in fields:
        field = put.change
        if not field.on_pool and (
            ref is None
            or (ref.api_group, ref.kind, ref.name) != (field.group, field.kind, field.name)
        ):
            names = f"{ref.kind} {ref.name}" if ref else "none"
            found.append(
                f"revision {put.last} changed {field.kind} {field.name}, which is no longer the "
                f"pool's infra pool (its infrastructureRef names {names}): nothing to put back on"
            )
            continue
        now = _now(field, pool_raw, infra_raw)
        if now != field.before:
            found.append(
                f"{field.where} is {_shown(now)} now, not {_shown(field.before)} as revision "
                f"{put.last} left it: changed from outside since, and undo would write over it"
            )
    return [Check(Level.REFUSED, f) for f in found]


def _shown(value: Any) -> str:
    return "unset" if value is None else shown(str(value))


def plan_undo(
    pool: PoolDescription,
    snapshot: Snapshot,
    request: UndoRequest,
    now: datetime,
    *,
    plural: str,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> UndoPlan:
    mp, ref = pool.pool, pool.pool.infrastructure_ref
    pool_raw = snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {}
    infra_raw = snapshot.find(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    to, undone, why = _undone(read_history(pool_raw), request.to_revision)
    fields = put_back(undone)
    checks = (
        [Check(Level.REFUSED, why)] if why else outside_changes(pool, fields, pool_raw, infra_raw)
    )
    if refused(tuple(checks)) or not fields:
        return UndoPlan(pool, to, undone, fields, tuple(checks), (), (pool_raw,))
    by_path = {(f.change.on_pool, f.change.path): f.change for f in fields}
    version = by_path.get((True, VERSION))
    size = by_path.get((True, REPLICAS))
    image = tuple(
        FieldChange(
            f"{c.kind} {mp.namespace}/{c.name}", c.path, c.before, c.after, f"as at {_at(to)}"
        )
        for c in (f.change for f in fields)
        if not c.on_pool
    )
    target = str(version.after) if version is not None else mp.version or ""
    writes = upgrade_writes(
        pool, target, image, pool_raw=pool_raw, infra_raw=infra_raw, plural=plural
    )
    if size is not None:
        writes = on_pool(
            writes,
            pool_raw,
            {"spec": {"replicas": size.after}},
            {"spec": {"replicas": size.before}},
            summary=f"set spec.replicas={size.after} on MachinePool {mp.namespace}/{mp.name}",
            undo_summary=f"set spec.replicas back to {size.before}",
            done="patched",
        )
    cause = "rollout undo" + (
        f" --to-revision {request.to_revision}" if request.to_revision else ""
    )
    writes, recorded = record_revision(
        writes, pool_raw, cause=cause, at=now, changes=tuple(f.change for f in fields)
    )
    if version is not None or image:
        nodes_read = nodes_unread(snapshot, mp.namespace, mp.cluster) is None
        rollout = pool_rollout(pool, snapshot, now, ROLLOUT_WINDOW, nodes_read)
        checks += preflight(pool, snapshot, rollout, target, request.force, going_back=True)
    if size is not None and isinstance(size.after, int):
        checks += scale_checks(pool, snapshot, size.after, None, request.force)
    checks += [*recorded, *permission_checks(writes, permissions(writes))]
    planned = tuple(r for r in (pool_raw, infra_raw) if r)
    return UndoPlan(pool, to, undone, fields, tuple(checks), writes, planned)


def _at(to: int | None) -> str:
    return f"revision {to}" if to is not None else "before the oldest revision kept"
