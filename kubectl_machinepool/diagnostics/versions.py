"""Rules about Kubernetes versions (R11, R12, R25)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group
from kubectl_machinepool.base.fields import RawObject, dig, items, text
from kubectl_machinepool.diagnostics.core import (
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.model.conditions import read_conditions
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import same_version

# ASCII digits, a few of them: int() of a 5000-digit version from a dump would raise.
_MINOR = re.compile(r"v?([0-9]{1,9})\.([0-9]{1,9})(?![0-9])")


def minor(version: str | None) -> tuple[int, int] | None:
    match = _MINOR.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _status_versions(ctx: Context, pool: PoolDescription) -> list[str]:
    """status.versions (v1.14+): the kubelet versions core saw, for when Nodes were not read."""
    entries = items(dig(ctx.raw_pool(pool), "status", "versions"))
    return [v for v in (text(e.get("version")) for e in entries) if v]


def upgrade_not_done(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    desired = mp.desired_version
    ready = mp.conditions.get("Ready")
    settled = mp.generation is not None and mp.generation == mp.observed_generation
    if not desired or not settled or ready is None or ready.status != "True":
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
    if behind:
        message = (
            f"{lead}, but Nodes {names(behind)} do not run {desired}: the rollout has not "
            "finished (or not started)"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(behind))


@dataclass(frozen=True, slots=True)
class ControlPlane:
    kind: str
    desired: str | None
    # The version it runs; for a topology without a readable control plane, the desired one.
    current: str | None
    rolling_out: bool = False


def control_plane(ctx: Context) -> ControlPlane | None:
    """The Cluster's control plane and its versions, when they can be read."""
    cluster = ctx.raw(CAPI_GROUP, "Cluster", ctx.cluster.namespace, ctx.cluster.name)
    ref = dig(cluster, "spec", "controlPlaneRef")
    kind = text(dig(ref, "kind"))
    topology = text(dig(cluster, "spec", "topology", "version"))
    if not kind:
        return ControlPlane("Cluster topology", topology, topology) if topology else None
    group = ref_group(ref)
    plane: RawObject | None = ctx.raw(
        group, kind, ctx.cluster.namespace, text(dig(ref, "name")) or ""
    )
    if plane is None:
        return None
    desired = text(dig(plane, "spec", "version")) or text(dig(plane, "spec", "controlPlaneVersion"))
    current = text(dig(plane, "status", "version")) or desired
    rolling = read_conditions(plane).get("RollingOut")
    return ControlPlane(kind, desired, current, rolling is not None and rolling.status == "True")


def _skew_window(cp_minor: tuple[int, int]) -> int:
    """How many minors a kubelet may trail the API server: 3 from 1.28, 2 before."""
    return 2 if cp_minor < (1, 28) else 3


def version_skew(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    plane = control_plane(ctx)
    wanted = pool.pool.desired_version
    pool_minor = minor(wanted)
    if plane is None or wanted is None or pool_minor is None:
        return
    kind, current = plane.kind, plane.current
    cp_minor = minor(current)
    if cp_minor is None:
        return
    window = _skew_window(cp_minor)
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


def topology_version_strings(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    if "topology.cluster.x-k8s.io/owned" not in mp.labels or not mp.version:
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
