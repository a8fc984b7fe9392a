"""Revision histories on MachinePools, as upgrade, scale and rollout restart record them, for
tests of rollout history and rollout undo: a dump of a shipped example with a history, or the
annotation of a hostile one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    REPLICAS,
    START,
    VERSION,
    Change,
    Revision,
    encode,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
GALLERY = "spec.template.image.computeGallery.version"


def vmss_history() -> tuple[Revision, ...]:
    """examples/azure-vmss.yaml's pool upgraded, scaled and restarted (as its objects stand)."""
    pool = ("MachinePool", CAPI, "vmss-workers")
    return (
        Revision(
            1,
            "upgrade --version v1.33.4",
            "2026-11-20T10:00:00Z",
            "0.1.0",
            (
                Change(*pool, VERSION, "v1.32.9", "v1.33.4"),
                Change("AzureMachinePool", INFRA, "vmss-workers", GALLERY, "1.32.9", "1.33.4"),
            ),
        ),
        Revision(
            2,
            "scale --replicas 3",
            "2026-11-21T10:00:00Z",
            "0.1.0",
            (Change(*pool, REPLICAS, 2, 3),),
        ),
        Revision(
            3,
            "rollout restart",
            "2026-11-22T10:00:00Z",
            "0.1.0",
            (Change(*pool, START, None, "2026-11-22T10:00:00Z"),),
        ),
    )


def annotated(objects: list[dict[str, Any]], pool: str, value: Any) -> list[dict[str, Any]]:
    """The objects with the MachinePool named holding value as its revision annotation."""
    for obj in objects:
        if obj.get("kind") == "MachinePool" and obj["metadata"]["name"] == pool:
            obj["metadata"].setdefault("annotations", {})[ANNOTATION] = value
    return objects


def vmss_dump(directory: Path, value: Any = None) -> str:
    """examples/azure-vmss.yaml with a history on vmss-workers (vmss_history's, unless value
    says another annotation value): the path of the dump written."""
    document = yaml.safe_load((EXAMPLES / "azure-vmss.yaml").read_text())
    annotated(document["items"], "vmss-workers", encode(vmss_history()) if value is None else value)
    path = directory / "vmss-history.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)
