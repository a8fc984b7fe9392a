"""scale's plan: a MachinePool's spec.replicas set through its /scale subresource, as
cluster-autoscaler and `kubectl scale` do, with the resourceVersion the plan was made from.

The checks (scalechecks.py) refuse where someone else owns the size; the plan also says who
picks the instances a scale-down removes, and the zones before and after. Pure: a pool, its
objects and the request in, a plan out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.revisions import REPLICAS
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, permission_checks, refused
from kubectl_machinepool.plans.recording import pool_change, record_revision
from kubectl_machinepool.plans.scalechecks import scale_checks
from kubectl_machinepool.plans.writes import Access, Write, object_ref


@record
class ScaleRequest:
    replicas: int
    # kubectl scale's --current-replicas: a precondition on the size the user saw.
    current: int | None = None
    # Outside cluster-autoscaler's min/max annotations anyway.
    force: bool = False


def scale_write(pool_raw: RawObject, current: int | None, to: int) -> Write:
    """spec.replicas through /scale (the MachinePool's other fields are never sent)."""
    pool = object_ref(pool_raw, "machinepools")
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": pool.name, "namespace": pool.namespace},
        "spec": {"replicas": to},
    }
    return Write(
        "update",
        pool,
        f"scale {pool.display} from {current} to {to} replicas (/scale)",
        body,
        subresource="scale",
        done="scaled",
    )


@record
class ScalePlan:
    pool: PoolDescription
    replicas: int
    checks: tuple[Check, ...]
    writes: tuple[Write, ...]
    # The objects as the plan read them, for the write engine's preconditions.
    planned: tuple[RawObject, ...]

    @property
    def refusals(self) -> tuple[str, ...]:
        return refused(self.checks)

    @property
    def nothing_to_do(self) -> bool:
        return self.pool.pool.desired == self.replicas and not self.refusals


def plan_scale(
    pool: PoolDescription,
    snapshot: Snapshot,
    request: ScaleRequest,
    now: datetime,
    *,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> ScalePlan:
    """The /scale write, with the revision recorded before it (plans/recording.py)."""
    mp = pool.pool
    pool_raw = snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {}
    checks = scale_checks(pool, snapshot, request.replicas, request.current, request.force)
    writes: tuple[Write, ...] = ()
    if mp.desired != request.replicas:
        writes = (scale_write(pool_raw, mp.desired, request.replicas),)
    change = pool_change(pool_raw, REPLICAS, mp.desired, request.replicas)
    writes, recorded = record_revision(
        writes, pool_raw, cause=f"scale --replicas {request.replicas}", at=now, changes=(change,)
    )
    checks += recorded
    checks += permission_checks(writes, permissions(writes))
    return ScalePlan(pool, request.replicas, tuple(checks), writes, (pool_raw,))
