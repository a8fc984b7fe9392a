"""Objects as rows: identity, lifecycle and health of any object, Machines and Nodes.

These read only what every provider and both Cluster API generations agree on, so a row can be
shown for any kind, including provider kinds this tool has never heard of.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kubectl_machinepool.conditions import Conditions, read_conditions
from kubectl_machinepool.snapshot import RawObject
from kubectl_machinepool.timeutil import parse_time


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class MachineState:
    object: ObjectState
    provider_id: str | None
    version: str | None
    node_name: str | None
    infra_kind: str | None
    infra_name: str | None
    annotations: dict[str, str]


@dataclass(frozen=True, slots=True)
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
    annotations: dict[str, str]


def _failure(status: RawObject) -> str | None:
    legacy = (status.get("deprecated") or {}).get("v1beta1") or {}
    reason = status.get("failureReason") or status.get("errorReason") or legacy.get("failureReason")
    message = (
        status.get("failureMessage")
        or status.get("errorMessage")
        or legacy.get("failureMessage")
        or "; ".join(str(m) for m in status.get("failureMessages") or ())
    )
    if not reason and not message:
        return None
    return ": ".join(str(p) for p in (reason, message) if p)


def _ready_flag(status: RawObject) -> bool | None:
    initialization = status.get("initialization") or {}
    # v1beta2 contracts: provisioned (infra), dataSecretCreated (bootstrap); v1beta1: ready.
    flags = (
        initialization.get("provisioned"),
        initialization.get("dataSecretCreated"),
        status.get("ready"),
    )
    for value in flags:
        if isinstance(value, bool):
            return value
    return None


def object_state(obj: RawObject) -> ObjectState:
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    return ObjectState(
        kind=str(obj.get("kind", "")),
        api_version=str(obj.get("apiVersion", "")),
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        ready=_ready_flag(status),
        phase=status.get("phase") or None,
        conditions=read_conditions(obj),
        failure=_failure(status),
    )


def machine_state(obj: RawObject) -> MachineState:
    spec = obj.get("spec") or {}
    ref = spec.get("infrastructureRef") or {}
    node_ref = (obj.get("status") or {}).get("nodeRef") or {}
    return MachineState(
        object=object_state(obj),
        provider_id=spec.get("providerID") or None,
        version=spec.get("version") or None,
        node_name=node_ref.get("name") or None,
        infra_kind=ref.get("kind") or None,
        infra_name=ref.get("name") or None,
        annotations=dict((obj.get("metadata") or {}).get("annotations") or {}),
    )


def node_state(obj: RawObject) -> NodeState:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    conditions = read_conditions(obj)
    ready = conditions.get("Ready")
    taints = tuple(
        f"{t.get('key')}:{t.get('effect')}" for t in spec.get("taints") or () if isinstance(t, dict)
    )
    return NodeState(
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        provider_id=spec.get("providerID") or None,
        created=parse_time(meta.get("creationTimestamp")),
        deleting_since=parse_time(meta.get("deletionTimestamp")),
        ready=None if ready is None or ready.status == "Unknown" else ready.status == "True",
        ready_since=ready.since if ready is not None and ready.status == "True" else None,
        kubelet_version=((obj.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion"),
        unschedulable=bool(spec.get("unschedulable")),
        taints=taints,
        conditions=conditions,
        annotations=dict(meta.get("annotations") or {}),
    )
