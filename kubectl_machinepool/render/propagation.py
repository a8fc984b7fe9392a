"""diff-metadata as a compact per-key diff, and as a document."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.propagation import Arrival, KeyReport, PoolPropagation
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.glyphs import UNICODE, Glyphs
from kubectl_machinepool.render.structured import SCHEMA_VERSION
from kubectl_machinepool.render.wrap import line_width, wrap

# Without a width (piped output) notes wrap here.
WIDTH = 100


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def _present(arrivals: Sequence[Arrival]) -> str:
    machines = sum(1 for a in arrivals if a.state == "present" and a.target.startswith("Machine "))
    nodes = sum(1 for a in arrivals if a.state == "present" and a.target.startswith("Node "))
    return ", ".join(_plural(n, w) for n, w in ((machines, "Machine"), (nodes, "Node")) if n)


def _value(value: str | None) -> str:
    if value == "":
        return '""'
    return json.dumps(value) if value and " " in value else escape(str(value))


def _key_lines(report: KeyReport, palette: Palette, glyphs: Glyphs, width: int) -> list[str]:
    lines = [f"  {report.kind} {escape(report.key)}={_value(report.value)}"]
    everything = (*report.machines, *(report.nodes or ()))
    present = _present(everything)
    if present:
        lines.append(f"    {palette.good(glyphs.ok)} {present}")
    mark: dict[str, Callable[[str], str]] = {"missing": palette.bad, "different": palette.warn}
    for arrival in everything:
        if arrival.state == "missing":
            lines.append(f"    {mark['missing']('-')} {escape(arrival.target)}: missing")
        elif arrival.state == "different":
            lines.append(
                f"    {mark['different']('~')} {escape(arrival.target)}: "
                f"has {_value(arrival.actual)}"
            )
    if report.nodes is None and report.never_reason is None:
        lines.append("    ? Nodes: not compared")
    if report.never_reason:
        anyway = [a.target for a in report.nodes or () if a.actual is not None]
        line = f"Nodes: never, {report.never_reason}"
        if anyway:
            line += f" ({_plural(len(anyway), 'Node')} carry it anyway, set outside Cluster API)"
        lines += wrap(escape(line), width, f"    {glyphs.dot} ", "      ", break_long_words=True)
    if not everything and report.nodes is not None:
        lines.append("    (the pool has no Machines or Nodes to compare)")
    return lines


def render_propagation(
    pools: Sequence[PoolPropagation],
    palette: Palette,
    *,
    glyphs: Glyphs = UNICODE,
    width: int | None = None,
) -> str:
    """The per-key diff; the "never" notes wrap at width columns (a terminal's), or at WIDTH."""
    out: list[str] = []
    for result in pools:
        mp = result.pool.pool
        machines = sum(1 for i in result.pool.instances if i.machine)
        nodes = sum(1 for i in result.pool.instances if i.listed and i.node)
        counted = "Nodes not read" if result.pool.counts.nodes_matched is None else None
        found = f"{_plural(machines, 'Machine')}, {counted or _plural(nodes, 'Node')}"
        has = machine_pool_machines(result)
        if has is None:
            # Without the infra pool nothing says whether Machines exist: claim neither.
            kind, found = (
                "MachinePool Machines unknown (the infra pool is not readable)",
                (_plural(nodes, "Node")),
            )
        else:
            kind = "with MachinePool Machines" if has else "without MachinePool Machines"
        out.append(
            escape(f"MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster}), {kind}: ") + found
        )
        rules = result.rules
        extra = ", ".join(
            [
                *(f"label ~ {r}" for r in rules.labels),
                *(f"annotation ~ {r}" for r in rules.annotations),
            ]
        )
        out.append(escape(f"  extra sync regexes: {extra or 'none'} ({rules.source})"))
        if not result.keys:
            out.append("  the template has no labels or annotations of its own")
        for report in result.keys:
            out += _key_lines(report, palette, glyphs, line_width(width, WIDTH))
        for left in result.leftovers:
            value = "" if left.value is None else f"={_value(left.value)}"
            where = escape(f"{left.kind} {left.key}") + value + escape(f" on Node {left.node}")
            out.append(
                f"  {palette.warn('!')} {where}: put there by Cluster API, not in the template now"
            )
        out.append(f"  {escape(result.summary)}")
        out.append("")
    return "\n".join(out)


def machine_pool_machines(result: PoolPropagation) -> bool | None:
    """True, False, or None when the infra pool could not be read (docs/diff-metadata.md)."""
    return True if result.pool.uses_machines else result.pool.pool.has_machines


def _arrival(a: Arrival) -> dict[str, Any]:
    return {"target": a.target, "state": a.state, "actual": a.actual}


def propagation_document(pools: Sequence[PoolPropagation]) -> dict[str, Any]:
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolMetadataDiff",
        "machinePools": [
            {
                "namespace": r.pool.pool.namespace,
                "name": r.pool.pool.name,
                "cluster": r.pool.pool.cluster,
                "machinePoolMachines": machine_pool_machines(r),
                "syncRules": {
                    "labels": list(r.rules.labels),
                    "annotations": list(r.rules.annotations),
                    "source": r.rules.source,
                },
                "keys": [
                    {
                        "kind": k.kind,
                        "key": k.key,
                        "value": k.value,
                        "reachesNodes": None
                        if k.nodes is None and k.never_reason is None
                        else k.never_reason is None,
                        "neverReason": k.never_reason,
                        "machines": [_arrival(a) for a in k.machines],
                        "nodes": None if k.nodes is None else [_arrival(a) for a in k.nodes],
                    }
                    for k in r.keys
                ],
                "leftovers": [
                    {"kind": x.kind, "key": x.key, "node": x.node, "value": x.value}
                    for x in r.leftovers
                ],
                "nodesNotCompared": r.nodes_unknown,
                "summary": r.summary,
            }
            for r in pools
        ],
    }
