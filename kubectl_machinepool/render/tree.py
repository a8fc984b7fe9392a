"""describe as text: a summary block per pool, then one tree per Cluster.

The tree is Cluster → MachinePool → bootstrap config, infra pool → instances. An instance row is
its Machine (pools with MachinePool Machines) or its providerID, with the infra machine and the
Node below it. Instances with problems come first and are always shown; healthy ones fold into
one "N Machines ✓" row unless show_all. Messages wrap at word boundaries and keep the tree lines.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from kubectl_machinepool.color import Palette
from kubectl_machinepool.conditions import Condition
from kubectl_machinepool.deletion import Verdict
from kubectl_machinepool.description import (
    ClusterDescription,
    Description,
    PoolDescription,
    node_available,
)
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.humanize import human_duration
from kubectl_machinepool.instances import Instance
from kubectl_machinepool.render.findings import findings_list
from kubectl_machinepool.render.table import NAME_WIDTH, clip, table
from kubectl_machinepool.safetext import escape
from kubectl_machinepool.states import MachineState, NodeState, ObjectState

COLUMNS = [
    "NAME", "READY", "AVAILABLE", "PHASE", "VERSION",
    "CONDITION", "STATUS", "REASON", "SINCE", "MESSAGE",
]  # fmt: skip
MESSAGE_WIDTH = 60
# A word longer than this (no place to wrap) is cut: the longest IDs, Azure's, stay whole.
MESSAGE_LINE_MAX = 240
LABEL_WIDTH = 22
VERDICT_WORDS = {
    Verdict.SUPPORTED: "supported",
    Verdict.NOT_SUPPORTED: "not supported",
    Verdict.UNVERIFIED: "unverified",
}


@dataclass(frozen=True, slots=True)
class Glyphs:
    tee: str
    last: str
    pipe: str
    blank: str
    ok: str
    dot: str
    ellipsis: str


UNICODE = Glyphs("├─", "└─", "│ ", "  ", "✓", "·", "…")
ASCII = Glyphs("|-", "`-", "| ", "  ", "ok", "-", "...")


@dataclass(frozen=True, slots=True)
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


@dataclass
class Row:
    """One object in the tree, with its cells and children, before prefixes are drawn."""

    name: str
    ready: str = ""
    available: str = ""
    phase: str = ""
    version: str = ""
    condition: Condition | None = None
    message: str = ""
    bad_message: bool = False
    # A --show-conditions row: the condition's name is the row's name.
    is_condition: bool = False
    # A folded group of healthy instances: its name ends in the check mark.
    checked: bool = False
    children: list[Row] = field(default_factory=list)


# -- rows for objects -------------------------------------------------------------------------


def _since(when: datetime | None, now: datetime) -> str:
    return human_duration(now - when) if when else ""


# The condition that says most about each kind; others fall back to Ready, then Available.
_HEADLINE = {"Cluster": ("Available", "Ready"), "Machine": ("Ready",), "Node": ("Ready",)}


def _important(state: ObjectState) -> Condition | None:
    if state.deleting_since is not None and state.conditions.get("Deleting"):
        return state.conditions.get("Deleting")
    found = state.conditions.first(*_HEADLINE.get(state.kind, ("Ready", "Available")))
    if found is not None:
        return found
    # Anything unhealthy is more telling than nothing.
    return next((c for c in state.conditions.all if not c.good), None)


def _ready_flag_condition(state: ObjectState) -> Condition | None:
    """Objects without conditions (e.g. AzureASOManagedMachinePool) still say status.ready."""
    if state.ready is None:
        return None
    return Condition("status.ready", "True" if state.ready else "False")


def object_row(state: ObjectState, opts: TreeOptions) -> Row:
    ns = f"{state.namespace}/" if state.namespace else ""
    row = Row(f"{state.kind} {ns}{state.name}", phase=state.phase or "")
    row.condition = _important(state) or _ready_flag_condition(state)
    if state.failure:
        row.message, row.bad_message = f"failure: {state.failure}", True
    elif row.condition is not None:
        row.message = row.condition.message
    if state.deleting_since is not None and not row.message:
        row.message = f"deleting for {human_duration(opts.now - state.deleting_since)}"
    _add_conditions(row, state.kind, state.conditions.all, opts)
    return row


def node_row(node: NodeState, opts: TreeOptions) -> Row:
    row = Row(f"Node {node.name}", version=node.kubelet_version or "")
    row.condition = node.conditions.get("Ready")
    row.message = row.condition.message if row.condition else ""
    _add_conditions(row, "Node", node.conditions.all, opts)
    return row


def _add_conditions(
    row: Row, kind: str, conditions: tuple[Condition, ...], opts: TreeOptions
) -> None:
    if "all" not in opts.show_conditions and kind.lower() not in opts.show_conditions:
        return
    for cond in conditions:
        label = f"{opts.glyphs.dot} {_condition_name(cond)}"
        row.children.append(Row(label, condition=cond, message=cond.message, is_condition=True))


def _problems(row: Row, instance: Instance) -> Row:
    if instance.problems:
        row.message, row.bad_message = "; ".join(instance.problems), True
    return row


def short_provider_id(provider_id: str | None, ellipsis: str = "…", limit: int = 48) -> str:
    """Long IDs (Azure's run to ~190 characters) keep their scheme and last three segments."""
    if not provider_id:
        return "<none>"
    scheme, _, path = provider_id.partition("://")
    if len(provider_id) <= limit or not path:
        return provider_id
    tail = "/".join(path.rstrip("/").split("/")[-3:])
    return f"{scheme}://{ellipsis}/{tail}"


def _mark(row: Row, codes: list[str]) -> None:
    """Name the findings that concern a row at the end of its message."""
    if codes:
        tag = "[" + ", ".join(sorted(set(codes))) + "]"
        row.message = f"{row.message} {tag}" if row.message else tag


def _instance_codes(instance: Instance, pool: PoolDescription, opts: TreeOptions) -> list[str]:
    keys = {
        instance.provider_id,
        instance.machine.object.name if instance.machine else None,
        instance.node.name if instance.node else None,
    } - {None}
    where = (pool.pool.namespace, pool.pool.name)
    return [
        f.code for f in opts.findings if (f.namespace, f.pool) == where and keys & set(f.instances)
    ]


def instance_row(instance: Instance, opts: TreeOptions, pool: PoolDescription | None = None) -> Row:
    machine: MachineState | None = instance.machine
    if machine is not None:
        row = object_row(machine.object, opts)
        row.version = machine.version or ""
    else:
        row = Row(f"providerID {short_provider_id(instance.provider_id, opts.glyphs.ellipsis)}")
    _problems(row, instance)
    if pool is not None:
        _mark(row, _instance_codes(instance, pool, opts))
    if instance.infra_machine is not None:
        row.children.append(object_row(instance.infra_machine, opts))
    if instance.node is not None:
        row.children.append(node_row(instance.node, opts))
    return row


def group_row(
    instances: list[Instance],
    what: str,
    opts: TreeOptions,
    min_ready_seconds: int,
    checked: bool = True,
    *,
    nodes_known: bool = True,
) -> Row:
    """Healthy siblings folded into one row; unchecked when their health is not known.
    Availability needs the Nodes: without them it is "?", not zero."""
    names = sorted(
        i.sort_name
        if i.machine or i.node
        else short_provider_id(i.provider_id, opts.glyphs.ellipsis)
        for i in instances
    )
    versions = sorted(
        {i.node.kubelet_version for i in instances if i.node and i.node.kubelet_version}
    )
    more = ", ..." if len(names) > 2 else ""
    plural = what if len(instances) == 1 else f"{what}s"
    available = sum(
        1 for i in instances if i.node and node_available(i.node, min_ready_seconds, opts.now)
    )
    total = len(instances)
    return Row(
        f"{total} {plural}",
        ready=f"{total}/{total}" if checked else "",
        available=(f"{available}/{total}" if nodes_known else f"?/{total}") if checked else "",
        version=",".join(versions),
        message=f"See {', '.join(names[:2])}{more}",
        checked=checked,
    )


def pool_row(pool: PoolDescription, opts: TreeOptions) -> Row:
    mp = pool.pool
    counts = pool.counts
    nodes_known = counts.nodes_ready is not None
    ready = counts.nodes_ready if nodes_known else counts.status_ready
    available = counts.nodes_available if nodes_known else counts.status_available
    desired = "?" if counts.desired is None else str(counts.desired)
    row = Row(
        f"MachinePool {mp.namespace}/{mp.name}",
        ready=f"{ready}/{desired}",
        available=f"{available}/{desired}",
        phase=mp.phase,
        version=mp.desired_version or "",
    )
    row.condition = mp.conditions.first("Available", "Ready")
    if mp.deleting_since is not None:
        row.message, row.bad_message = (
            f"deleting for {human_duration(opts.now - mp.deleting_since)}",
            True,
        )
    elif mp.failure:
        row.message, row.bad_message = f"failure: {mp.failure}", True
    elif row.condition is not None:
        row.message = row.condition.message
    _mark(row, [
        f.code for f in opts.findings
        if (f.namespace, f.pool) == (mp.namespace, mp.name) and not f.instances
    ])  # fmt: skip
    _add_conditions(row, "MachinePool", mp.conditions.all, opts)
    for state in (pool.bootstrap, pool.infra):
        if state is not None:
            row.children.append(object_row(state, opts))
    troubled = [i for i in pool.instances if not i.healthy]
    healthy = [i for i in pool.instances if i.healthy]
    row.children += [instance_row(i, opts, pool) for i in troubled]
    if opts.show_all:
        row.children += [instance_row(i, opts, pool) for i in healthy]
    elif pool.uses_machines and healthy:
        nodes_known = pool.counts.nodes_matched is not None
        row.children.append(
            group_row(healthy, "Machine", opts, mp.min_ready_seconds, nodes_known=nodes_known)
        )
    elif healthy:
        nodes_known = pool.counts.nodes_matched is not None
        what = "Node" if nodes_known else "providerID"
        row.children.append(group_row(healthy, what, opts, mp.min_ready_seconds, nodes_known))
    return row


def cluster_row(cluster: ClusterDescription, opts: TreeOptions) -> Row:
    if cluster.cluster is not None:
        row = object_row(cluster.cluster, opts)
    elif cluster.cluster_unread:
        row = Row(f"Cluster {cluster.namespace}/{cluster.name}", message="Cluster not readable")
    else:
        missing = "Cluster object not found"
        row = Row(f"Cluster {cluster.namespace}/{cluster.name}", message=missing, bad_message=True)
    if cluster.paused:
        row.message, row.bad_message = "spec.paused is true: nothing is reconciled", True
    row.children = [*row.children, *(pool_row(p, opts) for p in cluster.pools)]
    return row


# -- drawing ----------------------------------------------------------------------------------


def _status(cond: Condition | None, palette: Palette) -> str:
    if cond is None:
        return ""
    status = clip(escape(cond.status))
    if cond.good:
        return palette.good(status)
    if cond.status == "Unknown" or cond.severity in ("Info", "Warning"):
        return palette.warn(status)
    return palette.bad(status)


def _condition_name(cond: Condition | None) -> str:
    if cond is None:
        return ""
    return clip(escape(f"{cond.type} (v1beta1)" if cond.legacy else cond.type))


def _draw(row: Row, lead: str, stem: str, opts: TreeOptions, out: list[list[str]]) -> None:
    """Append the row and its descendants; lead is this row's prefix, stem its children's."""
    cond, palette = row.condition, opts.palette
    # Cluster text is escaped before it is measured, wrapped or painted.
    wrapped = [
        clip(line, MESSAGE_LINE_MAX)
        for line in textwrap.wrap(
            escape(row.message), MESSAGE_WIDTH, break_long_words=False, break_on_hyphens=False
        )
    ] or [""]
    paint: Callable[[str], str] = palette.bad if row.bad_message else (lambda text: text)
    since = _since(cond.since, opts.now) if cond else ""
    reason = clip(escape(cond.reason)) if cond else ""
    status = _status(cond, palette)
    first = paint(wrapped[0])
    mark = f" {palette.good(opts.glyphs.ok)}" if row.checked else ""
    out.append(
        [
            lead + clip(escape(row.name), NAME_WIDTH) + mark,
            clip(escape(row.ready)),
            clip(escape(row.available)),
            clip(escape(row.phase)),
            clip(escape(row.version)),
            "" if row.is_condition else _condition_name(cond),
            status,
            reason,
            since,
            first,
        ]
    )
    more_stem = stem + (opts.glyphs.pipe if row.children else opts.glyphs.blank)
    for line in wrapped[1:]:
        out.append([more_stem.rstrip() if not line else more_stem, *[""] * 8, paint(line)])
    for index, child in enumerate(row.children):
        last = index == len(row.children) - 1
        glyph = opts.glyphs.last if last else opts.glyphs.tee
        _draw(
            child, stem + glyph, stem + (opts.glyphs.blank if last else opts.glyphs.pipe), opts, out
        )


def tree_table(roots: list[Row], opts: TreeOptions) -> str:
    rows: list[list[str]] = []
    for root in roots:
        _draw(root, "", "", opts, rows)
    return table(COLUMNS, rows, no_headers=opts.no_headers)


# -- summary block ----------------------------------------------------------------------------


def _field(label: str, value: str) -> list[str]:
    """`  Label:   value`, wrapped under the value; an empty label continues the field above."""
    width = 100 - LABEL_WIDTH - 2
    lines = textwrap.wrap(escape(value), width, break_long_words=False, break_on_hyphens=False) or [
        ""
    ]
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
    if not pool.kubelet_versions:
        return f"desired {desired}"
    kubelets = ", ".join(f"{v} ({n})" for v, n in pool.kubelet_versions)
    return f"desired {desired}; kubelets {kubelets}"


def _infrastructure(pool: PoolDescription) -> str:
    ref = pool.pool.infrastructure_ref
    if ref is None:
        return "<none>"
    if pool.infra is None:
        return f"{ref.kind} {ref.name} ({'not readable' if pool.infra_unread else 'not found'})"
    if pool.uses_machines:
        return f"{ref.kind} {ref.name}; MachinePool Machines of kind {pool.pool.machine_kind}"
    if pool.pool.machine_kind:
        return f"{ref.kind} {ref.name}; names itself as machine kind, so no Machines"
    return f"{ref.kind} {ref.name}; no MachinePool Machines"


def _autoscaler(pool: PoolDescription) -> str:
    low, high = pool.pool.autoscaler_bounds
    if low is None and high is None:
        return "<none>"
    return f"min {'?' if low is None else low}, max {'?' if high is None else high}"


def summary_block(pool: PoolDescription, opts: TreeOptions) -> list[str]:
    mp = pool.pool
    boot = mp.bootstrap_ref
    deleting = (
        "no" if mp.deleting_since is None else f"for {human_duration(opts.now - mp.deleting_since)}"
    )
    verdict = pool.deletion
    lines = [escape(f"MachinePool {mp.namespace}/{mp.name}")]
    lines += _field("Cluster", mp.cluster)
    lines += _field("Infrastructure", _infrastructure(pool))
    lines += _field(
        "Bootstrap",
        f"{boot.kind} {boot.name}" if boot else "<none> (data secret supplied directly)",
    )
    lines += _field("Replicas", _replicas(pool))
    lines += _field("providerIDList", _provider_ids(pool))
    lines += _field("Versions", _versions(pool))
    lines += _field("Autoscaler", _autoscaler(pool))
    lines += _field("Replicas managed by", mp.replicas_managed_by or "<none>")
    lines += _field("Paused", f"yes ({pool.paused_by})" if pool.paused_by else "no")
    lines += _field("Deleting", deleting)
    lines += _field("Failure domains", ", ".join(mp.failure_domains) or "<none>")
    if mp.failure:
        lines += _field("Failure", f"{mp.failure} (recorded by the controller; never cleared)")
    lines += _field("Delete one instance", f"{VERDICT_WORDS[verdict.verdict]}: {verdict.reason}")
    if verdict.instead:
        lines += _field("", f"instead: {verdict.instead}")
    if verdict.scale_down:
        lines += _field("", f"with --scale-down: {verdict.scale_down}")
    return lines


def render_tree(description: Description, opts: TreeOptions) -> str:
    blocks: list[str] = []
    for cluster in description.clusters:
        names = {p.pool.name for p in cluster.pools} | {""}
        for pool in cluster.pools:
            blocks.append("\n".join(summary_block(pool, opts)) + "\n")
        blocks.append(tree_table([cluster_row(cluster, opts)], opts))
        mine = [f for f in opts.findings if f.namespace == cluster.namespace and f.pool in names]
        listed = findings_list(mine, opts.palette)
        if listed:
            blocks.append(listed)
    return "\n".join(blocks)
