"""upgrade as a library: read the named pools, plan each, carry the plans out through the write
engine as one batch, and follow the rollout they start. No click, no printing: output goes
through callbacks, and every failure is a MachinePoolError that says what was, or was not,
written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kubectl_machinepool.app.carrying import Callbacks, DryRun, refuse, send
from kubectl_machinepool.app.options import PoolScope, RuleOptions
from kubectl_machinepool.app.rolloutstatus import End, follow
from kubectl_machinepool.base.errors import ClusterAccessError, MachinePoolError, pools_not_found
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_description
from kubectl_machinepool.kube.permissions import permissions
from kubectl_machinepool.kube.writing import Outcome
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.upgrade import UpgradePlan, UpgradeRequest, plan_upgrade
from kubectl_machinepool.plans.writes import Batch


@dataclass(frozen=True, slots=True)
class Upgrade:
    """What the user asked for: which pools, in which namespace, to which version."""

    names: tuple[str, ...]
    namespace: str
    request: UpgradeRequest
    workload_kubeconfig: str | None = None


@dataclass(frozen=True, slots=True)
class Carry:
    dry_run: DryRun = DryRun.NONE
    wait: bool = True
    # How long to follow the rollout; None: until it is done or stuck.
    timeout: float | None = None
    stuck_after: timedelta = timedelta(minutes=10)


def plans_for(
    kube: Kube, asked: Upgrade, *, ui: Callbacks | None = None, now: datetime | None = None
) -> tuple[UpgradePlan, ...]:
    """Read the pools and plan each; a failure says that nothing was written."""
    when = now or datetime.now(UTC).replace(microsecond=0)
    try:
        return _plans(kube, asked, when, ui)
    except MachinePoolError as err:
        raise err.restated(f"{err.message}; nothing was written") from err


def _plans(
    kube: Kube, asked: Upgrade, now: datetime, ui: Callbacks | None
) -> tuple[UpgradePlan, ...]:
    selection = Selection(asked.namespace, asked.names)
    snapshot = read_description(
        kube, asked.namespace, selection, asked.workload_kubeconfig, kube.timeout, diagnosis=True
    )
    description = describe(snapshot, selection, now)
    for note in description.notes:
        if ui is not None:
            ui.warn(note)
    pools = {p.pool.name: p for c in description.clusters for p in c.pools}
    missing = [n for n in asked.names if n not in pools]
    if missing:
        raise pools_not_found(missing, asked.namespace)
    plans = []
    for name in asked.names:
        pool = pools[name]
        ref = pool.pool.infrastructure_ref
        if ref is None:
            raise ClusterAccessError(f"MachinePool {asked.namespace}/{name} names no infra pool")
        plural = kube.resource(ref.api_group, ref.kind).plural
        plans.append(
            plan_upgrade(
                pool,
                snapshot,
                asked.request,
                now,
                plural=plural,
                permissions=lambda writes: permissions(kube, writes),
            )
        )
    return tuple(plans)


def carry_out(
    kube: Kube, plans: tuple[UpgradePlan, ...], carry: Carry, ui: Callbacks
) -> Outcome | None:
    """Refuse, or confirm and send every plan's writes as one batch (undone together)."""
    refuse([r for plan in plans for r in plan.refusals])
    writes = tuple(w for plan in plans for w in plan.writes)
    planned = tuple(r for plan in plans for r in plan.planned)
    names = " ".join(p.pool.pool.name for p in plans)
    namespace = plans[0].pool.pool.namespace
    hint = f"check the state with: kubectl machinepool describe {names} -n {namespace}"
    outcome = send(kube, writes, Batch(writes, planned, hint), carry.dry_run, ui)
    for line in outcome.lines if outcome else ():
        ui.report(line)
    return outcome


def follow_rollout(
    access: AccessOptions,
    asked: Upgrade,
    carry: Carry,
    ui: Callbacks,
    show: Callable[[Report], None],
) -> tuple[End, Report]:
    """Follow the rollout the writes started, as rollout status does."""
    scope = PoolScope(asked.names, workload_kubeconfig=asked.workload_kubeconfig)
    return follow(
        access,
        scope,
        RuleOptions(),
        stuck_after=carry.stuck_after,
        timeout=carry.timeout,
        show=show,
        warn=ui.warn,
        wall=lambda: datetime.now(UTC).replace(microsecond=0),
    )
