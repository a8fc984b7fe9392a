"""describe's Zones line: a pool's Ready/Nodes per zone, the zones it should be balanced over."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_machinepool.model.zones import PoolZones, ZoneCount
from kubectl_machinepool.render.table import clip

# Zones named on the line, and the characters of each: a label value holds at most 63, a dump
# anything.
SHOWN = 12
NAME_WIDTH = 63


def _counts(counts: Sequence[ZoneCount]) -> str:
    named = [f"{clip(c.zone, NAME_WIDTH)}={c.ready}/{c.nodes}" for c in counts[:SHOWN]]
    more = len(counts) - SHOWN
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def zones_line(zones: PoolZones | None) -> str | None:
    """None when there is nothing to say: Nodes not read, and no zone named or labelled."""
    if zones is None or not zones.counts:
        return None
    if zones.expected is None:
        where = f"the pool's zones are not known: {zones.source}"
    else:
        where = f"zones of {zones.source}"
    parts = [f"{_counts(zones.judged)} Ready/Nodes ({where})"]
    if (skew := zones.skew) is not None and skew > 1:
        parts.append(f"unbalanced, max-min {skew}")
    if zones.outside:
        parts.append(f"in no zone of the pool: {_counts(zones.outside)}")
    if zones.unlabelled:
        parts.append(f"without a zone label: {zones.unlabelled_ready}/{zones.unlabelled}")
    return "; ".join(parts)
