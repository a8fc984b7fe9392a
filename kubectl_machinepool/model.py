"""MachinePools as operators need to see them, built purely from a Snapshot.

Both API generations map onto one model. The replica counts are the Node-based ones: on v1beta2
the top-level ready/available counters of a pool without MachinePool Machines are copies of what
the provider reports (status.replicas), so the truth is status.deprecated.v1beta1; on v1beta1
it is the top-level status.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, group_of


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """A reference from a MachinePool template; version is known only for v1beta1 refs."""

    api_group: str
    kind: str
    name: str
    version: str | None = None


@dataclass(frozen=True, slots=True)
class MachinePool:
    namespace: str
    name: str
    uid: str
    api_version: str
    cluster: str
    created: datetime | None
    deleting_since: datetime | None
    desired: int | None
    # status.replicas: the instance count the infra provider reports.
    current: int
    # Nodes that match spec.providerIDList and are Ready / Ready for minReadySeconds.
    ready: int
    available: int
    phase: str
    version: str | None
    infrastructure_ref: ObjectRef | None
    bootstrap_ref: ObjectRef | None
    failure_domains: tuple[str, ...]
    # From the infra pool's status.infrastructureMachineKind; None when the infra pool is unread.
    infra_pool_found: bool
    machine_kind: str | None

    @property
    def has_machines(self) -> bool | None:
        """Whether the pool has MachinePool Machines (None: the infra pool could not be read)."""
        if not self.infra_pool_found:
            return None
        return bool(self.machine_kind)


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _ref(raw: Any) -> ObjectRef | None:
    if not isinstance(raw, dict) or not raw.get("kind"):
        return None
    api_version = str(raw.get("apiVersion", ""))
    return ObjectRef(
        api_group=str(raw.get("apiGroup") or group_of(api_version)),
        kind=str(raw["kind"]),
        name=str(raw.get("name", "")),
        version=api_version.rpartition("/")[2] or None,
    )


def _int(value: Any) -> int:
    # Counters are omitempty upstream: absent means 0.
    return int(value or 0)


def node_counts(pool: RawObject) -> tuple[int, int]:
    """(ready, available) Nodes of a MachinePool in either API generation."""
    status = pool.get("status") or {}
    if str(pool.get("apiVersion", "")).endswith("/v1beta1"):
        return _int(status.get("readyReplicas")), _int(status.get("availableReplicas"))
    legacy = (status.get("deprecated") or {}).get("v1beta1") or {}
    return _int(legacy.get("readyReplicas")), _int(legacy.get("availableReplicas"))


def machine_pool(pool: RawObject, snapshot: Snapshot) -> MachinePool:
    meta = pool.get("metadata") or {}
    spec = pool.get("spec") or {}
    template = (spec.get("template") or {}).get("spec") or {}
    status = pool.get("status") or {}
    namespace = str(meta.get("namespace", ""))
    infra_ref = _ref(template.get("infrastructureRef"))
    infra = (
        snapshot.find(infra_ref.api_group, infra_ref.kind, namespace, infra_ref.name)
        if infra_ref
        else None
    )
    ready, available = node_counts(pool)
    replicas = spec.get("replicas")
    return MachinePool(
        namespace=namespace,
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        api_version=str(pool.get("apiVersion", "")),
        cluster=str(spec.get("clusterName", "")),
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        desired=None if replicas is None else int(replicas),
        current=_int(status.get("replicas")),
        ready=ready,
        available=available,
        phase=str(status.get("phase") or ""),
        version=template.get("version") or None,
        infrastructure_ref=infra_ref,
        bootstrap_ref=_ref((template.get("bootstrap") or {}).get("configRef")),
        failure_domains=tuple(str(fd) for fd in spec.get("failureDomains") or ()),
        infra_pool_found=infra is not None,
        machine_kind=((infra or {}).get("status") or {}).get("infrastructureMachineKind") or None,
    )


def machine_pools(snapshot: Snapshot) -> list[MachinePool]:
    """Every MachinePool in the snapshot, ordered like kubectl: by namespace, then name."""
    pools = [machine_pool(obj, snapshot) for obj in snapshot.of_kind(CAPI_GROUP, "MachinePool")]
    return sorted(pools, key=lambda p: (p.namespace, p.name))
