"""The kubelet version skew policy, and the control plane version a pool is held to.

Kubernetes' version skew policy: a kubelet may never be newer than the API server, and may trail
it by at most three minors from 1.28 on (two before). Nothing in Cluster API checks this for
MachinePools (only ClusterClass sequences upgrades), so diagnose and upgrade do.
"""

from __future__ import annotations

import re

from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.conditions import read_conditions
from kubectl_machinepool.model.snapshot import Snapshot

# ASCII digits, a few of them: int() of a 5000-digit version from a dump would raise.
_MINOR = re.compile(r"v?([0-9]{1,9})\.([0-9]{1,9})(?![0-9])")


def minor(version: str | None) -> tuple[int, int] | None:
    match = _MINOR.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


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
