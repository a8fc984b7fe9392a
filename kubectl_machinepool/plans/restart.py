"""rollout restart: replace every instance a pool had when the restart began, through
delete-machine's replace path, a few at a time.

Only a pool whose provider replaces a single instance (delete-machine's verdict "supported")
can be restarted this way; any other is refused with what does roll its provider (the
registry's operations). The start is recorded on the MachinePool (STARTED, the tool's own
annotation, RFC 3339): an instance whose Machine was created before it is old. The start is the
API server's time, never the client's: creationTimestamps are stamped by the server's clock, and
a client's running ahead would count every replacement as old, one running behind would leave
young instances as they are. So a recorded start later than the server's time is refused (no
replacement could ever be new), and a record that names no time is said, then written over. Run
again, the same restart goes on with the old instances left; once none is left, the record is
removed. Pure: a pool and its objects in, a plan out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.restartrecord import (
    STARTED,
    RestartRecord,
    made_before,
    read_record,
)
from kubectl_machinepool.model.revisions import START
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import (
    Check,
    Level,
    nodes_unread,
    permission_checks,
    refused,
)
from kubectl_machinepool.plans.recording import pool_change, record_revision
from kubectl_machinepool.plans.writes import Access, Write, object_ref
from kubectl_machinepool.providers.deletion import Verdict
from kubectl_machinepool.providers.registry import infra_pool_of


@record
class RestartRequest:
    max_unavailable: int = 1
    drain_timeout: timedelta | None = None


@record
class RestartPlan:
    pool: PoolDescription
    started: datetime
    # The restart recorded on the pool goes on (False: it begins now).
    resumed: bool
    # The Machines of the instances to replace, oldest first.
    old: tuple[str, ...]
    checks: tuple[Check, ...]
    # Recording the start, when it begins now.
    writes: tuple[Write, ...]
    planned: tuple[RawObject, ...]

    @property
    def refusals(self) -> tuple[str, ...]:
        return refused(self.checks)

    @property
    def nothing_to_do(self) -> bool:
        return not self.old and not self.resumed and not self.refusals


def _refusals(pool: PoolDescription, snapshot: Snapshot) -> list[Check]:
    mp = pool.pool
    found = []
    verdict = pool.deletion
    if verdict.verdict is not Verdict.SUPPORTED:
        provider = infra_pool_of(pool.infra)
        rolls = f"; what rolls it: {provider.operations.rolls}" if provider else ""
        found.append(
            "a restart replaces instances one at a time, and single instances of this pool "
            f"cannot be replaced: {verdict.reason}{rolls}"
        )
    if pool.paused_by:
        found.append(
            f"the pool is paused ({pool.paused_by}): no replacement would be made; resume it first"
        )
    cluster = snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster)
    if mp.deleting_since or dig(cluster, "metadata", "deletionTimestamp"):
        found.append("the pool or its Cluster is being deleted")
    if not snapshot.was_read(CAPI_GROUP, "Machine"):
        found.append("the pool's Machines could not be read")
    return [Check(Level.REFUSED, f) for f in found]


def _record_checks(record: RestartRecord, server_now: datetime) -> list[Check]:
    if record.unparseable:
        return [
            Check(
                Level.WARNING,
                f"the {STARTED} annotation is {record.shown}, which is no RFC 3339 time: read "
                "as no restart recorded; a restart begun now writes its start over it",
            )
        ]
    if record.started is not None and record.started > server_now:
        return [
            Check(
                Level.REFUSED,
                f"the {STARTED} annotation is {record.shown}, later than the API server's time "
                f"{format_time(server_now)}: every replacement would count as old; remove the "
                "annotation to begin afresh",
            )
        ]
    return []


def _record(mp: RawObject, started: datetime, before: str | None) -> Write:
    ref = object_ref(mp, "machinepools")
    value = format_time(started)
    undo = (
        f"removed the {STARTED} annotation"
        if before is None
        else f"set the {STARTED} annotation back to what it was"
    )
    return Write(
        "patch",
        ref,
        f"annotate {ref.display} {STARTED}={value}: the restart's instances are those "
        "created before it",
        {"metadata": {"annotations": {STARTED: value}}},
        undo={"metadata": {"annotations": {STARTED: before}}},
        undo_summary=undo,
        done="annotated",
    )


def finished(mp: RawObject) -> Write:
    """The record removed once no old instance is left: the next restart begins afresh."""
    ref = object_ref(mp, "machinepools")
    before = mapping(dig(mp, "metadata", "annotations")).get(STARTED)
    return Write(
        "patch",
        ref,
        f"remove {STARTED} from {ref.display}: every instance is new",
        {"metadata": {"annotations": {STARTED: None}}},
        undo={"metadata": {"annotations": {STARTED: before}}},
        undo_summary=f"set the {STARTED} annotation again",
        done="annotated",
    )


def plan_restart(
    pool: PoolDescription,
    snapshot: Snapshot,
    request: RestartRequest,
    server_now: datetime,
    *,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> RestartPlan:
    """Go on with the restart recorded on the pool, or begin one at server_now: the API
    server's time as its answers to the plan's reads said (a dump's: as at its capture)."""
    mp = pool.pool
    raw = snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {}
    record = read_record(raw)
    checks = _refusals(pool, snapshot) + _record_checks(record, server_now)
    begun = record.started
    started = begun or server_now
    old = made_before(pool.instances, started)
    writes: tuple[Write, ...] = ()
    if begun is None and old and not refused(tuple(checks)):
        # A start that names no time is written over, and recorded as none.
        change = pool_change(raw, START, None, format_time(started))
        writes, recorded = record_revision(
            (_record(raw, started, record.value),),
            raw,
            cause="rollout restart",
            at=started,
            changes=(change,),
        )
        checks += [*recorded, *permission_checks(writes, permissions(writes))]
    elif begun is not None:
        # Removing the record once every instance is new is a write too: asked now, not after
        # the replacements.
        last = (finished(raw),)
        checks += permission_checks(last, permissions(last))
    unavailable = [i for i in pool.instances if i.node is None or i.node.ready is not True]
    # Nodes not read say nothing of readiness: the plan refuses for them (Rereads).
    if unavailable and old and nodes_unread(snapshot, mp.namespace, mp.cluster) is None:
        checks.append(
            Check(
                Level.WARNING,
                f"{len(unavailable)} instance(s) have no Ready Node now; a replacement starts "
                f"only while fewer than {request.max_unavailable} are unavailable",
            )
        )
    return RestartPlan(
        pool,
        started,
        begun is not None,
        tuple(i.machine.object.name for i in old if i.machine is not None),
        tuple(checks),
        writes,
        (raw,),
    )
