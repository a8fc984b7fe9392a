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

from kubectl_machinepool.conditions import Conditions, read_conditions
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, group_of
from kubectl_machinepool.timeutil import parse_time

PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
REPLICAS_MANAGED_BY = "cluster.x-k8s.io/replicas-managed-by"
AUTOSCALER_MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
AUTOSCALER_MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"


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
    labels: dict[str, str]
    annotations: dict[str, str]
    provider_ids: tuple[str, ...]
    node_ref_names: tuple[str, ...]
    min_ready_seconds: int
    conditions: Conditions

    @property
    def paused(self) -> bool:
        return PAUSED_ANNOTATION in self.annotations

    @property
    def replicas_managed_by(self) -> str | None:
        """Who else drives spec.replicas; upstream counts any value but "false" as set."""
        value = self.annotations.get(REPLICAS_MANAGED_BY)
        if value is None or value.lower() == "false":
            return None
        return value or "(empty value)"

    @property
    def autoscaler_bounds(self) -> tuple[int | None, int | None]:
        return _int_or_none(self.annotations.get(AUTOSCALER_MIN)), _int_or_none(
            self.annotations.get(AUTOSCALER_MAX)
        )

    @property
    def has_machines(self) -> bool | None:
        """Whether the pool has MachinePool Machines (None: the infra pool could not be read)."""
        if not self.infra_pool_found:
            return None
        return bool(self.machine_kind)


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


def _int_or_none(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


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
    # minReadySeconds moved into the template in v1beta2.
    min_ready = template.get("minReadySeconds", spec.get("minReadySeconds"))
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
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
        provider_ids=tuple(str(p) for p in spec.get("providerIDList") or ()),
        node_ref_names=tuple(str(r.get("name", "")) for r in status.get("nodeRefs") or ()),
        min_ready_seconds=_int(min_ready),
        conditions=read_conditions(pool),
    )


def machine_pools(snapshot: Snapshot) -> list[MachinePool]:
    """Every MachinePool in the snapshot, ordered like kubectl: by namespace, then name."""
    pools = [machine_pool(obj, snapshot) for obj in snapshot.of_kind(CAPI_GROUP, "MachinePool")]
    return sorted(pools, key=lambda p: (p.namespace, p.name))
