"""Who applies a pool from outside (model/ownership.py), as describe and list show it: one line
of text, or one document per applier with the evidence and the owner object to read."""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.ownership import Applier, OwnerRef, pool_owner_line
from kubectl_machinepool.model.pool import MachinePool


def owner_line(pool: MachinePool, none: str) -> str:
    """The appliers in a few words each, or `none` when no signal shows one."""
    return escape(pool_owner_line(pool.owners, pool.annotations)) or none


def _ref(ref: OwnerRef | None) -> dict[str, str] | None:
    if ref is None:
        return None
    return {
        "apiVersion": f"{ref.group}/{ref.version}",
        "kind": ref.kind,
        "namespace": ref.namespace,
        "name": ref.name,
    }


def _applier(applier: Applier) -> dict[str, Any]:
    return {
        "kind": applier.kind,
        "name": applier.name,
        "gitops": applier.gitops,
        "evidence": applier.evidence,
        "owner": _ref(applier.ref),
        "fieldManagers": list(applier.managers),
    }


def owners_document(pool: MachinePool) -> list[dict[str, Any]]:
    return [_applier(a) for a in pool.owners]
