"""describe's tree as data: every display decision made, nothing drawn yet.

The tree is Cluster → MachinePool → bootstrap config, infra pool → instances. An instance row is
its Machine (pools with MachinePool Machines) or its providerID, with the infra machine and the
Node below it. Which condition heads a row, what its message says, which findings concern it,
how healthy it is and which instances fold into one group row are all decided here, so the
printer (render/tree.py) only adds glyphs, colour, columns and wrapping, and a test can ask the
model what the tree means without reading drawn text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.model.cloud import clouds_by_instance, instance_key
from kubectl_machinepool.model.conditions import Conditions
from kubectl_machinepool.model.description import (
    ClusterDescription,
    Description,
    PoolDescription,
    node_available,
)
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.outsiders import OutsideNode
from kubectl_machinepool.model.states import NodeState, ObjectState
from kubectl_machinepool.render.treerows import (
    ELLIPSIS,
    Health,
    RowKind,
    TreeModel,
    TreeRow,
    headline,
    health_of,
    make_row,
    object_headline,
)


@record
class _Context:
    now: datetime
    show_all: bool
    show_conditions: frozenset[str]
    findings: tuple[Finding, ...]


# -- rows for objects -------------------------------------------------------------------------


def _conditions(kind: str, conditions: Conditions, ctx: _Context) -> list[TreeRow]:
    if "all" not in ctx.show_conditions and kind.lower() not in ctx.show_conditions:
        return []
    return [make_row(RowKind.CONDITION, c.type, headline(c, ctx.now)) for c in conditions.all]


def _object(state: ObjectState, ctx: _Context, kind: RowKind = RowKind.OBJECT) -> TreeRow:
    ns = f"{state.namespace}/" if state.namespace else ""
    head = object_headline(state, ctx.now)
    message, problem = (head.message if head else ""), False
    if state.failure:
        message, problem = f"failure: {state.failure}", True
    if state.deleting_since is not None and not message:
        message = f"deleting for {human_duration(ctx.now - state.deleting_since)}"
    return make_row(
        kind,
        f"{state.kind} {ns}{state.name}",
        head,
        phase=state.phase or "",
        message=message,
        problem=problem,
        children=tuple(_conditions(state.kind, state.conditions, ctx)),
    )


def _node(node: NodeState, ctx: _Context) -> TreeRow:
    cond = node.conditions.get("Ready")
    return make_row(
        RowKind.NODE,
        f"Node {node.name}",
        headline(cond, ctx.now) if cond else None,
        version=node.kubelet_version or "",
        children=tuple(_conditions("Node", node.conditions, ctx)),
    )


def short_provider_id(provider_id: str | None, ellipsis: str = ELLIPSIS, limit: int = 48) -> str:
    """Long IDs (Azure's run to ~190 characters) keep their scheme and last three segments."""
    if not provider_id:
        return "<none>"
    scheme, _, path = provider_id.partition("://")
    if len(provider_id) <= limit or not path:
        return provider_id
    tail = "/".join(path.rstrip("/").split("/")[-3:])
    return f"{scheme}://{ellipsis}/{tail}"


def _codes(findings: Sequence[Finding]) -> tuple[str, ...]:
    return tuple(sorted({f.code for f in findings}))


def _instance_codes(instance: Instance, pool: PoolDescription, ctx: _Context) -> tuple[str, ...]:
    keys = {
        instance.provider_id,
        instance.machine.object.name if instance.machine else None,
        instance.node.name if instance.node else None,
    } - {None}
    where = (pool.pool.namespace, pool.pool.name)
    return _codes(
        [f for f in ctx.findings if (f.namespace, f.pool) == where and keys & set(f.instances)]
    )


def _in_cloud(instance: Instance, pool: PoolDescription) -> str | None:
    """A Machine row's instance as its cloud names it (a providerID row shows it already)."""
    found = clouds_by_instance(pool.cloud).get(instance_key(instance))
    if pool.cloud is None or found is None or found.id is None:
        return None
    return f"{pool.cloud.kind} instance {found.id}" + (f" in {found.zone}" if found.zone else "")


def _instance(instance: Instance, pool: PoolDescription, ctx: _Context) -> TreeRow:
    machine = instance.machine
    base: dict[str, Any] = {}
    if machine is not None:
        row = _object(machine.object, ctx, RowKind.MACHINE)
        base["version"] = machine.version or ""
    else:
        row = make_row(RowKind.PROVIDER_ID, f"providerID {short_provider_id(instance.provider_id)}")
    if instance.problems:
        base |= {"message": "; ".join(instance.problems), "problem": True}
    where = _in_cloud(instance, pool) if machine is not None else None
    if where:
        base["message"] = "; ".join(filter(None, (base.get("message"), where)))
    extra = [_object(instance.infra_machine, ctx)] if instance.infra_machine else []
    extra += [_node(instance.node, ctx)] if instance.node else []
    return _rebuilt(
        row, codes=_instance_codes(instance, pool, ctx), children=(*row.children, *extra), **base
    )


def _rebuilt(row: TreeRow, **changes: Any) -> TreeRow:
    """The row with some cells changed; its health follows a changed message."""
    changed = replace(row, **changes)
    return replace(changed, health=health_of(changed.headline, changed.problem))


def _group(
    instances: list[Instance],
    what: str,
    ctx: _Context,
    min_ready_seconds: int,
    checked: bool = True,
    *,
    nodes_known: bool = True,
) -> TreeRow:
    """Healthy siblings folded into one row; unchecked when their health is not known.
    Availability needs the Nodes: without them it is "?", not zero."""
    names = sorted(
        i.sort_name if i.machine or i.node else short_provider_id(i.provider_id) for i in instances
    )
    versions = sorted(
        {i.node.kubelet_version for i in instances if i.node and i.node.kubelet_version}
    )
    more = ", ..." if len(names) > 2 else ""
    plural = what if len(instances) == 1 else f"{what}s"
    available = sum(
        1 for i in instances if i.node and node_available(i.node, min_ready_seconds, ctx.now)
    )
    total = len(instances)
    return TreeRow(
        RowKind.GROUP,
        f"{total} {plural}",
        ready=f"{total}/{total}" if checked else "",
        available=(f"{available}/{total}" if nodes_known else f"?/{total}") if checked else "",
        version=",".join(versions),
        message=f"See {', '.join(names[:2])}{more}",
        health=Health.OK if checked else Health.UNKNOWN,
    )


def _instances(pool: PoolDescription, ctx: _Context) -> list[TreeRow]:
    """Problems first, always shown; healthy instances one by one only with show_all."""
    troubled = [_instance(i, pool, ctx) for i in pool.instances if not i.healthy]
    healthy = [i for i in pool.instances if i.healthy]
    if ctx.show_all:
        return troubled + [_instance(i, pool, ctx) for i in healthy]
    if not healthy:
        return troubled
    min_ready = pool.pool.min_ready_seconds
    nodes_known = pool.counts.nodes_matched is not None
    if pool.uses_machines:
        return [*troubled, _group(healthy, "Machine", ctx, min_ready, nodes_known=nodes_known)]
    # Without Machines or Nodes nothing says the providerIDs are healthy: no check mark.
    what = "Node" if nodes_known else "providerID"
    return [*troubled, _group(healthy, what, ctx, min_ready, nodes_known)]


def _pool(pool: PoolDescription, ctx: _Context) -> TreeRow:
    mp = pool.pool
    counts = pool.counts
    nodes_known = counts.nodes_ready is not None
    ready = counts.nodes_ready if nodes_known else counts.status_ready
    available = counts.nodes_available if nodes_known else counts.status_available
    desired = "?" if counts.desired is None else str(counts.desired)
    cond = mp.conditions.first("Available", "Ready")
    head = headline(cond, ctx.now) if cond else None
    message, problem = (head.message if head else ""), False
    if mp.deleting_since is not None:
        message, problem = f"deleting for {human_duration(ctx.now - mp.deleting_since)}", True
    elif mp.failure:
        message, problem = f"failure: {mp.failure}", True
    where = (mp.namespace, mp.name)
    parts = [_object(s, ctx) for s in (pool.bootstrap, pool.infra) if s is not None]
    return make_row(
        RowKind.POOL,
        f"MachinePool {mp.namespace}/{mp.name}",
        head,
        ready=f"{ready}/{desired}",
        available=f"{available}/{desired}",
        phase=mp.phase,
        version=mp.desired_version or "",
        message=message,
        problem=problem,
        codes=_codes(
            [f for f in ctx.findings if (f.namespace, f.pool) == where and not f.instances]
        ),
        children=(
            *_conditions("MachinePool", mp.conditions, ctx),
            *parts,
            *_instances(pool, ctx),
        ),
    )


def _outside_node(outside: OutsideNode, cluster: ClusterDescription, ctx: _Context) -> TreeRow:
    name = outside.node.name
    codes = _codes(
        [
            f
            for f in ctx.findings
            if (f.namespace, f.cluster, f.pool) == (cluster.namespace, cluster.name, "")
            and (name in f.instances or f.subject == f"Node {name}")
        ]
    )
    message = "; ".join(outside.reasons) or "no pool claims it"
    return _rebuilt(
        _node(outside.node, ctx), message=message, problem=bool(outside.reasons), codes=codes
    )


def _fold_quiet(rows: list[tuple[OutsideNode, TreeRow]], ctx: _Context) -> tuple[TreeRow, ...]:
    """Nodes with nothing to say (Ready, no finding) fold into one row unless show_all, as
    healthy instances do: a Cluster's unmanaged node group would be a row per Node."""
    quiet = [node for node, row in rows if not (row.problem or row.codes)]
    if ctx.show_all or len(quiet) < 2:
        return tuple(row for _, row in rows)
    names = sorted(n.node.name for n in quiet)
    more = ", ..." if len(names) > 2 else ""
    folded = TreeRow(
        RowKind.GROUP,
        f"{len(quiet)} Nodes",
        message=f"no pool claims them; see {', '.join(names[:2])}{more}",
        health=Health.OK,
    )
    return (*(row for _, row in rows if row.problem or row.codes), folded)


def _outside(cluster: ClusterDescription, ctx: _Context) -> list[TreeRow]:
    """One group row for the Nodes no pool holds: counted ones as numbers, the rest as rows."""
    outside = cluster.outside
    if outside is None or outside.total == 0:
        return []
    if outside.kept_to and not outside.listed:
        return []
    rows = _fold_quiet([(n, _outside_node(n, cluster, ctx)) for n in outside.listed], ctx)
    counts = (
        f"control plane {outside.control_plane}, MachineDeployments "
        f"{outside.machine_deployments}, others {len(outside.listed)}"
    )
    if outside.kept_to:
        counts = f"{len(outside.listed)} most likely of {', '.join(outside.kept_to)}"
    worst = Health.ERROR if any(r.problem for r in rows) else Health.OK
    return [
        TreeRow(
            RowKind.GROUP, "Nodes in no MachinePool", message=counts, health=worst, children=rows
        )
    ]


def _cluster(cluster: ClusterDescription, ctx: _Context) -> TreeRow:
    label = f"Cluster {cluster.namespace}/{cluster.name}"
    if cluster.cluster is not None:
        row = _object(cluster.cluster, ctx, RowKind.CLUSTER)
    elif cluster.cluster_unread:
        row = make_row(RowKind.CLUSTER, label, message="Cluster not readable")
    else:
        row = make_row(RowKind.CLUSTER, label, message="Cluster object not found", problem=True)
    changes: dict[str, object] = {}
    if cluster.paused:
        changes = {"message": "spec.paused is true: nothing is reconciled", "problem": True}
    pools = tuple(_pool(p, ctx) for p in cluster.pools)
    outside = _outside(cluster, ctx)
    return _rebuilt(row, children=(*row.children, *pools, *outside), **changes)


def cluster_findings(
    cluster: ClusterDescription, findings: Sequence[Finding]
) -> tuple[Finding, ...]:
    """The findings listed under a Cluster's tree: its pools' and its own."""
    names = {p.pool.name for p in cluster.pools} | {""}
    return tuple(
        f
        for f in findings
        if (f.namespace, f.cluster) == (cluster.namespace, cluster.name) and f.pool in names
    )


def build_tree(
    description: Description,
    now: datetime,
    *,
    findings: Sequence[Finding] = (),
    show_all: bool = False,
    show_conditions: frozenset[str] = frozenset(),
) -> TreeModel:
    """show_conditions holds lower-cased kinds whose conditions are all listed ("all": every)."""
    ctx = _Context(now, show_all, show_conditions, tuple(findings))
    return TreeModel(
        tuple((_cluster(c, ctx), cluster_findings(c, findings)) for c in description.clusters)
    )
