"""scale's checks: each one plan line, refusing (nothing written) where a new size would be
fought or reverted.

Someone else may own spec.replicas: an external autoscaler through
cluster.x-k8s.io/replicas-managed-by (the provider copies the cloud's size into it), the
topology controller (the Cluster's spec.topology.workers.machinePools[].replicas), or
cluster-autoscaler between its min/max annotations (outside them only with --force, which says
the autoscaler may change it back; bounds it cannot use, unreadable, negative or contradictory,
are refused the same way, as no size can be judged against them). A pool, infra pool or Cluster
being deleted is refused; a paused one takes the size when it is resumed. Pure.
"""

from __future__ import annotations

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, integer, items, mapping
from kubectl_machinepool.model.autoscaler import AutoscalerBounds
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.pool import PAUSED_ANNOTATION
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.zones import scale_balance
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.upgradechecks import POOL_NAME_LABEL
from kubectl_machinepool.providers.registry import infra_pool_of


def scale_checks(
    pool: PoolDescription,
    snapshot: Snapshot,
    replicas: int,
    current: int | None,
    force: bool,
) -> list[Check]:
    mp = pool.pool
    checks = []
    if current is not None and mp.desired != current:
        checks.append(
            Check(
                Level.REFUSED,
                f"spec.replicas is {mp.desired}, not --current-replicas {current}: someone "
                "scaled the pool since",
            )
        )
    cluster = snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster)
    checks += _owners(pool, cluster)
    checks += _bounds(pool, replicas, force)
    checks += _state(pool, snapshot, cluster)
    if mp.desired is not None and replicas < mp.desired:
        checks.append(_who_goes(pool))
    if replicas == 0:
        checks.append(
            Check(
                Level.WARNING,
                "0 replicas: every instance goes, and the Pods on its Nodes with it",
            )
        )
    balance = scale_balance(pool.zones, replicas, infra_pool_of(pool.infra), _infra(pool, snapshot))
    if balance is not None:
        checks.append(Check(Level.OK, balance))
    return checks


def _infra(pool: PoolDescription, snapshot: Snapshot) -> RawObject | None:
    ref = pool.pool.infrastructure_ref
    if ref is None:
        return None
    return snapshot.find(ref.api_group, ref.kind, pool.pool.namespace, ref.name)


def _owners(pool: PoolDescription, cluster: RawObject | None) -> list[Check]:
    mp = pool.pool
    checks = []
    if mp.replicas_managed_by:
        checks.append(
            Check(
                Level.REFUSED,
                f"replicas are managed by {mp.replicas_managed_by} "
                "(cluster.x-k8s.io/replicas-managed-by): the provider copies the cloud's size "
                "into spec.replicas, so a new value would be overwritten; scale through that "
                "autoscaler or node-pool setting",
            )
        )
    topology = topology_replicas(pool, cluster)
    return [*checks, topology] if topology else checks


def topology_replicas(pool: PoolDescription, cluster: RawObject | None) -> Check | None:
    """The refusal of a write to spec.replicas that the topology controller would write back:
    a topology-owned pool whose Cluster's topology sets its replicas."""
    mp = pool.pool
    if not mp.topology_owned:
        return None
    name = mp.labels.get(POOL_NAME_LABEL)
    for entry in items(dig(cluster, "spec", "topology", "workers", "machinePools")):
        replicas = integer(entry.get("replicas"))
        if entry.get("name") == name and replicas is not None:
            return Check(
                Level.REFUSED,
                f"the topology controller sets this pool's replicas from Cluster "
                f"{mp.namespace}/{mp.cluster} spec.topology.workers.machinePools[{name}]."
                f"replicas ({replicas}) and would write them back: change that instead",
            )
    return None


def _bounds(pool: PoolDescription, replicas: int, force: bool) -> list[Check]:
    bounds = pool.pool.autoscaler
    if bounds.problems:
        return [_unreadable_bounds(bounds, force)]
    if not bounds.node_group:
        return []
    low, high = bounds.minimum, bounds.maximum
    if low <= replicas <= high:
        return [
            Check(
                Level.WARNING,
                f"cluster-autoscaler sizes this pool between {low} and {high}: it may change "
                f"{replicas} again when it next scales",
            )
        ]
    side = f"below its minimum {low}" if replicas < low else f"above its maximum {high}"
    if force:
        return [
            Check(
                Level.WARNING,
                f"{replicas} is {side} (cluster-autoscaler node-group annotations; --force: going "
                "ahead): the autoscaler may change it back",
            )
        ]
    return [
        Check(
            Level.REFUSED,
            f"{replicas} is {side} (cluster-autoscaler node-group annotations); change the "
            "annotation, or --force (the autoscaler may change it back)",
        )
    ]


def _unreadable_bounds(bounds: AutoscalerBounds, force: bool) -> Check:
    """Bounds cluster-autoscaler refuses: no size can be judged against them, and until they are
    fixed it scales none of the pools it discovers (model/autoscaler.py)."""
    said = (
        f"cluster-autoscaler cannot use this pool's node-group bounds: {'; '.join(bounds.problems)}"
        " (it then sizes none of the pools it discovers)"
    )
    if force:
        return Check(Level.WARNING, f"{said}; --force: going ahead without them")
    return Check(Level.REFUSED, f"{said}; fix the annotations, or --force to scale anyway")


def _state(pool: PoolDescription, snapshot: Snapshot, cluster: RawObject | None) -> list[Check]:
    mp = pool.pool
    deleting = []
    if mp.deleting_since is not None:
        deleting.append(f"MachinePool {mp.namespace}/{mp.name}")
    if dig(cluster, "metadata", "deletionTimestamp"):
        deleting.append(f"Cluster {mp.namespace}/{mp.cluster}")
    infra = _infra(pool, snapshot)
    if dig(infra, "metadata", "deletionTimestamp") and pool.infra is not None:
        deleting.append(f"{pool.infra.kind} {mp.namespace}/{pool.infra.name}")
    checks = []
    if deleting:
        checks.append(Check(Level.REFUSED, f"{', '.join(deleting)} is being deleted"))
    paused = pool.paused_by
    if paused is None and PAUSED_ANNOTATION in mapping(dig(infra, "metadata", "annotations")):
        paused = "the infra pool's cluster.x-k8s.io/paused annotation"
    if paused:
        checks.append(
            Check(
                Level.WARNING,
                f"reconciliation is paused ({paused}): the new size is acted on once it is lifted",
            )
        )
    ref = mp.infrastructure_ref
    if pool.infra_unread and ref is not None:
        checks.append(
            Check(
                Level.WARNING,
                f"{ref.kind} {mp.namespace}/{ref.name} could not be read: whether it is paused "
                "or being deleted is unknown",
            )
        )
    return checks


def _who_goes(pool: PoolDescription) -> Check:
    """Which instances a scale-down removes: the provider's choice, and whether one can be
    chosen instead (delete-machine --scale-down, where the provider honours the mark)."""
    verdict = pool.deletion
    if verdict.honours_delete_annotation:
        return Check(
            Level.OK,
            "the provider picks which instances go; to pick one yourself: kubectl machinepool "
            f"delete-machine MACHINE -n {pool.pool.namespace} --scale-down",
        )
    kind = pool.infra.kind if pool.infra else "the infra pool"
    why = verdict.scale_down or verdict.reason
    return Check(
        Level.OK,
        f"the cloud picks which instances go: {kind} cannot be told which ({why}); "
        "delete-machine --scale-down chooses only where the provider honours "
        "cluster.x-k8s.io/delete-machine",
    )
