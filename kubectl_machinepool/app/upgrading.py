"""upgrade as a library: read the named pools, plan each, carry the plans out through the write
engine as one batch, and follow the rollout they start. No click, no printing: output goes
through callbacks, and every failure is a MachinePoolError that says what was, or was not,
written."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kubectl_machinepool.app.carrying import Callbacks, DryRun
from kubectl_machinepool.app.options import PoolScope, RuleOptions
from kubectl_machinepool.app.planning import Ground, Permissions, infra_plural, plan_each
from kubectl_machinepool.app.rolloutstatus import End, follow
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.rollouts import Report
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Rereads
from kubectl_machinepool.plans.upgrade import UpgradePlan, UpgradeRequest, plan_upgrade

# Followed without its Nodes, a rollout is never done nor stuck: it would be waited for to the
# timeout (forever by default), with the writes made.
REREADS = Rereads(
    nodes="the rollout the writes start is judged from them while it is followed, and would "
    "never be seen done (--no-wait writes without following it)"
)


@record
class Upgrade:
    """What the user asked for: which pools, in which namespace, to which version."""

    names: tuple[str, ...]
    namespace: str | None  # None: a dump's, wherever the pools are
    request: UpgradeRequest
    workload_kubeconfig: str | None = None
    # --wait: the rollout the writes start is followed, which needs the Nodes (REREADS).
    follow: bool = True
    ignore_owner: bool = False


@record
class Carry:
    dry_run: DryRun = DryRun.NONE
    wait: bool = True
    # How long to follow the rollout; None: until it is done or stuck.
    timeout: float | None = None
    stuck_after: timedelta = timedelta(minutes=10)


def plans_for(
    ground: Ground, asked: Upgrade, *, ui: Callbacks | None = None
) -> tuple[UpgradePlan, ...]:
    """Read the pools and plan each; a failure says that nothing was written."""

    def plan(pool: PoolDescription, snapshot: Snapshot, allowed: Permissions) -> UpgradePlan:
        plural = infra_plural(ground, pool)
        return plan_upgrade(
            pool, snapshot, asked.request, ground.now, plural=plural, permissions=allowed
        )

    rereads = REREADS if asked.follow else None
    return plan_each(ground, asked, plan, warn=ui.warn if ui else None, rereads=rereads)


def follow_rollout(
    access: AccessOptions,
    names: tuple[str, ...],
    carry: Carry,
    ui: Callbacks,
    show: Callable[[Report], None],
) -> tuple[End, Report]:
    """Follow the rollout the writes started, as rollout status does."""
    scope = PoolScope(names)
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
