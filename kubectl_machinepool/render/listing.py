"""`list` output: model in, text out. Renderers get `now` and the colour decision passed in.

-o json and -o yaml print what kubectl get prints, a List of the MachinePools as the API gave
them, and each item also holds, under `summary` (a key no MachinePool has), what the table shows
of it: templates and --sort-by run over the same List."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

from kubectl_machinepool.base.humanize import age
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.listing import ListedPool
from kubectl_machinepool.model.ownership import pool_owner_line
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.owners import owner_line
from kubectl_machinepool.render.structured import pool_summary, to_json, to_yaml
from kubectl_machinepool.render.table import NAME_WIDTH, clip, table

# --show-labels' cell: every label of a pool, which no cell width bounds on a real cluster;
# still cut, since a dump's labels are whatever the file holds and a table pads every row.
LABELS_WIDTH = 1024


@record
class ListView:
    pools: Sequence[ListedPool]
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
    cell: Callable[[ListedPool, ListView], str]


def _or_none(value: object) -> str:
    return "<none>" if value is None or value == "" else clip(escape(str(value)))


def _phase(row: ListedPool, view: ListView) -> str:
    pool = row.pool
    phase = clip(escape(pool.phase or "<none>"))
    if pool.phase == "Running":
        return view.palette.good(phase)
    if pool.phase in ("Failed", "Deleting", "Unknown"):
        return view.palette.bad(phase)
    return view.palette.warn(phase)


def _ready(row: ListedPool, view: ListView) -> str:
    pool = row.pool
    ready = str(pool.ready)
    if pool.desired is not None and pool.ready != pool.desired:
        return view.palette.warn(ready)
    return ready


def _up_to_date(row: ListedPool, view: ListView) -> str:
    if row.up_to_date is None:
        return UNKNOWN
    shown = str(row.up_to_date)
    desired = row.pool.desired
    return view.palette.warn(shown) if desired is not None and row.up_to_date < desired else shown


def _findings(row: ListedPool, view: ListView) -> str:
    count = len(row.findings)
    return view.palette.warn(str(count)) if count else "0"


def _machines(row: ListedPool, _: ListView) -> str:
    return {True: "yes", False: "no", None: UNKNOWN}[row.pool.has_machines]


def kubelets(row: ListedPool) -> str:
    """-o wide's KUBELET VERSIONS: each version with its Nodes, as describe counts them."""
    if row.kubelets is None:
        return UNKNOWN
    shown = ",".join(f"{version}({nodes})" for version, nodes in row.kubelets)
    return clip(escape(shown)) or "<none>"


UNKNOWN = "<unknown>"
CONTEXT = Column("CONTEXT", lambda row, _: clip(escape(row.pool.context or ""), NAME_WIDTH))
NAMESPACE = Column("NAMESPACE", lambda row, _: clip(escape(row.pool.namespace), NAME_WIDTH))
COLUMNS = (
    Column("NAME", lambda row, _: clip(escape(row.pool.name), NAME_WIDTH)),
    Column("CLUSTER", lambda row, _: _or_none(row.pool.cluster)),
    Column(
        "DESIRED", lambda row, _: "<unset>" if row.pool.desired is None else str(row.pool.desired)
    ),
    Column("CURRENT", lambda row, _: str(row.pool.current)),
    Column("READY", _ready),
    Column("UP-TO-DATE", _up_to_date),
    Column("AVAILABLE", lambda row, _: str(row.pool.available)),
    Column("PHASE", _phase),
    Column("VERSION", lambda row, _: _or_none(row.pool.version)),
    Column(
        "INFRA", lambda r, _: _or_none(r.pool.infrastructure_ref and r.pool.infrastructure_ref.kind)
    ),
    Column("MACHINES", _machines),
    Column("FINDINGS", _findings),
    Column("AGE", lambda row, view: age(row.pool.created, view.now)),
)
WIDE_COLUMNS = (
    Column("KUBELET VERSIONS", lambda row, _: kubelets(row)),
    Column(
        "FAILURE DOMAINS", lambda r, _: clip(escape(",".join(r.pool.failure_domains))) or "<none>"
    ),
    Column("BOOTSTRAP", lambda r, _: _or_none(r.pool.bootstrap_ref and r.pool.bootstrap_ref.kind)),
    Column("OWNER", lambda row, _: clip(owner_line(row.pool, "<none>"))),
)


def label_column(key: str) -> Column:
    """-L KEY: headed, as kubectl heads it, by the key's last path segment in capitals."""
    header = escape(key.rpartition("/")[2].upper())
    return Column(header, lambda row, _: clip(escape(row.pool.labels.get(key, "")), NAME_WIDTH))


def _labels(row: ListedPool, _: ListView) -> str:
    shown = ",".join(f"{key}={value}" for key, value in sorted(row.pool.labels.items()))
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
    """-o json|yaml: kubectl's List; a fleet view adds which contexts were read."""
    document: dict[str, Any] = as_read(template_list(view.pools))
    if view.contexts:
        document["contexts"] = [{"context": c, "error": e} for c, e in view.contexts]
    return document


def as_read(value: Any) -> Any:
    """The value with a dump's unquoted timestamps, which YAML reads as datetimes, as the RFC
    3339 text the API holds (templates print them so too)."""
    if isinstance(value, dict):
        return {key: as_read(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_read(item) for item in value]
    if isinstance(value, date):
        from kubectl_machinepool.render.jsonpath.printing import as_read as scalar

        return scalar(value)
    return value


def list_names(view: ListView) -> str:
    return "".join(f"machinepool.cluster.x-k8s.io/{escape(row.pool.name)}\n" for row in view.pools)


LIST_FORMATS: dict[str, Callable[[ListView], str]] = {
    "table": list_table,
    "wide": lambda view: list_table(view, wide=True),
    "json": lambda view: to_json(list_document(view)),
    "yaml": lambda view: to_yaml(list_document(view)),
    "name": list_names,
}


# -- kubectl's JSONPath formats and --sort-by, over the MachinePools as the API gave them -----


def summary(row: ListedPool) -> dict[str, Any]:
    """What the table shows of a pool, for scripts: the columns' values (docs/list.md)."""
    found = pool_summary(row.pool)
    found["replicas"] = {**found["replicas"], "upToDate": row.up_to_date}
    found["kubeletVersions"] = (
        None if row.kubelets is None else [{"version": v, "nodes": n} for v, n in row.kubelets]
    )
    found["findings"] = {"count": len(row.findings), "codes": list(row.findings)}
    found["owner"] = pool_owner_line(row.pool.owners, row.pool.annotations) or None
    return found


def template_item(row: ListedPool) -> dict[str, Any]:
    """A pool as -o json and templates see it: the object as read, plus its summary under
    `summary` (a key no MachinePool has)."""
    return {**row.pool.raw, "summary": summary(row)}


def template_list(pools: Sequence[ListedPool]) -> dict[str, Any]:
    """What `kubectl get machinepools -o json` prints, and runs a template on."""
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


def pool_order(sort_by: str) -> Callable[[Sequence[ListedPool]], list[ListedPool]]:
    """--sort-by: pools in kubectl's order of what the path finds in each template item; the
    path parsed now."""
    from kubectl_machinepool.render.columns import sort_template, sorted_order

    template = sort_template(sort_by)

    def ordered(pools: Sequence[ListedPool]) -> list[ListedPool]:
        items = [template_item(pool) for pool in pools]
        return [pools[i] for i in sorted_order(items, template)]

    return ordered
