"""Rules about Kubernetes versions (R11, R12, R25)."""

from __future__ import annotations

from collections.abc import Iterator

from kubectl_machinepool.base.fields import dig, items, text
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.kubeversion import release, shown, unparseable
from kubectl_machinepool.diagnostics import remedies
from kubectl_machinepool.diagnostics.core import (
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import same_version
from kubectl_machinepool.model.rollout import OLD, last_change, pool_rollout, provider_rolling
from kubectl_machinepool.model.versionskew import (
    control_plane,
    minor,
    release_minor,
    skew_window,
    unparseable_versions,
)

# A finding names this many of the instances that hold a rollout; the rest are counted.
HELD_NAMED = 5


def _status_versions(ctx: Context, pool: PoolDescription) -> list[str]:
    """status.versions (v1.14+): the kubelet versions core saw, for when Nodes were not read."""
    entries = items(dig(ctx.raw_pool(pool), "status", "versions"))
    return [v for v in (text(e.get("version")) for e in entries) if v]


def upgrade_not_done(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    desired = mp.desired_version
    ready = mp.conditions.get("Ready")
    settled = mp.generation is not None and mp.generation == mp.observed_generation
    if (
        not desired
        or unparseable(desired)
        or not settled
        or ready is None
        or ready.status != "True"
    ):
        return
    lead = "observedGeneration is current and Ready is True"
    if ctx.nodes is None:
        off = [v for v in _status_versions(ctx, pool) if not same_version(v, desired)]
        if off:
            message = (
                f"{lead}, but status.versions still counts kubelets at {names(sorted(set(off)))} "
                f"instead of {desired} (the Nodes were not read)"
            )
            yield rule.finding(pool, pool_subject(pool), message)
        return
    behind = [
        i.node.name
        for i in pool.instances
        if i.node and i.node.kubelet_version and not same_version(i.node.kubelet_version, desired)
    ]
    if not behind:
        return
    message = (
        f"{lead}, but Nodes {names(behind)} do not run {desired}: the rollout has not "
        "finished (or not started)"
    )
    # The provider's own signal says it is rolling and something moved lately: a rollout
    # visibly under way is information; silent counters (#10059) or no movement stay a warning.
    rolling = provider_rolling(pool)
    moved = last_change(pool, ctx.raw_pool(pool), ctx.now)
    if rolling and moved is not None and ctx.now - moved <= ctx.thresholds.rollout:
        message += (
            f"; {rolling[0]} says it is still rolling, and the rollout last moved "
            f"{human_duration(ctx.now - moved)} ago"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, instances=tuple(behind), severity=Severity.INFO
        )
        return
    yield rule.finding(pool, pool_subject(pool), message, instances=tuple(behind))


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def rollout_held(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """A rollout under way (old instances left, or the provider says it rolls) that has not
    moved for the rollout window: name the instances that hold it and why."""
    rollout = pool_rollout(
        pool, ctx.snapshot, ctx.now, ctx.thresholds.rollout, nodes_read=ctx.nodes is not None
    )
    under_way = rollout.count(OLD) or provider_rolling(pool)
    if not rollout.stuck or not under_way:
        return
    holding = rollout.holding
    # The new instances that never came up are the cause; the old ones only wait for them.
    new = [i for i in holding if i.state != OLD] or list(holding)
    shown = "; ".join(f"{i.name} ({', '.join([i.state, *i.problems])})" for i in new[:HELD_NAMED])
    more = f" and {len(new) - HELD_NAMED} more" if len(new) > HELD_NAMED else ""
    moved = rollout.last_change
    since = f" for {human_duration(ctx.now - moved)}" if moved is not None else ""
    old = rollout.count(OLD)
    message = (
        f"the rollout to {rollout.target.version or 'the new template'} has not moved{since}"
        f"{f' with {old} old instance{_s(old)} left' if old else ''}; held by {shown}{more}"
    )
    yield rule.finding(pool, pool_subject(pool), message, instances=tuple(i.name for i in new))


def version_skew(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    plane = control_plane(ctx.snapshot, ctx.cluster.namespace, ctx.cluster.name)
    wanted = pool.pool.desired_version
    pool_minor = minor(wanted)
    if plane is None or wanted is None or pool_minor is None:
        return
    kind, current = plane.kind, plane.current
    cp_minor = release_minor(current)
    if cp_minor is None:
        return
    window = skew_window(cp_minor)
    if pool_minor > cp_minor:
        message = f"the pool wants {wanted}, newer than the control plane ({kind} at {current}): kubelets may not be newer than the API server"
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.ERROR)
    elif pool_minor[0] == cp_minor[0] and pool_minor[1] < cp_minor[1] - window:
        message = f"the pool wants {wanted}, more than {window} minors behind the control plane ({kind} at {current})"
        yield rule.finding(pool, pool_subject(pool), message)
    elif (
        pool.pool.bootstrap_ref
        and pool.pool.bootstrap_ref.kind == "KubeadmConfig"
        and pool_minor != cp_minor
    ):
        message = f"a kubeadm-bootstrapped pool at {wanted} joins a control plane at {current}: kubeadm expects the same minor"
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.INFO)
    if plane.desired and current and same_version(wanted, plane.desired):
        if not same_version(current, plane.desired):
            message = f"the pool already wants {wanted} while the control plane ({kind}) is still rolling from {current} to {plane.desired}"
            yield rule.finding(pool, pool_subject(pool), message)
        elif plane.rolling_out and not same_version(wanted, current):
            message = f"the pool already wants {wanted} while the control plane ({kind}) reports RollingOut True"
            yield rule.finding(pool, pool_subject(pool), message)
    kubelets = [
        (i.node.name, m) for i in pool.instances if i.node and (m := minor(i.node.kubelet_version))
    ]
    newer = [name for name, m in kubelets if m > cp_minor]
    if newer:
        message = (
            f"Nodes {names(newer)} run a kubelet newer than the control plane ({kind} at {current})"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, severity=Severity.ERROR, instances=tuple(newer)
        )
    older = [name for name, m in kubelets if m[0] == cp_minor[0] and m[1] < cp_minor[1] - window]
    if older:
        message = (
            f"Nodes {names(older)} run a kubelet more than {window} minors behind the control "
            f"plane ({kind} at {current})"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(older))


def versions_unparseable(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    """Each version the pool is judged by that is no semantic version, read whole: never the
    version it begins with (base/kubeversion.py)."""
    for where, value in unparseable_versions(pool.pool):
        message = (
            f"{where} is {shown(value)}, not a semantic version: the pool's rollout, skew and "
            "upgrades cannot be judged"
        )
        yield rule.finding(pool, pool_subject(pool), message)
    kubelets = [
        (i.node.name, v)
        for i in pool.instances
        if i.node and unparseable(v := i.node.kubelet_version)
    ]
    if kubelets:
        said = names(f"{name} ({shown(v or '')})" for name, v in kubelets)
        message = f"Nodes {said} report a kubeletVersion that is not a semantic version"
        yield rule.finding(
            pool,
            pool_subject(pool),
            message,
            severity=Severity.WARNING,
            instances=tuple(name for name, _ in kubelets),
        )
    plane = control_plane(ctx.snapshot, ctx.cluster.namespace, ctx.cluster.name)
    if plane is not None and plane.current and release(plane.current) is None:
        message = (
            f"the control plane ({plane.kind}) reports version {shown(plane.current)}, not a "
            "semantic version: the pool's skew cannot be checked"
        )
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.WARNING)


def topology_version_strings(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if not mp.topology_owned or not mp.version:
        return
    differing = sorted(
        {
            i.node.kubelet_version
            for i in pool.instances
            if i.node
            and i.node.kubelet_version
            and i.node.kubelet_version != mp.version
            and same_version(i.node.kubelet_version, mp.version)
        }
    )
    if differing:
        message = (
            f"kubelets report {names(differing)} while the pool says {mp.version}: the topology "
            "controller compares the strings exactly and may consider this pool upgrading forever"
        )
        yield rule.finding(pool, pool_subject(pool), message)


RULES = [
    Rule(
        "MP1101",
        "R11",
        "Upgrade reported done, Nodes say otherwise",
        Severity.WARNING,
        "metadata.generation equals status.observedGeneration and Ready is True, but some pool Nodes' kubeletVersion (or, when the Nodes were not read, a status.versions entry) differs from the desired version",
        "observedGeneration and upToDateReplicas are no evidence of a finished rollout: without Machines upToDateReplicas is spec.replicas, with them it counts Machines not being deleted.",
        "Wait for, or trigger, the provider's rollout; judge progress by the Nodes' versions and the provider's signals.",
        (CAPI + "10059", CAPI + "13234", CAPI + "13929"),
        upgrade_not_done,
        remedy=remedies.RESTART_POOL,
    ),
    Rule(
        "MP1102",
        "R11b",
        "Rollout stuck on the instances it names",
        Severity.WARNING,
        "a rollout under way (old instances left, or the infra pool's own condition says it is rolling) in which nothing moved (no instance created, deleted or turned Ready, no template write) for the rollout window (10m; rollout status --stuck-after)",
        "Every instance the provider reports counts, also one only the infra pool's providerIDList names: a surge instance whose bootstrap or boot failed holds the rollout while the old ones wait for it.",
        "Read the named instance's Machine and infra machine conditions and its cloud console or serial log; delete it (kubectl machinepool delete-machine) once the cause is fixed.",
        (CAPI + "10059",),
        rollout_held,
        remedy=remedies.DELETE_HOLDER,
    ),
    Rule(
        "MP1201",
        "R12",
        "Version skew against the control plane",
        Severity.WARNING,
        "the pool's version against the control plane's (its status.version, spec.version, or the topology version; versions compare as far as both give major.minor.patch): newer is an error, more than 3 minors behind (2 before 1.28) a warning, a kubeadm pool on another minor is info, a pool already on the version the control plane is still rolling to (status.version behind, or RollingOut True) is a warning; per Node, a kubelet newer than the control plane is an error and one more than 3 minors behind a warning",
        "Nothing in Cluster API checks MachinePool skew (only ClusterClass sequencing does); kubelets newer than the API server are unsupported.",
        "Upgrade the control plane first and hold pool version changes until it is stable; keep kubeadm pools on the control plane's minor.",
        (CAPI + "12732", CAPI + "14089"),
        version_skew,
        remedy=remedies.UNDO_UPGRADE,
    ),
    Rule(
        "MP1202",
        "R12b",
        "Version is not a semantic version",
        Severity.ERROR,
        "the pool's spec.template.spec.version (and the version field of an infra pool whose provider deploys its own, OKE's and ROSA's spec.version) read whole as a semantic version: a leading v optional, pre-release and build metadata allowed (v1.33.4-eks-1a2b3c, v1.33.4+k3s1); anything else (v1.34.0;$(id), a control character, v1.34, 1.34.0-, a 40-digit number) is an error, never read as the version it begins with; as warnings, Nodes whose kubeletVersion is none, and a control plane version that is none (EKS's minor alone, 1.33, is one)",
        "Cluster API's webhook takes a MachinePool version only as a semantic version with a leading v, and refuses every later update of a pool that holds another; nothing can be compared with it, so rollout status never calls the rollout done, upgrade refuses the pool and the skew is not checked.",
        "Set spec.template.spec.version to the release the pool runs (e.g. v1.33.4) with kubectl patch, the webhook in place; find who wrote the value in the pool's managedFields.",
        (),
        versions_unparseable,
    ),
    Rule(
        "MP2501",
        "R25",
        "Upgrading forever under ClusterClass",
        Severity.WARNING,
        "a topology-owned pool whose Nodes report a kubeletVersion with a distribution suffix (-eks-…, +k3s1) that is not string-equal to the pool's version",
        "The topology controller compares version strings exactly, so it may consider the pool upgrading indefinitely and hold later upgrade steps.",
        "Align the version strings, or read TopologyReconciled reasons (MachinePoolsUpgradePending) with this in mind.",
        (),
        topology_version_strings,
    ),
]
