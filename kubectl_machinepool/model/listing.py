"""What `list` shows of a pool beyond its MachinePool: how many of its Nodes are up to date, the
kubelet versions they run, and the findings of the rules list covers (app/listing.py).

Up to date means at the pool's desired version and image. A Node is counted when the pool's
spec.providerIDList holds its providerID (READY's Nodes) and its kubelet runs the desired
version (MachinePool.desired_version: the infra pool's where the provider deploys that one).
The image comes from the infra pool, whose own version and image fields (providers/targets.py)
name a release too: when one of them targets another release than the template (#7248, what
MP1301 reports), no Node can be at both. One on the template's version does not run the image
the infra pool asks for, and one built from that image does not run the template's version, so
none is up to date until the two agree. A roll of a new image at the same Kubernetes version
(CAPZ's latestModelApplied on each instance) is not seen here: rollout status judges instances.
Pure: a PoolDescription in, counts out.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import same_version
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.versionskew import minor, release_minor
from kubectl_machinepool.providers.targets import Target


@record
class ListedPool:
    pool: MachinePool
    # Nodes at the desired version and image; None: the workload cluster's Nodes were not read.
    up_to_date: int | None = None
    # The kubelet versions of the pool's Nodes and how many run each (describe's Versions
    # line); None: the Nodes were not read.
    kubelets: tuple[tuple[str, int], ...] | None = None
    # The codes of the warnings and errors of the rules list covers, in diagnose's order.
    findings: tuple[str, ...] = ()


def targets_off(version: str | None, targets: Iterable[Target]) -> list[Target]:
    """The infra pool's targets of another release than the template's version: another
    minor, or for a version the provider deploys itself, any other version."""
    wanted = minor(version)
    if version is None or wanted is None:
        return []
    return [
        t
        for t in targets
        if release_minor(t.version) != wanted
        or (t.deployed and not same_version(t.version, version))
    ]


def up_to_date(described: PoolDescription) -> int | None:
    """The pool's Nodes at its desired version and image (module docstring)."""
    if described.counts.nodes_matched is None:
        return None
    mp = described.pool
    if targets_off(mp.version, described.version_targets):
        return 0
    wanted = mp.desired_version
    return sum(
        1
        for i in described.instances
        if i.node is not None
        and i.listed
        and i.provider_id
        and (not wanted or same_version(i.node.kubelet_version or "", wanted))
    )


def listed_pool(described: PoolDescription, findings: tuple[str, ...]) -> ListedPool:
    nodes_read = described.counts.nodes_matched is not None
    return ListedPool(
        described.pool,
        up_to_date(described),
        described.kubelet_versions if nodes_read else None,
        findings,
    )
