"""What every whole-pool write does around its plans: read the named pools of one namespace,
described as describe shows them, with the snapshot they were read from (a pool not found, or a
read that fails, ends the command saying that nothing was written); then carry the plans out as
one batch of the write engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from kubectl_machinepool.app.carrying import Callbacks, DryRun, refuse, send
from kubectl_machinepool.base.errors import ClusterAccessError, MachinePoolError, pools_not_found
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_description
from kubectl_machinepool.kube.permissions import permissions
from kubectl_machinepool.kube.writing import Outcome
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.writes import Access, Batch, Write

T = TypeVar("T")
Permissions = Callable[[tuple[Write, ...]], dict[Access, bool | None]]


@contextmanager
def nothing_written() -> Iterator[None]:
    """A failure while planning says that nothing was written."""
    try:
        yield
    except MachinePoolError as err:
        raise err.restated(f"{err.message}; nothing was written") from err


def read_pools(
    kube: Kube,
    namespace: str,
    names: tuple[str, ...],
    now: datetime,
    *,
    workload_kubeconfig: str | None,
    warn: Callable[[str], None] | None,
) -> tuple[Snapshot, tuple[PoolDescription, ...]]:
    """The pools in the order named, each once (a name given twice would plan its writes
    twice); what could not be read is warned about."""
    names = tuple(dict.fromkeys(names))
    selection = Selection(namespace, names)
    snapshot = read_description(
        kube, namespace, selection, workload_kubeconfig, kube.timeout, diagnosis=True
    )
    description = describe(snapshot, selection, now)
    for note in description.notes:
        if warn is not None:
            warn(note)
    pools = {p.pool.name: p for c in description.clusters for p in c.pools}
    missing = [n for n in names if n not in pools]
    if missing:
        raise pools_not_found(missing, namespace)
    return snapshot, tuple(pools[n] for n in names)


class PoolPlan(Protocol):
    """A whole-pool write's plan for one pool, as carry_out sends it."""

    @property
    def pool(self) -> PoolDescription: ...
    @property
    def refusals(self) -> tuple[str, ...]: ...
    @property
    def writes(self) -> tuple[Write, ...]: ...
    @property
    def planned(self) -> tuple[RawObject, ...]: ...


def carry_out(
    kube: Kube, plans: Sequence[PoolPlan], dry_run: DryRun, ui: Callbacks
) -> Outcome | None:
    """Refuse, or confirm and send every plan's writes as one batch (undone together)."""
    refuse([r for plan in plans for r in plan.refusals])
    writes = tuple(w for plan in plans for w in plan.writes)
    planned = tuple(r for plan in plans for r in plan.planned)
    names = " ".join(p.pool.pool.name for p in plans)
    namespace = plans[0].pool.pool.namespace
    hint = f"check the state with: kubectl machinepool describe {names} -n {namespace}"
    outcome = send(kube, writes, Batch(writes, planned, hint), dry_run, ui)
    for line in outcome.lines if outcome else ():
        ui.report(line)
    return outcome


def infra_plural(kube: Kube, pool: PoolDescription) -> str:
    """How the API names the pool's infra pool kind, for writes to it."""
    ref = pool.pool.infrastructure_ref
    if ref is None:
        raise ClusterAccessError(
            f"MachinePool {pool.pool.namespace}/{pool.pool.name} names no infra pool"
        )
    return kube.resource(ref.api_group, ref.kind).plural


def plan_each(
    kube: Kube,
    namespace: str,
    names: tuple[str, ...],
    plan: Callable[[PoolDescription, Snapshot, Permissions], T],
    *,
    workload_kubeconfig: str | None,
    warn: Callable[[str], None] | None,
) -> tuple[T, ...]:
    """Read the pools and plan each with the user's permissions at hand; a failure says that
    nothing was written."""
    now = datetime.now(UTC).replace(microsecond=0)
    with nothing_written():
        snapshot, pools = read_pools(
            kube, namespace, names, now, workload_kubeconfig=workload_kubeconfig, warn=warn
        )
        return tuple(
            plan(pool, snapshot, lambda writes: permissions(kube, writes)) for pool in pools
        )
