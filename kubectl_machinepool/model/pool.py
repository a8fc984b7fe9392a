"""MachinePools as operators need to see them, built purely from a Snapshot.

Both API generations map onto one model. The replica counts are the Node-based ones: on v1beta2
the top-level ready/available counters of a pool without MachinePool Machines are copies of what
the provider reports (status.replicas), so the truth is status.deprecated.v1beta1; on v1beta1
it is the top-level status.
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group, version_of
from kubectl_machinepool.base.fields import (
    RawObject,
    count,
    dig,
    field_keys,
    integer,
    items,
    mapping,
    string_map,
    strings,
    text,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.autoscaler import AutoscalerBounds, autoscaler_bounds
from kubectl_machinepool.model.conditions import Conditions, read_conditions
from kubectl_machinepool.model.ownership import TOPOLOGY_OWNED, Applier, appliers
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.registry import infra_pool

PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
REPLICAS_MANAGED_BY = "cluster.x-k8s.io/replicas-managed-by"


@record
class TemplateRef:
    """A reference from a MachinePool template; version is known only for v1beta1 refs."""

    api_group: str
    kind: str
    name: str
    version: str | None = None


def names_machines(machine_kind: str | None, infra_kind: str | None) -> bool:
    """Whether an infra pool with this status.infrastructureMachineKind has MachinePool Machines.

    Core creates Machines when the infra pool names a machine kind; GCPManagedMachinePool names
    its own kind, for which no per-instance objects exist.
    """
    return bool(machine_kind) and machine_kind != infra_kind


@record
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
    infrastructure_ref: TemplateRef | None
    bootstrap_ref: TemplateRef | None
    failure_domains: tuple[str, ...]
    # From the infra pool's status.infrastructureMachineKind; None when the infra pool is unread.
    infra_pool_found: bool
    machine_kind: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    provider_ids: tuple[str, ...]
    # status.nodeRefs as (name, uid); uid is absent on older objects.
    node_refs: tuple[tuple[str, str | None], ...]
    min_ready_seconds: int
    conditions: Conditions
    # The pool's own (terminal, never cleared) failureReason: failureMessage.
    failure: str | None
    generation: int | None
    observed_generation: int | None
    # spec.version of the infra pool for kinds that keep the Kubernetes version there (OKE).
    infra_version: str | None
    # The object as read: what `list -o jsonpath` and --sort-by run on. Not part of equality,
    # which says whether what the model shows changed (list -w).
    raw: RawObject = field(default_factory=dict, compare=False, repr=False)
    # The kubeconfig context a fleet view (--contexts) read it through; None for one cluster.
    context: str | None = None
    # Who applies it from outside, as its own signals show (ownership.py).
    owners: tuple[Applier, ...] = ()

    @property
    def desired_version(self) -> str | None:
        """The Kubernetes version the provider rolls to: the infra object's where it keeps one."""
        return self.infra_version or self.version

    @property
    def paused(self) -> bool:
        return PAUSED_ANNOTATION in self.annotations

    @property
    def topology_owned(self) -> bool:
        return TOPOLOGY_OWNED in self.labels

    @property
    def replicas_managed_by(self) -> str | None:
        """Who else drives spec.replicas; upstream counts any value but "false" as set."""
        value = self.annotations.get(REPLICAS_MANAGED_BY)
        if value is None or value.lower() == "false":
            return None
        return value or "(empty value)"

    @property
    def autoscaler(self) -> AutoscalerBounds:
        return autoscaler_bounds(self.annotations)

    @property
    def autoscaler_bounds(self) -> tuple[int | None, int | None]:
        """(min, max) as cluster-autoscaler reads them; None: unset, or a value it refuses."""
        bounds = self.autoscaler
        return bounds.low, bounds.high

    @property
    def has_machines(self) -> bool | None:
        """Whether the pool has MachinePool Machines (None: the infra pool could not be read)."""
        if not self.infra_pool_found:
            return None
        infra_kind = self.infrastructure_ref.kind if self.infrastructure_ref else None
        return names_machines(self.machine_kind, infra_kind)


def _ref(raw: Any) -> TemplateRef | None:
    kind = text(dig(raw, "kind"))
    if kind is None:
        return None
    return TemplateRef(
        api_group=ref_group(raw),
        kind=kind,
        name=text(dig(raw, "name")) or "",
        version=version_of(text(dig(raw, "apiVersion")) or "") or None,
    )


def _count(value: Any) -> int:
    # Counters are omitempty upstream: absent means 0 (and so does a negative one, invalid).
    return count(value) or 0


# minReadySeconds is an int32 upstream; a larger value is invalid and would overflow datetimes.
_INT32_MAX = 2**31 - 1


def _legacy_status(pool: RawObject) -> dict[str, Any]:
    """Where the old (v1beta1) status lives: top level in v1beta1, deprecated.v1beta1 in v1beta2."""
    status = mapping(pool.get("status"))
    if (text(pool.get("apiVersion")) or "").endswith("/v1beta1"):
        return status
    return mapping(dig(status, "deprecated", "v1beta1"))


def node_counts(pool: RawObject) -> tuple[int, int]:
    """(ready, available) Nodes of a MachinePool in either API generation."""
    legacy = _legacy_status(pool)
    return _count(legacy.get("readyReplicas")), _count(legacy.get("availableReplicas"))


def _failure(pool: RawObject) -> str | None:
    legacy = _legacy_status(pool)
    parts = [text(legacy.get("failureReason")), text(legacy.get("failureMessage"))]
    return ": ".join(p for p in parts if p) or None


def _infra_version(infra_ref: TemplateRef | None, infra: RawObject | None) -> str | None:
    """The Kubernetes version kept on the infra object, for kinds whose provider deploys it
    instead of the MachinePool's (#7248)."""
    provider = infra_pool(infra_ref.api_group, infra_ref.kind) if infra_ref else None
    deployed = [f for f in provider.version_fields if f.deployed] if provider else []
    return text(dig(infra, *field_keys(deployed[0].path))) if deployed else None


def machine_pool(pool: RawObject, snapshot: Snapshot) -> MachinePool:
    meta = mapping(pool.get("metadata"))
    spec = mapping(pool.get("spec"))
    template = mapping(dig(spec, "template", "spec"))
    status = mapping(pool.get("status"))
    namespace = text(meta.get("namespace")) or ""
    infra_ref = _ref(template.get("infrastructureRef"))
    infra = (
        snapshot.find(infra_ref.api_group, infra_ref.kind, namespace, infra_ref.name)
        if infra_ref
        else None
    )
    ready, available = node_counts(pool)
    # minReadySeconds moved into the template in v1beta2.
    min_ready = template.get("minReadySeconds", spec.get("minReadySeconds"))
    machine_kind = text(dig(infra, "status", "infrastructureMachineKind"))
    return MachinePool(
        namespace=namespace,
        name=text(meta.get("name")) or "",
        uid=text(meta.get("uid")) or "",
        api_version=text(pool.get("apiVersion")) or "",
        cluster=text(spec.get("clusterName")) or "",
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        desired=count(spec.get("replicas")),
        current=_count(status.get("replicas")),
        ready=ready,
        available=available,
        phase=text(status.get("phase")) or "",
        version=text(template.get("version")),
        infrastructure_ref=infra_ref,
        bootstrap_ref=_ref(dig(template, "bootstrap", "configRef")),
        failure_domains=strings(spec.get("failureDomains")),
        infra_pool_found=infra is not None,
        machine_kind=machine_kind,
        labels=string_map(meta.get("labels")),
        annotations=string_map(meta.get("annotations")),
        provider_ids=strings(spec.get("providerIDList")),
        node_refs=tuple(
            (text(r.get("name")) or "", text(r.get("uid"))) for r in items(status.get("nodeRefs"))
        ),
        min_ready_seconds=min(_count(min_ready), _INT32_MAX),
        conditions=read_conditions(pool),
        failure=_failure(pool),
        generation=integer(meta.get("generation")),
        observed_generation=integer(status.get("observedGeneration")),
        infra_version=_infra_version(infra_ref, infra),
        raw=pool,
        owners=appliers(pool),
    )


def machine_pools(snapshot: Snapshot) -> list[MachinePool]:
    """Every MachinePool in the snapshot, ordered like kubectl: by namespace, then name."""
    pools = [machine_pool(obj, snapshot) for obj in snapshot.of_kind(CAPI_GROUP, "MachinePool")]
    return sorted(pools, key=lambda p: (p.namespace, p.name))
