"""Renderers for `list`: model in, text out. They get `now` and the colour decision passed in."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import yaml
from tabulate import DataRow, TableFormat, tabulate

from kubectl_machinepool.color import Palette
from kubectl_machinepool.humanize import age
from kubectl_machinepool.model import MachinePool, ObjectRef

# kubectl's printer: left-aligned columns separated by three spaces, no rules.
_KUBECTL_TABLE = TableFormat(
    lineabove=None,
    linebelowheader=None,
    linebetweenrows=None,
    linebelow=None,
    headerrow=None,
    datarow=DataRow("", "   ", ""),
    padding=0,
    with_header_hide=None,
)

LIST_SCHEMA = "kubectl-machinepool/v1alpha1"


@dataclass(frozen=True, slots=True)
class ListView:
    pools: Sequence[MachinePool]
    now: datetime
    palette: Palette
    all_namespaces: bool = False
    no_headers: bool = False


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], no_headers: bool) -> str:
    if not rows:
        return ""
    # Headers go in as a data row: tabulate pads real headers by two extra spaces, kubectl doesn't.
    body = list(rows) if no_headers else [list(headers), *rows]
    text = tabulate(
        body,
        tablefmt=_KUBECTL_TABLE,
        disable_numparse=True,
        colalign=("left",) * len(headers),
    )
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _or_none(value: object) -> str:
    return "<none>" if value is None or value == "" else str(value)


def _phase(pool: MachinePool, palette: Palette) -> str:
    phase = pool.phase or "<none>"
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
        pool.name,
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
            ",".join(pool.failure_domains) or "<none>",
            _or_none(pool.bootstrap_ref and pool.bootstrap_ref.kind),
        ]
    return [pool.namespace, *row] if view.all_namespaces else row


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


def _ref_dict(ref: ObjectRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {"apiGroup": ref.api_group, "kind": ref.kind, "name": ref.name}


def pool_summary(pool: MachinePool) -> dict[str, Any]:
    infra = _ref_dict(pool.infrastructure_ref)
    if infra is not None:
        infra["machineKind"] = pool.machine_kind
    return {
        "namespace": pool.namespace,
        "name": pool.name,
        "uid": pool.uid,
        "cluster": pool.cluster,
        "apiVersion": pool.api_version,
        "replicas": {
            "desired": pool.desired,
            "current": pool.current,
            "ready": pool.ready,
            "available": pool.available,
        },
        "phase": pool.phase or None,
        "version": pool.version,
        "infrastructure": infra,
        "machinePoolMachines": pool.has_machines,
        "bootstrap": _ref_dict(pool.bootstrap_ref),
        "failureDomains": list(pool.failure_domains),
        "creationTimestamp": pool.created.isoformat().replace("+00:00", "Z")
        if pool.created
        else None,
        "deletionTimestamp": (
            pool.deleting_since.isoformat().replace("+00:00", "Z") if pool.deleting_since else None
        ),
    }


def list_document(view: ListView) -> dict[str, Any]:
    return {
        "apiVersion": LIST_SCHEMA,
        "kind": "MachinePoolSummaryList",
        "items": [pool_summary(pool) for pool in view.pools],
    }


def list_names(view: ListView) -> str:
    return "".join(f"machinepool.cluster.x-k8s.io/{pool.name}\n" for pool in view.pools)


def to_json(document: Any) -> str:
    return json.dumps(document, indent=4) + "\n"


def to_yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


LIST_FORMATS: dict[str, Callable[[ListView], str]] = {
    "table": list_table,
    "wide": lambda view: list_table(view, wide=True),
    "json": lambda view: to_json(list_document(view)),
    "yaml": lambda view: to_yaml(list_document(view)),
    "name": list_names,
}
