"""What a drain of a Node would meet: the PodDisruptionBudgets covering the pods it evicts.

Pure: built from the workload cluster's Pods on the Node and its budgets, read by kube/workload.py.
"""

from __future__ import annotations

from kubectl_machinepool.base.fields import RawObject, dig, integer, items, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.selector import selector_matches


@record
class Budget:
    """A PodDisruptionBudget covering pods on the Node, as the workload cluster reports it now."""

    namespace: str
    name: str
    disruptions_allowed: int
    pods: tuple[str, ...]


@record
class Disruption:
    """What a drain of the Node would meet; budgets is None when it could not be checked."""

    budgets: tuple[Budget, ...] | None
    note: str | None = None

    @property
    def blocking(self) -> tuple[Budget, ...]:
        return tuple(b for b in self.budgets or () if b.disruptions_allowed < 1)


def budget_of(pdb: RawObject, pods: list[RawObject]) -> Budget | None:
    """The budget if its selector covers any of these pods (same namespace), else None."""
    namespace = text(dig(pdb, "metadata", "namespace")) or ""
    selector = dig(pdb, "spec", "selector")
    if not isinstance(selector, dict):
        return None  # policy/v1: a null selector selects nothing, an empty one everything
    covered = [
        text(dig(p, "metadata", "name")) or ""
        for p in pods
        if dig(p, "metadata", "namespace") == namespace
        and selector_matches(selector, mapping(dig(p, "metadata", "labels")))
    ]
    if not covered:
        return None
    return Budget(
        namespace,
        text(dig(pdb, "metadata", "name")) or "",
        integer(dig(pdb, "status", "disruptionsAllowed")) or 0,
        tuple(sorted(covered)),
    )


def evictable(pod: RawObject) -> bool:
    """Pods Cluster API's drain evicts: running, not DaemonSet-owned, not static, not skipped."""
    if dig(pod, "status", "phase") in ("Succeeded", "Failed"):
        return False
    if dig(pod, "metadata", "labels", "cluster.x-k8s.io/drain") == "skip":
        return False
    if "kubernetes.io/config.mirror" in mapping(dig(pod, "metadata", "annotations")):
        return False
    return not any(
        o.get("kind") == "DaemonSet" for o in items(dig(pod, "metadata", "ownerReferences"))
    )


def disruption_of(pods: list[RawObject], pdbs: list[RawObject]) -> Disruption:
    drained = [p for p in pods if evictable(p)]
    budgets = [b for b in (budget_of(pdb, drained) for pdb in pdbs) if b is not None]
    return Disruption(tuple(sorted(budgets, key=lambda b: (b.namespace, b.name))))
