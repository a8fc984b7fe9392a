"""The pause `rollout pause` records on a MachinePool: which objects it set
cluster.x-k8s.io/paused on (RECORD, the tool's own annotation, `Kind/name` joined by commas), so
that `rollout resume` lifts exactly those and `fix` tells a pause this tool made from anyone
else's."""

from __future__ import annotations

from kubectl_machinepool.base.fields import RawObject, dig, mapping, text

RECORD = "kubectl-machinepool/paused"


def recorded(mp: RawObject | None) -> list[str]:
    """The objects the record on the MachinePool says this tool paused."""
    value = text(mapping(dig(mp, "metadata", "annotations")).get(RECORD)) or ""
    return [e for e in value.split(",") if e]
