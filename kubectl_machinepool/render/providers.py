"""`providers` drawn: the installed providers as kubectl's table, the MachinePool feature gate,
the infra pool kinds with a yes/no per operation, then each kind in use with why; as one JSON
or YAML document; and docs/providers.md's verdict table, from the same records."""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.inventory import Installed, Inventory, KindInUse
from kubectl_machinepool.providers.capabilities import (
    AUTOSCALER,
    DELETE,
    DESCRIBE,
    FROM_ZERO,
    RESTART,
    UPGRADE,
    Capability,
    capabilities,
    unknown,
)
from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.render.table import clip, table
from kubectl_machinepool.render.wrap import line_width, wrap

PROVIDER_HEADER = ("NAME", "TYPE", "VERSION", "NAMESPACE", "FROM")
# One short column per operation, in OPERATIONS' order.
COLUMNS = {
    DESCRIBE: "INSTANCES",
    DELETE: "DELETE-ONE",
    RESTART: "RESTART",
    UPGRADE: "UPGRADE",
    FROM_ZERO: "FROM-ZERO",
    AUTOSCALER: "AUTOSCALER",
}
KIND_HEADER = ("KIND", "POOLS", *COLUMNS.values())
PAUSE = "a pause does not stop"
_LABEL = max(len(label) for label in (*COLUMNS, PAUSE)) + 1
WIDTH = 100


def _of(kind: KindInUse) -> tuple[Capability, ...]:
    return capabilities(kind.provider) if kind.provider else unknown(kind.kind)


def _installed_row(found: Installed) -> tuple[str, ...]:
    cells = (found.name, found.type, found.version, found.namespace, found.source)
    return tuple(clip(escape(cell)) or "<unknown>" for cell in cells)


def _kind_row(kind: KindInUse) -> tuple[str, ...]:
    return (clip(escape(kind.kind)), str(kind.pools), *(c.answer.value for c in _of(kind)))


def _providers_lines(inventory: Inventory, no_headers: bool) -> str:
    if inventory.providers:
        rows = [_installed_row(p) for p in inventory.providers]
        return table(PROVIDER_HEADER, rows, no_headers)
    if not inventory.providers_read:
        return "The installed providers are not known: they could not be read (see the warnings).\n"
    return (
        "No provider found: no clusterctl Provider object, and no Deployment labelled "
        "cluster.x-k8s.io/provider.\n"
    )


def _scope(inventory: Inventory) -> str:
    return f"in namespace {inventory.namespace}" if inventory.namespace else "in every namespace"


def _kind_block(kind: KindInUse, width: int) -> list[str]:
    group = escape(kind.group) or "<no group>"
    lines = [f"{escape(kind.kind)} ({group}), {kind.pools} pool{'s' * (kind.pools != 1)}:"]
    said = [(c.operation, f"{c.answer.value}: {c.reason}") for c in _of(kind)]
    if kind.provider:
        said.append((PAUSE, kind.provider.operations.pause_caveat))
    for operation, text in said:
        lead = f"  {operation + ':':<{_LABEL}} "
        lines += wrap(text, width, lead, " " * len(lead))
    return lines


def providers_text(
    inventory: Inventory, width: int | None = None, *, no_headers: bool = False
) -> str:
    """Providers, gate, kinds: the kinds in use each followed by why, or every kind's row."""
    room = line_width(width, WIDTH)
    out = _providers_lines(inventory, no_headers)
    gate = inventory.gate
    out += "\n" + "\n".join(
        wrap(f"{gate.state}: {escape(gate.reason)}", room, "MachinePool feature gate: ", "  ")
    )
    out += "\n\n"
    if not inventory.kinds_read:
        return out + (
            f"The infra pool kinds in use {_scope(inventory)} are not known: MachinePools could "
            "not be read (see the warnings).\n"
        )
    if not inventory.kinds:
        return out + f"No MachinePools {_scope(inventory)}: no infra pool kind is in use.\n"
    out += table(KIND_HEADER, [_kind_row(k) for k in inventory.kinds], no_headers)
    if inventory.every_kind:
        return out
    for kind in inventory.kinds:
        out += "\n" + "".join(line + "\n" for line in _kind_block(kind, room))
    return out


def _kind_doc(kind: KindInUse) -> dict[str, Any]:
    document: dict[str, Any] = {
        "group": kind.group,
        "kind": kind.kind,
        "pools": kind.pools,
        "known": kind.provider is not None,
        "operations": [
            {"operation": c.operation, "answer": c.answer.value, "reason": c.reason}
            for c in _of(kind)
        ],
    }
    if kind.provider:
        document["rolls"] = kind.provider.operations.rolls
        document["pauseCaveat"] = kind.provider.operations.pause_caveat
    return document


def providers_document(inventory: Inventory) -> dict[str, Any]:
    return {
        "providers": [
            {
                "name": p.name,
                "type": p.type,
                "version": p.version,
                "namespace": p.namespace,
                "from": p.source,
            }
            for p in inventory.providers
        ],
        "providersNamedBy": inventory.named_by or None,
        "providersRead": inventory.providers_read,
        "machinePoolFeatureGate": {"state": inventory.gate.state, "reason": inventory.gate.reason},
        "poolsNamespace": inventory.namespace,
        "kindsRead": inventory.kinds_read,
        "kinds": [_kind_doc(k) for k in inventory.kinds],
        "notes": list(inventory.notes),
    }


def verdict_table() -> str:
    """docs/providers.md's table: every kind the registry holds, a word per operation."""
    header = ("Kind", "Provider's object", *COLUMNS)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for provider in PROVIDERS:
        words = [c.answer.value for c in capabilities(provider)]
        lines.append("| " + " | ".join([provider.kind, provider.cloud_object, *words]) + " |")
    return "\n".join(lines) + "\n"
