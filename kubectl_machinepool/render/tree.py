"""describe as text: a summary block per pool, then one tree per Cluster, then its findings.

What the tree shows is decided in render/treeview.py; this only draws it: tree glyphs,
colours, columns, and messages wrapped at word boundaries beside the tree lines. With a width
(a terminal's) the MESSAGE column takes what the other columns leave, and the summary and the
findings wrap to it; without one (piped) the output is what it always was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.model.description import Description, PoolDescription
from kubectl_machinepool.providers.deletion import Verdict
from kubectl_machinepool.render.cloud import (
    SHOWN,
    cloud_line,
    command_lines,
    more_sentence,
    never_joined_sentence,
)
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.events import pool_events
from kubectl_machinepool.render.findings import findings_list
from kubectl_machinepool.render.glyphs import UNICODE, Glyphs
from kubectl_machinepool.render.healthchecks import check_sentence
from kubectl_machinepool.render.owners import owner_line
from kubectl_machinepool.render.table import NAME_WIDTH, SEPARATOR, aligned, clip, column_widths
from kubectl_machinepool.render.treerows import ELLIPSIS, Headline, Health, RowKind, TreeRow
from kubectl_machinepool.render.treeview import build_tree
from kubectl_machinepool.render.wrap import line_width, visible_width, wrap
from kubectl_machinepool.render.zones import zones_line

COLUMNS = [
    "NAME", "READY", "AVAILABLE", "PHASE", "VERSION",
    "CONDITION", "STATUS", "REASON", "SINCE", "MESSAGE",
]  # fmt: skip
# Without a width messages wrap here, and the summary's fields at SUMMARY_WIDTH.
MESSAGE_WIDTH = 60
SUMMARY_WIDTH = 100
# When the other columns leave less than this, MESSAGE keeps it and the line runs over.
MESSAGE_MIN = 30
# A word longer than this (no place to wrap) is cut: the longest IDs, Azure's, stay whole.
MESSAGE_LINE_MAX = 240
LABEL_WIDTH = 22
VERDICT_WORDS = {
    Verdict.SUPPORTED: "supported",
    Verdict.NOT_SUPPORTED: "not supported",
    Verdict.UNVERIFIED: "unverified",
}


@record
class TreeOptions:
    now: datetime
    palette: Palette
    show_all: bool = False
    # Lower-cased kinds whose conditions are all listed; "all" lists every kind's.
    show_conditions: frozenset[str] = frozenset()
    glyphs: Glyphs = UNICODE
    no_headers: bool = False
    # diagnose's findings: their codes mark the rows they concern, and they are listed below.
    findings: tuple[Finding, ...] = ()
    # Columns to fit (a terminal's); None for no limit, as when piped.
    width: int | None = None


# -- the table --------------------------------------------------------------------------------


@record
class _Drawn:
    """A row with its tree prefix drawn, before its message is wrapped."""

    cells: tuple[str, ...]
    message: str
    paint: Callable[[str], str]
    # The prefix of the message's continuation lines: the tree lines carry on beside them.
    stem: str


def _condition_name(head: Headline) -> str:
    legacy = head.condition_set == "v1beta1"
    return clip(escape(f"{head.type} (v1beta1)" if legacy else head.type))


def _status(head: Headline | None, palette: Palette) -> str:
    if head is None:
        return ""
    status = clip(escape(head.status))
    paint = {Health.OK: palette.good, Health.WARNING: palette.warn}.get(head.health, palette.bad)
    return paint(status)


def _label(row: TreeRow, glyphs: Glyphs) -> str:
    if row.kind is RowKind.CONDITION and row.headline is not None:
        return f"{glyphs.dot} {_condition_name(row.headline)}"
    label = escape(row.label)
    return label.replace(ELLIPSIS, glyphs.ellipsis) if row.kind is RowKind.PROVIDER_ID else label


def _message(row: TreeRow, glyphs: Glyphs) -> str:
    text = row.message
    if row.codes:
        tag = "[" + ", ".join(row.codes) + "]"
        text = f"{text} {tag}" if text else tag
    # Cluster text is escaped before it is measured, wrapped or painted.
    text = escape(text)
    return text.replace(ELLIPSIS, glyphs.ellipsis) if row.kind is RowKind.GROUP else text


def _cells(row: TreeRow, lead: str, opts: TreeOptions) -> tuple[str, ...]:
    head, palette = row.headline, opts.palette
    checked = row.kind is RowKind.GROUP and row.health is Health.OK
    mark = f" {palette.good(opts.glyphs.ok)}" if checked else ""
    return (
        lead + clip(_label(row, opts.glyphs), NAME_WIDTH) + mark,
        clip(escape(row.ready)),
        clip(escape(row.available)),
        clip(escape(row.phase)),
        clip(escape(row.version)),
        "" if head is None or row.kind is RowKind.CONDITION else _condition_name(head),
        _status(head, palette),
        clip(escape(head.reason)) if head else "",
        human_duration(head.age) if head and head.age is not None else "",
    )


def _draw(row: TreeRow, lead: str, stem: str, opts: TreeOptions, out: list[_Drawn]) -> None:
    """Append the row and its descendants; lead is this row's prefix, stem its children's."""
    glyphs = opts.glyphs
    paint: Callable[[str], str] = opts.palette.bad if row.problem else (lambda text: text)
    more = stem + (glyphs.pipe if row.children else glyphs.blank)
    out.append(_Drawn(_cells(row, lead, opts), _message(row, glyphs), paint, more))
    for index, child in enumerate(row.children):
        last = index == len(row.children) - 1
        glyph = glyphs.last if last else glyphs.tee
        _draw(child, stem + glyph, stem + (glyphs.blank if last else glyphs.pipe), opts, out)


def _fixed_width(drawn: Sequence[_Drawn], opts: TreeOptions) -> int:
    rows = [d.cells for d in drawn] + ([] if opts.no_headers else [tuple(COLUMNS[:-1])])
    return sum(column_widths(rows)) + len(SEPARATOR) * (len(COLUMNS) - 1)


def tree_table(roots: Sequence[TreeRow], opts: TreeOptions) -> str:
    drawn: list[_Drawn] = []
    for root in roots:
        _draw(root, "", "", opts, drawn)
    if opts.width is None:
        width = MESSAGE_WIDTH
    else:
        width = line_width(opts.width, 0) - _fixed_width(drawn, opts)
        if width < MESSAGE_MIN:
            return _stacked(drawn, opts, line_width(opts.width, 0))
    rows: list[Sequence[str]] = []
    for entry in drawn:
        lines = [clip(line, MESSAGE_LINE_MAX) for line in wrap(entry.message, width)] or [""]
        rows.append([*entry.cells, entry.paint(lines[0])])
        for line in lines[1:]:
            rows.append([entry.stem, *[""] * (len(COLUMNS) - 2), entry.paint(line)])
    return aligned(COLUMNS, rows, no_headers=opts.no_headers)


# Which columns stay on a row's own line when the table is too wide for the terminal, in order
# of importance; the others, and MESSAGE, go on the lines below it.
_KEPT_FIRST = ("STATUS", "READY", "CONDITION", "SINCE", "AVAILABLE", "PHASE", "VERSION", "REASON")
_DETAIL_INDENT = "  "


def _kept_columns(drawn: Sequence[_Drawn], opts: TreeOptions, width: int) -> list[int]:
    rows = [d.cells for d in drawn] + ([] if opts.no_headers else [tuple(COLUMNS[:-1])])
    widths = column_widths(rows)
    kept, used = [0], widths[0]
    for name in _KEPT_FIRST:
        index = COLUMNS.index(name)
        if used + len(SEPARATOR) + widths[index] <= width:
            kept.append(index)
            used += len(SEPARATOR) + widths[index]
    return sorted(kept)


def _stacked(drawn: Sequence[_Drawn], opts: TreeOptions, width: int) -> str:
    """A narrow terminal: each row keeps the columns that fit, and says the rest, then its
    message, on wrapped lines below it, indented under its tree lines."""
    kept = _kept_columns(drawn, opts, width)
    table = aligned(
        [COLUMNS[i] for i in kept],
        [[d.cells[i] for i in kept] for d in drawn],
        no_headers=opts.no_headers,
    ).splitlines()
    out = [] if opts.no_headers else [table.pop(0)]
    for entry, line in zip(drawn, table, strict=True):
        out.append(line)
        said = [
            f"{COLUMNS[i].lower()} {cell}"
            for i, cell in enumerate(entry.cells)
            if i not in kept and cell.strip()
        ]
        lead = entry.stem + _DETAIL_INDENT
        room = max(MESSAGE_MIN, width - visible_width(lead))
        for text, paint in (("; ".join(said), None), (entry.message, entry.paint)):
            for part in wrap(text, room):
                out.append(lead + (paint(clip(part, MESSAGE_LINE_MAX)) if paint else part))
    return "\n".join(out) + "\n"


# -- summary block ----------------------------------------------------------------------------


def _field(label: str, value: str, width: int | None = None) -> list[str]:
    """`  Label:   value`, wrapped under the value; an empty label continues the field above."""
    room = line_width(width, SUMMARY_WIDTH) - LABEL_WIDTH - 2
    lines = wrap(escape(value), room) or [""]
    head = f"  {label + ':' if label else '':<{LABEL_WIDTH}}{lines[0]}"
    return [head, *(f"  {'':<{LABEL_WIDTH}}{line}" for line in lines[1:])]


def _replicas(pool: PoolDescription) -> str:
    c = pool.counts
    desired = "<unset>" if c.desired is None else str(c.desired)
    parts = [f"desired {desired}", f"provider reports {c.provider_reported}"]
    if c.machines is not None:
        parts.append(f"Machines {c.machines}")
    if c.nodes_matched is None:
        parts += [
            f"ready {c.status_ready}",
            f"available {c.status_available} (from status; Nodes not read)",
        ]
        return ", ".join(parts)
    ready = f"ready {c.nodes_ready}" + (
        "" if c.nodes_ready == c.status_ready else f" (status says {c.status_ready})"
    )
    available = f"available {c.nodes_available}" + (
        "" if c.nodes_available == c.status_available else f" (status says {c.status_available})"
    )
    parts += [f"Nodes matched {c.nodes_matched}", ready, available]
    return ", ".join(parts)


def _provider_ids(pool: PoolDescription) -> str:
    c = pool.counts
    entries = f"{c.provider_ids} providerID{'s' if c.provider_ids != 1 else ''}"
    if c.nodes_matched is None:
        return f"{entries}; Nodes not read"
    return f"{entries}, {c.nodes_matched} with a Node"


def _versions(pool: PoolDescription) -> str:
    mp = pool.pool
    desired = mp.desired_version or "<unset>"
    if mp.infra_version and mp.infrastructure_ref:
        desired += f" ({mp.infrastructure_ref.kind} spec.version"
        desired += f"; template says {mp.version})" if mp.version != mp.infra_version else ")"
    # The deployed field is already the desired version above.
    for target in (t for t in pool.version_targets if not t.deployed):
        said = target.value.removeprefix("v")
        release = "" if said == target.version else f" (Kubernetes {target.version})"
        desired += f"; {target.kind} {target.field} {target.value}{release}"
    if not pool.kubelet_versions:
        return f"desired {desired}"
    kubelets = ", ".join(f"{v} ({n})" for v, n in pool.kubelet_versions)
    return f"desired {desired}; kubelets {kubelets}"


def _absent(kind: str, name: str, unread: bool) -> str:
    """A referenced object that is not there: RBAC kept it from us, or it does not exist."""
    return f"{kind} {name} ({'not readable' if unread else 'not found'})"


def _infrastructure(pool: PoolDescription) -> str:
    ref = pool.pool.infrastructure_ref
    if ref is None:
        return "<none>"
    if pool.infra is None:
        return _absent(ref.kind, ref.name, pool.infra_unread)
    if pool.uses_machines:
        return f"{ref.kind} {ref.name}; MachinePool Machines of kind {pool.pool.machine_kind}"
    if pool.pool.machine_kind:
        return f"{ref.kind} {ref.name}; names itself as machine kind, so no Machines"
    return f"{ref.kind} {ref.name}; no MachinePool Machines"


def _bootstrap(pool: PoolDescription) -> str:
    boot = pool.pool.bootstrap_ref
    if boot is None:
        return "<none> (data secret supplied directly)"
    if pool.bootstrap is None:
        return (
            f"{boot.kind} {boot.name} ({'not readable' if pool.bootstrap_unread else 'not found'})"
        )
    return f"{boot.kind} {boot.name}"


def _autoscaler(pool: PoolDescription) -> str:
    low, high = pool.pool.autoscaler_bounds
    if low is None and high is None:
        return "<none>"
    return f"min {'?' if low is None else low}, max {'?' if high is None else high}"


def _cloud(pool: PoolDescription, width: int | None) -> list[str]:
    """The Cloud line, then each instance that never joined with what to run about it."""
    cloud = pool.cloud
    line = cloud_line(cloud)
    if cloud is None or line is None:
        return []
    lines = _field("Cloud", line, width)
    room = line_width(width, SUMMARY_WIDTH) - LABEL_WIDTH - 2
    indent = " " * (LABEL_WIDTH + 2)
    for index, instance in enumerate(cloud.never_joined[:SHOWN]):
        label = "" if index else "Never joined"
        lines += _field(label, never_joined_sentence(instance, cloud), width)
        for command in filter(None, (instance.inspect, instance.replace)):
            lines += [indent + part for part in command_lines(escape(command), room)]
    if more := more_sentence(cloud):
        lines += _field("", more, width)
    return lines


def summary_block(pool: PoolDescription, opts: TreeOptions) -> list[str]:
    mp = pool.pool
    deleting = (
        "no" if mp.deleting_since is None else f"for {human_duration(opts.now - mp.deleting_since)}"
    )
    verdict = pool.deletion
    lines = [escape(f"MachinePool {mp.namespace}/{mp.name}")]
    lines += _field("Cluster", mp.cluster, opts.width)
    lines += _field("Infrastructure", _infrastructure(pool), opts.width)
    lines += _cloud(pool, opts.width)
    fields = [
        ("Bootstrap", _bootstrap(pool)),
        ("Replicas", _replicas(pool)),
        ("providerIDList", _provider_ids(pool)),
        ("Versions", _versions(pool)),
        ("Autoscaler", _autoscaler(pool)),
        ("Replicas managed by", mp.replicas_managed_by or "<none>"),
        ("Owner", owner_line(mp, "none seen")),
        ("Paused", f"yes ({pool.paused_by})" if pool.paused_by else "no"),
        ("Deleting", deleting),
        ("Failure domains", ", ".join(mp.failure_domains) or "<none>"),
    ]
    if zones := zones_line(pool.zones):
        fields.append(("Zones", zones))
    if mp.failure:
        fields.append(("Failure", f"{mp.failure} (recorded by the controller; never cleared)"))
    for index, check in enumerate(pool.health_checks or ()):
        fields.append(("" if index else "Health checks", check_sentence(pool, check, opts.now)))
    fields.append(("Delete one instance", f"{VERDICT_WORDS[verdict.verdict]}: {verdict.reason}"))
    if verdict.instead:
        fields.append(("", f"instead: {verdict.instead}"))
    if verdict.scale_down:
        fields.append(("", f"with --scale-down: {verdict.scale_down}"))
    for label, value in fields:
        lines += _field(label, value, opts.width)
    return lines


def render_tree(description: Description, opts: TreeOptions) -> str:
    model = build_tree(
        description,
        opts.now,
        findings=opts.findings,
        show_all=opts.show_all,
        show_conditions=opts.show_conditions,
    )
    blocks: list[str] = []
    for cluster, (root, findings) in zip(description.clusters, model.roots, strict=True):
        for pool in cluster.pools:
            blocks.append("\n".join(summary_block(pool, opts)) + "\n")
        blocks.append(tree_table([root], opts))
        listed = findings_list(findings, opts.palette, width=opts.width)
        if listed:
            blocks.append(listed)
        for pool in cluster.pools:
            title = f"MachinePool {pool.pool.namespace}/{pool.pool.name}"
            if events := pool_events(escape(title), pool.events, opts.now, opts.width):
                blocks.append(events)
    return "\n".join(blocks)
