"""Snapshots the way offline mode builds them: management objects plus the dump's Nodes."""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes

from .scenarios import SCENARIOS

NAMESPACE = "capi-prod"


def snapshot_of(objects: list[dict[str, Any]], nodes_known: bool = True) -> Snapshot:
    nodes = tuple(o for o in objects if o["kind"] == "Node")
    rest = [o for o in objects if o["kind"] != "Node"]
    workloads = [WorkloadNodes(None, None, nodes if nodes_known else None)]
    return Snapshot.of(rest, workloads=workloads)


def scenario_snapshot(name: str, generation: str = "v1beta2", nodes_known: bool = True) -> Snapshot:
    return snapshot_of(SCENARIOS[name](generation, NAMESPACE), nodes_known)
