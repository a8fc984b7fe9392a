"""rollout pause and resume: cluster.x-k8s.io/paused on a MachinePool and its infra pool.

Core stops reconciling a paused MachinePool, and the provider a paused infra pool
(annotations.IsPaused), so a rollout stops where it is. pause sets the annotation where it is
missing and records on the MachinePool which objects it set (RECORD, the tool's own annotation);
resume removes the annotation from exactly those, and the record, so a pause someone else made
is never lifted by this tool. A topology-owned or deleting pool is refused a pause (resume only
warns: it lifts what this tool set). Pure: a pool and its objects in, a plan out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.pauserecord import RECORD, recorded
from kubectl_machinepool.model.pool import PAUSED_ANNOTATION
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level, permission_checks, refused
from kubectl_machinepool.plans.writes import Access, ObjectRef, Write, object_ref


@record
class PausePlan:
    pool: PoolDescription
    pausing: bool  # False: resume
    checks: tuple[Check, ...]
    writes: tuple[Write, ...]
    planned: tuple[RawObject, ...]

    @property
    def refusals(self) -> tuple[str, ...]:
        return refused(self.checks)

    @property
    def nothing_to_do(self) -> bool:
        return not self.writes and not self.refusals


@record
class _Objects:
    mp: RawObject
    infra: RawObject | None
    infra_plural: str


def _entry(obj: RawObject) -> str:
    return f"{text(obj.get('kind'))}/{text(dig(obj, 'metadata', 'name'))}"


def _paused(obj: RawObject | None) -> bool:
    return PAUSED_ANNOTATION in mapping(dig(obj, "metadata", "annotations"))


def _state(pool: PoolDescription, snapshot: Snapshot, pausing: bool) -> list[Check]:
    """A topology-owned or deleting pool: pause refuses; resume warns and goes ahead, since
    lifting its own pause is how a deletion held by it proceeds."""
    mp = pool.pool
    found = []
    if mp.topology_owned:
        found.append(
            f"the topology controller owns this pool: pause and resume it through Cluster "
            f"{mp.namespace}/{mp.cluster} (spec.paused pauses every object of the Cluster)"
        )
    cluster = snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster)
    deleting = [f"MachinePool {mp.namespace}/{mp.name}"] if mp.deleting_since else []
    if dig(cluster, "metadata", "deletionTimestamp"):
        deleting.append(f"Cluster {mp.namespace}/{mp.cluster}")
    if deleting:
        found.append(
            f"{', '.join(deleting)} is being deleted"
            + (": a pause would only hold the deletion" if pausing else ": it goes on once resumed")
        )
    checks = [Check(Level.REFUSED if pausing else Level.WARNING, f) for f in found]
    if pool.infra_unread:
        checks.append(Check(Level.REFUSED, "the infra pool could not be read"))
    return checks


def _objects(pool: PoolDescription, snapshot: Snapshot) -> tuple[RawObject, RawObject | None]:
    mp, ref = pool.pool, pool.pool.infrastructure_ref
    raw = snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {}
    infra = snapshot.find(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    return raw, infra


def _set_paused(ref: ObjectRef, on: bool, why: str) -> Write:
    value, back = ("", None) if on else (None, "")
    verb = (
        f"annotate {ref.display} {PAUSED_ANNOTATION}"
        if on
        else (f"remove {PAUSED_ANNOTATION} from {ref.display}")
    )
    return Write(
        "patch",
        ref,
        f"{verb}: {why}",
        {"metadata": {"annotations": {PAUSED_ANNOTATION: value}}},
        undo={"metadata": {"annotations": {PAUSED_ANNOTATION: back}}},
        undo_summary=f"{'removed' if on else 'set'} the {PAUSED_ANNOTATION} annotation again",
        done="annotated",
    )


def _record_write(ref: ObjectRef, mp: RawObject, pause: bool | None, record: list[str]) -> Write:
    """The MachinePool's own pause (None: left as it is) and the record, in one patch."""
    values: dict[str, Any] = {RECORD: ",".join(record) or None}
    before = recorded(mp)
    back: dict[str, Any] = {RECORD: ",".join(before) or None}
    parts = []
    if pause is not None:
        values[PAUSED_ANNOTATION] = "" if pause else None
        back[PAUSED_ANNOTATION] = None if pause else ""
        parts.append(f"{'set' if pause else 'remove'} {PAUSED_ANNOTATION}")
    parts.append(f"set {RECORD}={values[RECORD]}" if record else f"remove {RECORD}")
    return Write(
        "patch",
        ref,
        f"{' and '.join(parts)} on {ref.display}",
        {"metadata": {"annotations": values}},
        undo={"metadata": {"annotations": back}},
        undo_summary="put the annotations back",
        done="annotated",
    )


def plan_pause(
    pool: PoolDescription,
    snapshot: Snapshot,
    *,
    plural: str,
    caveat: str | None,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> PausePlan:
    """Pause the infra pool and the MachinePool where they are not paused, recording which."""
    mp, infra = _objects(pool, snapshot)
    checks = _state(pool, snapshot, pausing=True)
    writes: list[Write] = []
    setting = []
    if infra is not None and not _paused(infra):
        writes.append(_set_paused(object_ref(infra, plural), True, "the provider stops"))
        setting.append(_entry(infra))
    if not _paused(mp):
        setting.append(_entry(mp))
    if setting:
        pause = True if _entry(mp) in setting else None
        ref = object_ref(mp, "machinepools")
        writes.append(_record_write(ref, mp, pause, [*recorded(mp), *setting]))
    already = [_entry(o) for o in (mp, infra) if o is not None and _paused(o)]
    if already:
        checks.append(Check(Level.OK, f"already paused: {', '.join(already)}"))
    if caveat and writes:
        # The records say "nothing: ..." where the pause stops everything: no warning then.
        level = Level.OK if caveat.startswith("nothing") else Level.WARNING
        kind = pool.infra.kind if pool.infra else "the infra pool"
        checks.append(Check(level, f"what a pause leaves running ({kind}): {caveat}"))
    checks += permission_checks(tuple(writes), permissions(tuple(writes)))
    planned = tuple(o for o in (mp, infra) if o)
    return PausePlan(pool, True, tuple(checks), tuple(writes), planned)


def plan_resume(
    pool: PoolDescription,
    snapshot: Snapshot,
    *,
    plural: str,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> PausePlan:
    """Unpause exactly what the record names, then drop the record; a pause the record does not
    name is someone else's, and stays."""
    mp, infra = _objects(pool, snapshot)
    checks = _state(pool, snapshot, pausing=False)
    record = recorded(mp)
    writes: list[Write] = []
    if infra is not None and _entry(infra) in record and _paused(infra):
        writes.append(_set_paused(object_ref(infra, plural), False, "the provider acts again"))
    ours = [e for e in record if e in (_entry(mp), *([_entry(infra)] if infra else []))]
    for entry in record:
        if entry not in ours:
            checks.append(
                Check(Level.WARNING, f"{entry} is recorded as paused but is not this pool's now")
            )
    others = [_entry(o) for o in (mp, infra) if o is not None and _paused(o)]
    others = [e for e in others if e not in record]
    if others:
        checks.append(
            Check(Level.WARNING, f"paused by someone else, left as it is: {', '.join(others)}")
        )
    if record:
        unpause = False if _entry(mp) in record and _paused(mp) else None
        writes.append(_record_write(object_ref(mp, "machinepools"), mp, unpause, []))
    elif not others:
        checks.append(Check(Level.OK, "not paused"))
    checks += permission_checks(tuple(writes), permissions(tuple(writes)))
    planned = tuple(o for o in (mp, infra) if o)
    return PausePlan(pool, False, tuple(checks), tuple(writes), planned)
