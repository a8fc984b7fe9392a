"""Rules about Kubernetes versions (R11, R12, R25)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kubectl_machinepool.description import PoolDescription, same_version
from kubectl_machinepool.diagnostics.core import (
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.fields import dig, text
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, group_of

_MINOR = re.compile(r"v?(\d+)\.(\d+)")


def minor(version: str | None) -> tuple[int, int] | None:
    match = _MINOR.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def upgrade_not_done(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    desired = mp.desired_version
    ready = mp.conditions.get("Ready")
    settled = mp.generation is not None and mp.generation == mp.observed_generation
    if not desired or not settled or ready is None or ready.status != "True":
        return
    behind = [
        i.node.name
        for i in pool.instances
        if i.node and i.node.kubelet_version and not same_version(i.node.kubelet_version, desired)
    ]
    if behind:
        message = (
            f"observedGeneration is current and Ready is True, but Nodes {names(behind)} do not "
            f"run {desired}: the rollout has not finished (or not started)"
        )
        yield rule.finding(pool, pool_subject(pool), message, instances=tuple(behind))


def control_plane(ctx: Context) -> tuple[str, str | None, str | None] | None:
    """(kind, desired, current) version of the Cluster's control plane, when it can be read."""
    cluster = ctx.raw(CAPI_GROUP, "Cluster", ctx.cluster.namespace, ctx.cluster.name)
    ref = dig(cluster, "spec", "controlPlaneRef")
    kind = text(dig(ref, "kind"))
    if not kind:
        topology = text(dig(cluster, "spec", "topology", "version"))
        return ("Cluster topology", topology, None) if topology else None
    group = text(dig(ref, "apiGroup")) or group_of(text(dig(ref, "apiVersion")) or "")
    plane: RawObject | None = ctx.raw(
        group, kind, ctx.cluster.namespace, text(dig(ref, "name")) or ""
    )
    if plane is None:
        return None
    desired = text(dig(plane, "spec", "version")) or text(dig(plane, "spec", "controlPlaneVersion"))
    current = text(dig(plane, "status", "version")) or desired
    return kind, desired, current


def version_skew(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    plane = control_plane(ctx)
    pool_minor = minor(pool.pool.desired_version)
    if plane is None or pool_minor is None:
        return
    kind, desired, current = plane
    cp_minor = minor(current)
    if cp_minor is None:
        return
    lowest = 2 if cp_minor < (1, 28) else 3
    if pool_minor > cp_minor:
        message = f"the pool wants {pool.pool.desired_version}, newer than the control plane ({kind} at {current}): kubelets may not be newer than the API server"
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.ERROR)
    elif pool_minor[1] < cp_minor[1] - lowest and pool_minor[0] == cp_minor[0]:
        message = f"the pool wants {pool.pool.desired_version}, more than {lowest} minors behind the control plane ({kind} at {current})"
        yield rule.finding(pool, pool_subject(pool), message)
    elif (
        pool.pool.bootstrap_ref
        and pool.pool.bootstrap_ref.kind == "KubeadmConfig"
        and pool_minor != cp_minor
    ):
        message = f"a kubeadm-bootstrapped pool at {pool.pool.desired_version} joins a control plane at {current}: kubeadm expects the same minor"
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.INFO)
    if (
        desired
        and current
        and desired != current
        and pool.pool.desired_version
        and same_version(pool.pool.desired_version, desired)
    ):
        message = f"the pool already wants {pool.pool.desired_version} while the control plane ({kind}) is still rolling from {current} to {desired}"
        yield rule.finding(pool, pool_subject(pool), message)
    newer = [
        i.node.name
        for i in pool.instances
        if i.node and (m := minor(i.node.kubelet_version)) is not None and m > cp_minor
    ]
    if newer:
        message = (
            f"Nodes {names(newer)} run a kubelet newer than the control plane ({kind} at {current})"
        )
        yield rule.finding(
            pool, pool_subject(pool), message, severity=Severity.ERROR, instances=tuple(newer)
        )


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
        "metadata.generation equals status.observedGeneration and Ready is True, but some pool Nodes' kubeletVersion differs from the desired version",
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
        "the pool's version against the control plane's (its version, status.version, or the topology version): newer is an error, more than 3 minors behind (2 before 1.28) a warning, a kubeadm pool on another minor is info, a pool already on the version the control plane is still rolling to is a warning, and kubelets newer than the control plane are an error",
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
        (CAPI + "12178",),
        topology_version_strings,
    ),
]
