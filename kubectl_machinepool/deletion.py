"""Can one instance of a pool be deleted through Cluster API, and what happens then?

The pool-level half of the decision rule in machinepool-facts §7: the pool must have MachinePool
Machines (its infra pool sets status.infrastructureMachineKind to a kind other than its own),
and the provider's infra-machine controller must really delete the cloud instance. describe shows
this verdict; delete-machine adds the per-Machine checks on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


class Verdict(Enum):
    SUPPORTED = "supported"
    NOT_SUPPORTED = "not-supported"
    UNVERIFIED = "unverified"


@dataclass(frozen=True, slots=True)
class ProviderBehaviour:
    verdict: Verdict
    # What deleting one Machine does in the cloud.
    effect: str
    # Whether the provider deletes the Machine annotated cluster.x-k8s.io/delete-machine first
    # when replicas go down (cluster-autoscaler's way to remove a chosen instance).
    honours_delete_annotation: bool
    scale_down_effect: str


_REPLACED = "the instance is drained and deleted, then the provider creates a replacement"

# Keyed by (infra pool group, infra pool kind, infrastructureMachineKind); sources in §6.3/§7.
KNOWN: dict[tuple[str, str, str], ProviderBehaviour] = {
    (INFRA_GROUP, "AzureMachinePool", "AzureMachinePoolMachine"): ProviderBehaviour(
        Verdict.SUPPORTED,
        _REPLACED + " (the VMSS grows back to spec.replicas)",
        True,
        "CAPZ deletes the annotated AzureMachinePoolMachine first",
    ),
    (INFRA_GROUP, "AWSMachinePool", "AWSMachine"): ProviderBehaviour(
        Verdict.SUPPORTED,
        _REPLACED + " (the ASG keeps its desired capacity)",
        False,
        "CAPA ignores the annotation: the ASG termination policy picks the instance, undrained",
    ),
    (INFRA_GROUP, "DevMachinePool", "DevMachine"): ProviderBehaviour(
        Verdict.SUPPORTED, _REPLACED, True, "the annotated Machine is removed first"
    ),
    (INFRA_GROUP, "DockerMachinePool", "DockerMachine"): ProviderBehaviour(
        Verdict.SUPPORTED, _REPLACED, True, "the annotated Machine is removed first"
    ),
    (INFRA_GROUP, "KwokMachinePool", "KwokMachine"): ProviderBehaviour(
        Verdict.SUPPORTED, _REPLACED + " (simulated)", False, "the annotation is ignored"
    ),
}
# Pools whose provider lowers spec.replicas to the cloud's count when replicas-managed-by is set.
STICKY_WHEN_MANAGED = {
    "AzureMachinePool": "the instance is drained and deleted and the VMSS stays one smaller; "
    "CAPZ lowers spec.replicas to match (replicas-managed-by)",
}

_OCI_NO_OP = ProviderBehaviour(
    Verdict.NOT_SUPPORTED,
    "CAPOCI only removes the OCIMachinePoolMachine finalizer: the instance keeps running and its "
    "Node is deleted, so it comes back as a new Machine",
    False,
    "the annotation is ignored",
)
for _kind in ("OCIMachinePool", "OCIManagedMachinePool", "OCIVirtualMachinePool"):
    KNOWN[(INFRA_GROUP, _kind, "OCIMachinePoolMachine")] = _OCI_NO_OP


@dataclass(frozen=True, slots=True)
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
    known = KNOWN.get((infra_group or "", infra_kind, machine_kind))
    if known is None:
        return DeletionVerdict(
            Verdict.UNVERIFIED,
            f"{infra_kind} has {machine_kind} Machines, but what deleting one does in the cloud "
            "is not verified for this provider",
        )
    if known.verdict is Verdict.NOT_SUPPORTED:
        return DeletionVerdict(Verdict.NOT_SUPPORTED, known.effect, instead)
    if replicas_managed_by and infra_kind in STICKY_WHEN_MANAGED:
        # CAPZ copies the VMSS capacity into spec.replicas: nothing grows the pool back.
        return DeletionVerdict(
            Verdict.SUPPORTED,
            STICKY_WHEN_MANAGED[infra_kind],
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
