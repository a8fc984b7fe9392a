"""Objects as rows: identity, lifecycle and health of any object, Machines and Nodes.

These read only what every provider and both Cluster API generations agree on, so a row can be
shown for any kind, including provider kinds this tool has never heard of.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.fields import (
    RawObject,
    dig,
    flag,
    items,
    mapping,
    string_map,
    strings,
    text,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.conditions import Conditions, read_conditions


@record
class ObjectState:
    """Any Kubernetes object as a row: identity, lifecycle and health."""

    kind: str
    api_version: str
    namespace: str
    name: str
    uid: str
    created: datetime | None
    deleting_since: datetime | None
    # What the object itself says about readiness (status.initialization.provisioned,
    # status.ready, ...); None when it says nothing.
    ready: bool | None
    phase: str | None
    conditions: Conditions
    failure: str | None

    @property
    def group(self) -> str:
        return group_of(self.api_version)


@record
class MachineState:
    object: ObjectState
    provider_id: str | None
    version: str | None
    node_name: str | None
    infra_kind: str | None
    infra_name: str | None
    labels: dict[str, str]
    annotations: dict[str, str]


@record
class NodeState:
    name: str
    uid: str
    provider_id: str | None
    created: datetime | None
    deleting_since: datetime | None
    ready: bool | None
    ready_since: datetime | None
    kubelet_version: str | None
    unschedulable: bool
    taints: tuple[str, ...]
    conditions: Conditions
    labels: dict[str, str]
    annotations: dict[str, str]


# Where providers put failureReason/-Message (errorReason for AKS); status.deprecated.v1beta1
# keeps Cluster API's own.
_FAILURE_FIELDS = frozenset(
    {"failureReason", "errorReason", "failureMessage", "errorMessage", "failureMessages"}
)


def _failure(status: dict[str, Any]) -> str | None:
    """failureReason/-Message in any of the places providers put them (errorReason for AKS)."""
    legacy = mapping(dig(status, "deprecated", "v1beta1"))
    if _FAILURE_FIELDS.isdisjoint(status) and _FAILURE_FIELDS.isdisjoint(legacy):
        return None  # a healthy object, nearly all of them: no text() of absent fields
    reason = text(status.get("failureReason")) or text(status.get("errorReason"))
    reason = reason or text(legacy.get("failureReason"))
    message = text(status.get("failureMessage")) or text(status.get("errorMessage"))
    message = (
        message
        or text(legacy.get("failureMessage"))
        or "; ".join(strings(status.get("failureMessages")))
    )
    return ": ".join(p for p in (reason, message) if p) or None


def _ready_flag(status: dict[str, Any]) -> bool | None:
    # v1beta2 contracts: provisioned (infra), dataSecretCreated (bootstrap); v1beta1: ready.
    for path in (
        ("initialization", "provisioned"),
        ("initialization", "dataSecretCreated"),
        ("ready",),
    ):
        value = flag(dig(status, *path))
        if value is not None:
            return value
    return None


def infra_pool_state(obj: RawObject) -> ObjectState:
    """The MachinePool controller (v1.14) takes an infra pool's readiness from status.ready
    alone (external.IsReady), whatever contract the provider follows: absent is not ready."""
    return replace(object_state(obj), ready=flag(dig(obj, "status", "ready")) is True)


def object_state(obj: RawObject) -> ObjectState:
    meta = mapping(obj.get("metadata"))
    status = mapping(obj.get("status"))
    return ObjectState(
        kind=text(obj.get("kind")) or "",
        api_version=text(obj.get("apiVersion")) or "",
        namespace=text(meta.get("namespace")) or "",
        name=text(meta.get("name")) or "",
        uid=text(meta.get("uid")) or "",
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        ready=_ready_flag(status),
        phase=text(status.get("phase")),
        conditions=read_conditions(obj),
        failure=_failure(status),
    )


def machine_state(obj: RawObject) -> MachineState:
    spec = mapping(obj.get("spec"))
    ref = mapping(spec.get("infrastructureRef"))
    return MachineState(
        object=object_state(obj),
        provider_id=text(spec.get("providerID")),
        version=text(spec.get("version")),
        node_name=text(dig(obj, "status", "nodeRef", "name")),
        infra_kind=text(ref.get("kind")),
        infra_name=text(ref.get("name")),
        labels=string_map(dig(obj, "metadata", "labels")),
        annotations=string_map(dig(obj, "metadata", "annotations")),
    )


def node_state(obj: RawObject) -> NodeState:
    meta = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    conditions = read_conditions(obj)
    ready = conditions.get("Ready")
    taints = tuple(
        f"{text(t.get('key'))}:{text(t.get('effect')) or ''}"
        for t in items(spec.get("taints"))
        if text(t.get("key"))
    )
    return NodeState(
        name=text(meta.get("name")) or "",
        uid=text(meta.get("uid")) or "",
        provider_id=text(spec.get("providerID")),
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        ready=None if ready is None or ready.status == "Unknown" else ready.status == "True",
        ready_since=ready.since if ready is not None and ready.status == "True" else None,
        kubelet_version=text(dig(obj, "status", "nodeInfo", "kubeletVersion")),
        unschedulable=flag(spec.get("unschedulable")) is True,
        taints=taints,
        conditions=conditions,
        labels=string_map(meta.get("labels")),
        annotations=string_map(meta.get("annotations")),
    )
