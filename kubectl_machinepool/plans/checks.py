"""A write plan's checks, each a line the user reads before confirming: ok, a warning, or a
refusal that stops the plan with nothing written. Shared by every write's plan, as are the check
of the user's permissions for each write and what a whole-pool write could not read: a judgement
on what was not read says so instead of concluding, and what the command reads again after its
first write to judge whether to go on (Rereads), found unreadable now, is a refusal rather than
a stop half way."""

from __future__ import annotations

from enum import IntEnum

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.writes import Access, Write

# How a permission check the server did not answer begins.
UNANSWERED = "could not check whether you may "


class Level(IntEnum):
    OK = 0
    WARNING = 1
    REFUSED = 2


@record
class Check:
    level: Level
    message: str


def refused(checks: tuple[Check, ...]) -> tuple[str, ...]:
    """What a plan refuses for: its checks at level REFUSED."""
    return tuple(c.message for c in checks if c.level is Level.REFUSED)


def permission_checks(
    writes: tuple[Write, ...], permissions: dict[Access, bool | None]
) -> list[Check]:
    """One line per write: whether the user may make it (SelfSubjectAccessReview)."""
    return [access_check(w.access, permissions.get(w.access)) for w in writes]


def access_check(access: Access, allowed: bool | None, needed_for: str = "") -> Check:
    """Whether the user may do this (None: the server could not be asked), and what for."""
    sub = f"/{access.subresource}" if access.subresource else ""
    what = f"{access.verb} {access.resource}{sub}.{access.group} in namespace {access.namespace}"
    what += f": {needed_for}" if needed_for else ""
    if allowed is False:
        return Check(Level.REFUSED, f"you may not {what}")
    if allowed is None:
        return Check(Level.WARNING, f"{UNANSWERED}{what}")
    return Check(Level.OK, f"you may {what}")


def nodes_unread(snapshot: Snapshot, namespace: str, cluster: str) -> str | None:
    """Why the Nodes of the Cluster's workload cluster were not read, or None when they were."""
    nodes = snapshot.nodes_for(namespace, cluster)
    if nodes is not None and nodes.read:
        return None
    note = (nodes.note if nodes is not None else None) or "not read"
    # Live, the note is describe's warning: its reason alone, where a plan names the Nodes.
    return note.removeprefix(f"Nodes of Cluster {namespace}/{cluster} are not shown: ")


@record
class Rereads:
    """What a whole-pool write reads again during its run, once its first write is made, to
    judge whether to go on, each with what for ("" where it reads nothing again)."""

    nodes: str = ""
    # The infra pool, and the infra machines of a pool with MachinePool Machines.
    infra: str = ""


def unread_checks(pool: PoolDescription, snapshot: Snapshot, rereads: Rereads) -> list[Check]:
    """What the plan of a whole-pool write could not read: refused where its run needs it
    again (nothing is written before a stop the plan can foresee), else said where every such
    plan judges from it (whether the Cluster is paused or being deleted). The Nodes' reason is
    given here, since no other line says it; a kind's is warned about above the plan."""
    mp = pool.pool
    checks = []
    nodes = nodes_unread(snapshot, mp.namespace, mp.cluster) if rereads.nodes else None
    if nodes is not None:
        checks.append(
            Check(
                Level.REFUSED,
                f"the Nodes of Cluster {mp.namespace}/{mp.cluster} could not be read ({nodes}): "
                f"{rereads.nodes}",
            )
        )
    ref = mp.infrastructure_ref
    if rereads.infra and ref is not None:
        # The infra machines are of the infra pool's group.
        kinds = [ref.kind, *([mp.machine_kind] if mp.machine_kind else [])]
        checks += [
            Check(Level.REFUSED, f"{kind} objects could not be read: {rereads.infra}")
            for kind in kinds
            if not snapshot.was_read(ref.api_group, kind)
        ]
    if not snapshot.was_read(CAPI_GROUP, "Cluster"):
        topology = ", and what its topology sets for this pool," if mp.topology_owned else ""
        checks.append(
            Check(
                Level.WARNING,
                f"Cluster {mp.namespace}/{mp.cluster} could not be read: whether it is paused or "
                f"being deleted{topology} is unknown",
            )
        )
    return checks
