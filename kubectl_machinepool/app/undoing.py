"""rollout undo as a library: read the pool, plan the fields put back (plans/undo.py); the
write engine carries the plan out (planning.carry_out) and upgrading.follow_rollout follows
what it starts, as upgrade's. No click, no printing."""

from __future__ import annotations

from kubectl_machinepool.app.carrying import Callbacks
from kubectl_machinepool.app.planning import Ground, Permissions, infra_plural, plan_each
from kubectl_machinepool.app.upgrading import REREADS
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.undo import UndoPlan, UndoRequest, plan_undo


@record
class Undo:
    """What the user asked for: which pool, in which namespace, back to which revision."""

    names: tuple[str, ...]
    namespace: str | None
    request: UndoRequest
    workload_kubeconfig: str | None = None
    # --wait: the rollout the writes start is followed, which needs the Nodes (REREADS).
    follow: bool = True
    ignore_owner: bool = False


def plans_for(ground: Ground, asked: Undo, *, ui: Callbacks) -> tuple[UndoPlan, ...]:
    """Read the pool and plan; a failure says that nothing was written."""

    def plan(pool: PoolDescription, snapshot: Snapshot, allowed: Permissions) -> UndoPlan:
        return plan_undo(
            pool,
            snapshot,
            asked.request,
            ground.now,
            plural=infra_plural(ground, pool),
            permissions=allowed,
        )

    rereads = REREADS if asked.follow else None
    return plan_each(ground, asked, plan, warn=ui.warn, rereads=rereads)
