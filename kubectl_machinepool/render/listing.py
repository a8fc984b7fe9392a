"""`list` output: model in, text out. Renderers get `now` and the colour decision passed in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_machinepool.color import Palette
from kubectl_machinepool.humanize import age
from kubectl_machinepool.model import MachinePool
from kubectl_machinepool.render.structured import SCHEMA_VERSION, pool_summary, to_json, to_yaml
from kubectl_machinepool.render.table import NAME_WIDTH, clip, table
from kubectl_machinepool.safetext import escape


@dataclass(frozen=True, slots=True)
class ListView:
    pools: Sequence[MachinePool]
    now: datetime
    palette: Palette
    all_namespaces: bool = False
    no_headers: bool = False


def _or_none(value: object) -> str:
    return "<none>" if value is None or value == "" else clip(escape(str(value)))


def _phase(pool: MachinePool, palette: Palette) -> str:
    phase = clip(escape(pool.phase or "<none>"))
    if pool.phase == "Running":
        return palette.good(phase)
    if pool.phase in ("Failed", "Deleting", "Unknown"):
        return palette.bad(phase)
    return palette.warn(phase)


def _machines(pool: MachinePool) -> str:
    return {True: "yes", False: "no", None: "<unknown>"}[pool.has_machines]


def _list_row(pool: MachinePool, view: ListView, wide: bool) -> list[str]:
    ready = str(pool.ready)
    if pool.desired is not None and pool.ready != pool.desired:
        ready = view.palette.warn(ready)
    row = [
        clip(escape(pool.name), NAME_WIDTH),
        _or_none(pool.cluster),
        "<unset>" if pool.desired is None else str(pool.desired),
        str(pool.current),
        ready,
        str(pool.available),
        _phase(pool, view.palette),
        _or_none(pool.version),
        _or_none(pool.infrastructure_ref and pool.infrastructure_ref.kind),
        _machines(pool),
        age(pool.created, view.now),
    ]
    if wide:
        row += [
            clip(escape(",".join(pool.failure_domains))) or "<none>",
            _or_none(pool.bootstrap_ref and pool.bootstrap_ref.kind),
        ]
    return [clip(escape(pool.namespace), NAME_WIDTH), *row] if view.all_namespaces else row


LIST_COLUMNS = [
    "NAME",
    "CLUSTER",
    "DESIRED",
    "CURRENT",
    "READY",
    "AVAILABLE",
    "PHASE",
    "VERSION",
    "INFRA",
    "MACHINES",
    "AGE",
]
WIDE_COLUMNS = ["FAILURE DOMAINS", "BOOTSTRAP"]


def list_table(view: ListView, wide: bool = False) -> str:
    headers = LIST_COLUMNS + (WIDE_COLUMNS if wide else [])
    if view.all_namespaces:
        headers = ["NAMESPACE", *headers]
    rows = [_list_row(pool, view, wide) for pool in view.pools]
    return table(headers, rows, view.no_headers)


def list_document(view: ListView) -> dict[str, Any]:
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolSummaryList",
        "items": [pool_summary(pool) for pool in view.pools],
    }


def list_names(view: ListView) -> str:
    return "".join(f"machinepool.cluster.x-k8s.io/{escape(pool.name)}\n" for pool in view.pools)


LIST_FORMATS: dict[str, Callable[[ListView], str]] = {
    "table": list_table,
    "wide": lambda view: list_table(view, wide=True),
    "json": lambda view: to_json(list_document(view)),
    "yaml": lambda view: to_yaml(list_document(view)),
    "name": list_names,
}
