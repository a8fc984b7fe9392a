"""Can one instance of a pool be deleted through Cluster API, and what happens then?

The pool-level half of the decision rule (docs/delete-machine.md): the pool must have MachinePool
Machines (its infra pool sets status.infrastructureMachineKind to a kind other than its own),
and the provider's infra-machine controller must really delete the cloud instance. describe shows
this verdict; delete-machine adds the per-Machine checks on top.
"""

from __future__ import annotations

from enum import Enum

from kubectl_machinepool.base.records import record
from kubectl_machinepool.providers.registry import instance_deletion


class Verdict(Enum):
    SUPPORTED = "supported"
    NOT_SUPPORTED = "not-supported"
    UNVERIFIED = "unverified"


@record
class DeletionVerdict:
    verdict: Verdict
    # One sentence: why, and for a supported pool what deleting a Machine does.
    reason: str
    # What to do instead when not supported.
    instead: str | None = None
    # Whether --scale-down (annotate, then lower replicas) removes that very instance.
    honours_delete_annotation: bool | None = None
    scale_down: str | None = None


_LOWER_REPLICAS = "change spec.replicas (kubectl scale machinepool); the cloud picks the instance"


def pool_deletion_verdict(  # noqa: PLR0911 - one return per row of the decision table
    infra_group: str | None,
    infra_kind: str | None,
    machine_kind: str | None,
    replicas_managed_by: str | None = None,
) -> DeletionVerdict:
    """Whether single-Machine deletion works for a pool whose infra pool is (group, kind, K)."""
    instead = _LOWER_REPLICAS
    if replicas_managed_by:
        instead = (
            "replicas are managed outside Cluster API "
            f"(replicas-managed-by: {replicas_managed_by}): scale through that autoscaler or "
            "node-pool setting; the cloud picks the instance"
        )
    if not infra_kind:
        return DeletionVerdict(Verdict.UNVERIFIED, "the infra pool could not be read")
    if not machine_kind:
        return DeletionVerdict(
            Verdict.NOT_SUPPORTED,
            f"{infra_kind} sets no status.infrastructureMachineKind: "
            "the pool has no MachinePool Machines",
            instead,
        )
    if machine_kind == infra_kind:
        return DeletionVerdict(
            Verdict.NOT_SUPPORTED,
            f"{infra_kind} names its own kind as machine kind: there are no per-instance Machines",
            instead,
        )
    known = instance_deletion(infra_group, infra_kind, machine_kind)
    if known is None:
        return DeletionVerdict(
            Verdict.UNVERIFIED,
            f"{infra_kind} has {machine_kind} Machines, but what deleting one does in the cloud "
            "is not verified for this provider",
        )
    if not known.deletes_instance:
        return DeletionVerdict(Verdict.NOT_SUPPORTED, known.effect, instead)
    if replicas_managed_by and known.sticky_when_managed:
        # The provider copies the cloud's count into spec.replicas: nothing grows the pool back.
        return DeletionVerdict(
            Verdict.SUPPORTED,
            known.sticky_when_managed,
            None,
            False,
            "not needed: with replicas-managed-by the removal already sticks",
        )
    return DeletionVerdict(
        Verdict.SUPPORTED,
        known.effect,
        None,
        known.honours_delete_annotation,
        known.scale_down_effect,
    )
