"""upgrade's preflight: each check one plan line, refusing (nothing written) when it fails.

The version against the control plane (Kubernetes' skew policy: never newer, at most three minors
older from 1.28, two before) and against the provider's rule on skipping minors (#12732); a
topology-owned pool, whose version the topology controller writes from the Cluster (a direct
change would be reverted); a pool or Cluster paused or deleting, or a rollout not done, which
--force lets through. Pure.
"""

from __future__ import annotations

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import dig, items, mapping, text
from kubectl_machinepool.base.kubeversion import release, shown
from kubectl_machinepool.base.kubeversion import version as version_of
from kubectl_machinepool.model.conditions import read_conditions
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.rollout import DONE, PoolRollout
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.versionskew import (
    control_plane,
    minor,
    skew_window,
    unparseable_versions,
)
from kubectl_machinepool.plans.checks import Check, Level, nodes_unread
from kubectl_machinepool.providers.registry import infra_pool

# The name a topology-owned pool has in the Cluster's spec.topology.workers.machinePools[].
POOL_NAME_LABEL = "topology.cluster.x-k8s.io/pool-name"
# Annotations on spec.topology.workers.machinePools[].metadata that hold a pool's upgrade.
HOLDS = (
    "topology.cluster.x-k8s.io/defer-upgrade",
    "topology.cluster.x-k8s.io/hold-upgrade-sequence",
)


def semver(value: str | None) -> tuple[int, int, int] | None:
    """major.minor.patch of a semantic version read whole; None for anything else."""
    found = version_of(value)
    return found.core if found else None


def preflight(
    pool: PoolDescription,
    snapshot: Snapshot,
    rollout: PoolRollout,
    version: str,
    force: bool,
    *,
    going_back: bool = False,
) -> tuple[Check, ...]:
    """going_back: rollout undo puts a version back, older than the pool's by design."""
    checks = [*_versions(pool, snapshot, version, going_back), *_topology(pool, snapshot)]
    checks += _state(pool, snapshot, rollout, force)
    return tuple(checks)


def _unparseable(pool: PoolDescription) -> list[Check]:
    """A version that is no semantic version cannot be compared: not the skew, not a
    downgrade, not when the rollout is done (MP1202). --force does not go past it."""
    mp = pool.pool
    return [
        Check(
            Level.REFUSED,
            f"MachinePool {mp.namespace}/{mp.name}: {where} is {shown(value)}, not a semantic "
            "version (MP1202): nothing about it can be judged; set it right by hand first",
        )
        for where, value in unparseable_versions(mp)
    ]


def _versions(
    pool: PoolDescription, snapshot: Snapshot, version: str, going_back: bool
) -> list[Check]:
    mp = pool.pool
    if refused := _unparseable(pool):
        return refused
    now, asked = semver(mp.version), semver(version)
    checks = []
    if now is not None and asked is not None and asked < now and going_back:
        checks.append(
            Check(
                Level.WARNING,
                f"{version} is older than the pool's {mp.version}: every instance is replaced "
                "by one that joins at the older version",
            )
        )
    elif now is not None and asked is not None and asked < now:
        checks.append(
            Check(
                Level.REFUSED,
                f"{version} is older than the pool's {mp.version}: Cluster API and kubeadm do "
                "not downgrade",
            )
        )
    plane = control_plane(snapshot, mp.namespace, mp.cluster)
    running = release(plane.current) if plane else None
    target = version_of(version)
    if plane is None or running is None or target is None:
        said = (
            f" ({plane.kind} says {shown(plane.current)}, not a semantic version)"
            if plane is not None and plane.current and running is None
            else ""
        )
        checks.append(
            Check(
                Level.WARNING,
                f"the control plane's version is unknown{said}: the skew is not checked",
            )
        )
    else:
        cp, wanted = running.minor_release, target.minor_release
        window = skew_window(cp)
        policy = f"Kubernetes {'1.28+' if window == 3 else 'pre-1.28'} skew policy"
        where = f"the control plane ({plane.kind}) at {plane.current}"
        # A control plane named by its minor alone (EKS's 1.33) runs that minor's patches.
        newer = wanted > cp if running.patch is None else target.core > running.core
        if newer:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"{version} is newer than {where}: a kubelet may never be newer than the "
                    f"API server ({policy})",
                )
            )
        elif wanted[0] != cp[0] or wanted[1] < cp[1] - window:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"{version} is more than {window} minors behind {where} ({policy})",
                )
            )
        else:
            checks.append(
                Check(
                    Level.OK,
                    f"{version} is within the skew of {where} ({policy}: never newer, at most "
                    f"{window} minors older)",
                )
            )
        if plane.rolling_out:
            checks.append(
                Check(Level.WARNING, f"the control plane is still rolling out to {plane.desired}")
            )
    checks += _minors(pool, version)
    return checks


def _minors(pool: PoolDescription, version: str) -> list[Check]:
    ref = pool.pool.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    now, wanted = minor(pool.pool.version), minor(version)
    if now is not None and wanted is not None and wanted[0] > now[0]:
        # Counting minors stops at a major; a typo (v2.0.0 for v1.20.0) must not pass by it.
        return [
            Check(
                Level.REFUSED,
                f"{version} is a new major version over the pool's {pool.pool.version}: no "
                "provider, kubeadm or managed service upgrades across majors",
            )
        ]
    if provider is None or now is None or wanted is None or wanted[0] != now[0]:
        return []
    skipped = wanted[1] - now[1]
    if skipped > 1 and provider.upgrade.one_minor:
        step = f"v{now[0]}.{now[1] + 1}"
        return [
            Check(
                Level.REFUSED,
                f"{version} skips {skipped - 1} minor version(s): {provider.upgrade.one_minor}; "
                f"upgrade to the latest {step} patch first",
            )
        ]
    if skipped > 1 and provider.upgrade.steps_minors:
        return [
            Check(
                Level.WARNING,
                f"{version} is {skipped} minors ahead: {provider.upgrade.steps_minors}",
            )
        ]
    return []


def _topology(pool: PoolDescription, snapshot: Snapshot) -> list[Check]:
    mp = pool.pool
    if not mp.topology_owned:
        return []
    cluster = snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster)
    topology = text(dig(cluster, "spec", "topology", "version"))
    if not snapshot.was_read(CAPI_GROUP, "Cluster"):
        topology = "not read"  # the Cluster could not be read: unset would be a guess
    parts = [
        f"the topology controller owns this pool and would write back the version of Cluster "
        f"{mp.namespace}/{mp.cluster}'s spec.topology.version ({topology or 'unset'}): change "
        "that instead (no Cluster API release has a per-pool version)"
    ]
    reconciled = read_conditions(cluster or {}).get("TopologyReconciled")
    if reconciled is not None and reconciled.status != "True":
        said = f": {reconciled.message}" if reconciled.message else ""
        parts.append(f"TopologyReconciled is {reconciled.status} ({reconciled.reason}){said}")
    name = mp.labels.get(POOL_NAME_LABEL)
    for entry in items(dig(cluster, "spec", "topology", "workers", "machinePools")):
        notes = mapping(dig(entry, "metadata", "annotations"))
        held = [h for h in HOLDS if h in notes]
        if entry.get("name") == name and held:
            parts.append(f"the topology holds this pool's upgrades ({', '.join(held)})")
    return [Check(Level.REFUSED, "; ".join(parts))]


def _unknown_rollout(rollout: PoolRollout, snapshot: Snapshot) -> str:
    """A rollout judged without the Nodes: no instance's version or readiness is known, so it
    is not done only where something else says so (its first reason is the Nodes, and every
    instance of unknown version is so for want of them)."""
    why = nodes_unread(snapshot, rollout.namespace, rollout.cluster)
    unread = f"{rollout.waiting_for[0]} ({why})"
    known = [w for w in rollout.waiting_for[1:] if not w.endswith("of unknown version")]
    if known:
        return (
            f"the pool's current rollout is not done ({'; '.join(known[:2])}), and {unread}: a "
            "new version now rolls over it"
        )
    return (
        f"whether the pool's current rollout is done is unknown: {unread}, so no instance's "
        "version or readiness is known"
    )


def _state(
    pool: PoolDescription, snapshot: Snapshot, rollout: PoolRollout, force: bool
) -> list[Check]:
    mp = pool.pool
    cluster = snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster)
    found = []
    if pool.paused_by:
        found.append(
            f"reconciliation is paused ({pool.paused_by}): nothing rolls until it is lifted"
        )
    if mp.deleting_since is not None:
        found.append(f"MachinePool {mp.namespace}/{mp.name} is being deleted")
    if dig(cluster, "metadata", "deletionTimestamp"):
        found.append(f"Cluster {mp.namespace}/{mp.cluster} is being deleted")
    if rollout.state != DONE and not rollout.nodes_read:
        found.append(_unknown_rollout(rollout, snapshot))
    elif rollout.state != DONE:
        why = "; ".join(rollout.waiting_for[:2])
        found.append(
            f"the pool's current rollout is {rollout.state}, not done ({why}): a new version "
            "now rolls over it"
        )
    if pool.infra_unread:
        return [
            Check(
                Level.REFUSED,
                "the infra pool could not be read: its version and image fields are unknown",
            )
        ]
    suffix = " (--force: going ahead)" if force else "; --force goes ahead anyway"
    level = Level.WARNING if force else Level.REFUSED
    return [Check(level, f + suffix) for f in found]
