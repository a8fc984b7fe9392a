"""`list` output: model in, text out. Renderers get `now` and the colour decision passed in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.humanize import age
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.structured import SCHEMA_VERSION, pool_summary, to_json, to_yaml
from kubectl_machinepool.render.table import NAME_WIDTH, clip, table

# --show-labels' cell: every label of a pool, which no cell width bounds on a real cluster;
# still cut, since a dump's labels are whatever the file holds and a table pads every row.
LABELS_WIDTH = 1024


@record
class ListView:
    pools: Sequence[MachinePool]
    now: datetime
    palette: Palette
    all_namespaces: bool = False
    no_headers: bool = False
    # -L: one column per label key, after the others; --show-labels: LABELS, the last one.
    label_columns: tuple[str, ...] = ()
    show_labels: bool = False
    # A fleet view (--contexts): each context read and why not, in order; CONTEXT comes first.
    contexts: tuple[tuple[str, str | None], ...] = ()


@record
class Column:
    header: str
    cell: Callable[[MachinePool, ListView], str]


def _or_none(value: object) -> str:
    return "<none>" if value is None or value == "" else clip(escape(str(value)))


def _phase(pool: MachinePool, view: ListView) -> str:
    phase = clip(escape(pool.phase or "<none>"))
    if pool.phase == "Running":
        return view.palette.good(phase)
    if pool.phase in ("Failed", "Deleting", "Unknown"):
        return view.palette.bad(phase)
    return view.palette.warn(phase)


def _ready(pool: MachinePool, view: ListView) -> str:
    ready = str(pool.ready)
    if pool.desired is not None and pool.ready != pool.desired:
        return view.palette.warn(ready)
    return ready


def _machines(pool: MachinePool, _: ListView) -> str:
    return {True: "yes", False: "no", None: "<unknown>"}[pool.has_machines]


CONTEXT = Column("CONTEXT", lambda pool, _: clip(escape(pool.context or ""), NAME_WIDTH))
NAMESPACE = Column("NAMESPACE", lambda pool, _: clip(escape(pool.namespace), NAME_WIDTH))
COLUMNS = (
    Column("NAME", lambda pool, _: clip(escape(pool.name), NAME_WIDTH)),
    Column("CLUSTER", lambda pool, _: _or_none(pool.cluster)),
    Column("DESIRED", lambda pool, _: "<unset>" if pool.desired is None else str(pool.desired)),
    Column("CURRENT", lambda pool, _: str(pool.current)),
    Column("READY", _ready),
    Column("AVAILABLE", lambda pool, _: str(pool.available)),
    Column("PHASE", _phase),
    Column("VERSION", lambda pool, _: _or_none(pool.version)),
    Column("INFRA", lambda p, _: _or_none(p.infrastructure_ref and p.infrastructure_ref.kind)),
    Column("MACHINES", _machines),
    Column("AGE", lambda pool, view: age(pool.created, view.now)),
)
WIDE_COLUMNS = (
    Column("FAILURE DOMAINS", lambda p, _: clip(escape(",".join(p.failure_domains))) or "<none>"),
    Column("BOOTSTRAP", lambda p, _: _or_none(p.bootstrap_ref and p.bootstrap_ref.kind)),
)


def label_column(key: str) -> Column:
    """-L KEY: headed, as kubectl heads it, by the key's last path segment in capitals."""
    header = escape(key.rpartition("/")[2].upper())
    return Column(header, lambda pool, _: clip(escape(pool.labels.get(key, "")), NAME_WIDTH))


def _labels(pool: MachinePool, _: ListView) -> str:
    shown = ",".join(f"{key}={value}" for key, value in sorted(pool.labels.items()))
    return clip(escape(shown), LABELS_WIDTH) or "<none>"


LABELS = Column("LABELS", _labels)


def list_columns(view: ListView, wide: bool) -> list[Column]:
    return [
        *([CONTEXT] if view.contexts else []),
        *([NAMESPACE] if view.all_namespaces else []),
        *COLUMNS,
        *(WIDE_COLUMNS if wide else ()),
        *(label_column(key) for key in view.label_columns),
        *([LABELS] if view.show_labels else []),
    ]


def list_table(view: ListView, wide: bool = False) -> str:
    columns = list_columns(view, wide)
    rows = [[column.cell(pool, view) for column in columns] for pool in view.pools]
    return table([column.header for column in columns], rows, view.no_headers)


def list_document(view: ListView) -> dict[str, Any]:
    document = {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolSummaryList",
        "items": [pool_summary(pool) for pool in view.pools],
    }
    if view.contexts:
        document["contexts"] = [{"context": c, "error": e} for c, e in view.contexts]
    return document


def list_names(view: ListView) -> str:
    return "".join(f"machinepool.cluster.x-k8s.io/{escape(pool.name)}\n" for pool in view.pools)


LIST_FORMATS: dict[str, Callable[[ListView], str]] = {
    "table": list_table,
    "wide": lambda view: list_table(view, wide=True),
    "json": lambda view: to_json(list_document(view)),
    "yaml": lambda view: to_yaml(list_document(view)),
    "name": list_names,
}


# -- kubectl's JSONPath formats and --sort-by, over the MachinePools as the API gave them -----


def template_item(pool: MachinePool) -> dict[str, Any]:
    """A pool as templates see it: the object as read, plus the summary `-o json` prints for
    it under `summary` (a key no MachinePool has)."""
    return {**pool.raw, "summary": pool_summary(pool)}


def template_list(pools: Sequence[MachinePool]) -> dict[str, Any]:
    """What `kubectl get machinepools -o jsonpath=…` runs its template on."""
    return {
        "apiVersion": "v1",
        "items": [template_item(pool) for pool in pools],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


# The -o formats that take a template from a file.
FILE_FORMATS = ("jsonpath-file", "custom-columns-file")


def template_format(output_format: str, template: str) -> Callable[[ListView], str]:
    """The renderer of -o jsonpath=… or custom-columns=…, its template parsed now: a wrong
    one fails before anything is read. template: the file's content for the -file formats."""
    if output_format.startswith("jsonpath"):
        from kubectl_machinepool.render.jsonpath import parse

        parsed = parse(template)
        return lambda view: parsed.render(template_list(view.pools))
    from kubectl_machinepool.render import columns

    spec = (columns.from_file if output_format in FILE_FORMATS else columns.from_spec)(template)
    return lambda view: columns.render(
        spec, [template_item(pool) for pool in view.pools], view.no_headers
    )


def pool_order(sort_by: str) -> Callable[[Sequence[MachinePool]], list[MachinePool]]:
    """--sort-by: pools in kubectl's order of what the path finds in each template item; the
    path parsed now."""
    from kubectl_machinepool.render.columns import sort_template, sorted_order

    template = sort_template(sort_by)

    def ordered(pools: Sequence[MachinePool]) -> list[MachinePool]:
        items = [template_item(pool) for pool in pools]
        return [pools[i] for i in sorted_order(items, template)]

    return ordered
