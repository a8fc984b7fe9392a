"""The writes that remove one instance: delete the Machine, or mark it and scale down by one.

Each write says how to take it back; the plan shows them and writing.py sends them as shown.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.model.nodedrain import stored_drain_timeout, v1beta1_machine
from kubectl_machinepool.plans.deletetarget import Mode, Request, Target
from kubectl_machinepool.plans.scale import scale_write
from kubectl_machinepool.plans.writes import ObjectRef, Write, object_ref
from kubectl_machinepool.providers.registry import annotation_deletes

DELETE_MACHINE_ANNOTATION = "cluster.x-k8s.io/delete-machine"


def _drain_timeout_write(machine_raw: RawObject, machine: ObjectRef, value: timedelta) -> Write:
    seconds = max(1, int(value.total_seconds()))
    old = stored_drain_timeout(machine_raw)
    if v1beta1_machine(machine_raw):
        field, new, patch = "spec.nodeDrainTimeout", f"{seconds}s", "nodeDrainTimeout"
        body: dict[str, Any] = {"spec": {patch: f"{seconds}s"}}
        undo: dict[str, Any] = {"spec": {patch: old}}
    else:
        field, new = "spec.deletion.nodeDrainTimeoutSeconds", str(seconds)
        body = {"spec": {"deletion": {"nodeDrainTimeoutSeconds": seconds}}}
        deletion = mapping(dig(machine_raw, "spec", "deletion"))
        if set(deletion) - {"nodeDrainTimeoutSeconds"}:
            undo = {"spec": {"deletion": {"nodeDrainTimeoutSeconds": old}}}
        else:
            # An empty spec.deletion is invalid (minProperties 1): drop it as it was absent.
            undo = {"spec": {"deletion": deletion or None}}
    return Write(
        "patch",
        machine,
        f"set {field}={new} on {machine.display}",
        body,
        undo=undo,
        undo_summary=f"set {field} back to {old if old is not None else 'unset'}",
        done="patched",
    )


def _scale_down_writes(target: Target, machine: ObjectRef, now: datetime) -> list[Write]:
    stamp = format_time(now)
    # Put back what was there (cluster-autoscaler may have marked it first), not just remove.
    before = mapping(dig(target.machine_raw, "metadata", "annotations")).get(
        DELETE_MACHINE_ANNOTATION
    )
    undo_summary = (
        f"removed the {DELETE_MACHINE_ANNOTATION} annotation again"
        if before is None
        else f"set the {DELETE_MACHINE_ANNOTATION} annotation back to {before!r}"
    )
    infra_kind = target.pool.infra.kind if target.pool.infra else ""
    undo: dict[str, Any] | None = {"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: before}}}
    kept_because = ""
    if annotation_deletes(infra_kind):
        # The provider may already be deleting the instance: removing the mark proves nothing.
        undo = None
        kept_because = f"the {infra_kind} provider deletes an annotated Machine on the mark alone"
    desired = target.pool.pool.desired or 0
    return [
        Write(
            "patch",
            machine,
            f"annotate {machine.display} {DELETE_MACHINE_ANNOTATION}={stamp}",
            {"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: stamp}}},
            undo=undo,
            undo_summary=undo_summary,
            kept_because=kept_because,
            done="annotated",
        ),
        scale_write(target.pool_raw, desired, desired - 1),
    ]


def writes_for(target: Target, request: Request, now: datetime) -> tuple[Write, ...]:
    """The writes, in order; empty when there is no Machine to write to."""
    if target.machine_raw is None:
        return ()
    machine = object_ref(target.machine_raw, "machines")
    writes: list[Write] = []
    if request.drain_timeout is not None:
        writes.append(_drain_timeout_write(target.machine_raw, machine, request.drain_timeout))
    if request.mode is Mode.SCALE_DOWN:
        writes += _scale_down_writes(target, machine, now)
    else:
        writes.append(Write("delete", machine, f"delete {machine.display}", done="deleted"))
    return tuple(writes)
