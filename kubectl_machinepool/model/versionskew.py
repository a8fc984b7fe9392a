"""The kubelet version skew policy, and the control plane version a pool is held to.

Kubernetes' version skew policy: a kubelet may never be newer than the API server, and may trail
it by at most three minors from 1.28 on (two before). Nothing in Cluster API checks this for
MachinePools (only ClusterClass sequences upgrades), so diagnose and upgrade do.
"""

from __future__ import annotations

from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.kubeversion import release, unparseable, version
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.conditions import read_conditions
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.registry import infra_pool


def minor(value: str | None) -> tuple[int, int] | None:
    """The minor of a semantic version (a pool's, a kubelet's), read whole; None for anything
    else, `v1.34` included."""
    found = version(value)
    return found.minor_release if found else None


def release_minor(value: str | None) -> tuple[int, int] | None:
    """The minor of a release as a control plane or a provider field names it: a version, or
    its minor alone (EKS's `1.33`, AKS's orchestratorVersion)."""
    found = release(value)
    return found.minor_release if found else None


def unparseable_versions(mp: MachinePool) -> list[tuple[str, str]]:
    """(where, value) of each version the pool is judged by that is no semantic version: its
    template's, and the one its infra pool's provider deploys instead (OKE's, ROSA's)."""
    found = [("spec.template.spec.version", mp.version)]
    ref = mp.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    if ref is not None and provider is not None:
        infra = f"{ref.kind} {mp.namespace}/{ref.name}"
        found += [
            (f"{infra} {f.path}", mp.infra_version) for f in provider.version_fields if f.deployed
        ]
    return [(where, value) for where, value in found if value and unparseable(value)]


def skew_window(cp_minor: tuple[int, int]) -> int:
    """How many minors a kubelet may trail the API server: 3 from 1.28, 2 before."""
    return 2 if cp_minor < (1, 28) else 3


@record
class ControlPlane:
    kind: str
    desired: str | None
    # The version it runs; for a topology without a readable control plane, the desired one.
    current: str | None
    rolling_out: bool = False


def control_plane(snapshot: Snapshot, namespace: str, cluster: str) -> ControlPlane | None:
    """The Cluster's control plane and its versions, when they can be read."""
    raw = snapshot.find(CAPI_GROUP, "Cluster", namespace, cluster)
    ref = dig(raw, "spec", "controlPlaneRef")
    kind = text(dig(ref, "kind"))
    topology = text(dig(raw, "spec", "topology", "version"))
    if not kind:
        return ControlPlane("Cluster topology", topology, topology) if topology else None
    plane: RawObject | None = snapshot.find(
        ref_group(ref), kind, namespace, text(dig(ref, "name")) or ""
    )
    if plane is None:
        return None
    desired = text(dig(plane, "spec", "version")) or text(dig(plane, "spec", "controlPlaneVersion"))
    current = text(dig(plane, "status", "version")) or desired
    rolling = read_conditions(plane).get("RollingOut")
    return ControlPlane(kind, desired, current, rolling is not None and rolling.status == "True")
