"""A pool's Nodes per zone, against the zones its provider spreads it over (cluster-api#4063).

Cluster API passes spec.failureDomains to the provider and keeps nothing balanced itself; the
cloud's group (ASG, VMSS, MIG, node pool) does, on its own terms. So the zones a pool should be
balanced over are the ones the provider uses (providers.ZoneSource: the infra pool's own zone
fields, or spec.failureDomains), and a Node's zone is its topology.kubernetes.io/zone label (or
the deprecated failure-domain.beta.kubernetes.io/zone), named as the cloud names it. Balanced
means every zone within one Node of the others, as AWS, Azure and GCP define it.
Pure: a pool, its instances and its raw infra pool in, counts out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, field_keys, scalar, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.states import NodeState
from kubectl_machinepool.providers.records import Provider, ZoneSource

ZONE_LABEL = "topology.kubernetes.io/zone"
DEPRECATED_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
FAILURE_DOMAINS = "MachinePool spec.failureDomains"
# spec.failureDomains holds at most 100; a dump may hold anything.
MAX_ZONES = 100

# A provider this tool has not verified: Cluster API passes spec.failureDomains to every one.
_ASSUMED = ZoneSource(failure_domains=True)


@record
class ZoneCount:
    zone: str
    nodes: int
    ready: int
    # One of the pool's zones; False: Nodes in a zone the pool does not name; None: the
    # pool's zones are not known.
    expected: bool | None


@record
class PoolZones:
    """The pool's Nodes per zone. Zones the pool names come first, in its order, even with no
    Node; then any other zone a Node is in, by name."""

    # The zones the provider spreads the pool over, as the pool names them; None: not known.
    expected: tuple[str, ...] | None
    # Where they come from ("AWSMachinePool spec.availabilityZones"), or why they are not known.
    source: str
    counts: tuple[ZoneCount, ...]
    # Nodes without a zone label.
    unlabelled: int
    unlabelled_ready: int

    @property
    def judged(self) -> tuple[ZoneCount, ...]:
        """The zones balance is judged over: the pool's; when those are not known, the zones its
        Nodes are in (their max-min can only be larger over all the pool's zones)."""
        if self.expected is None:
            return self.counts
        return tuple(c for c in self.counts if c.expected)

    @property
    def skew(self) -> int | None:
        """max-min Nodes over the judged zones; None for fewer than two zones."""
        return skew(c.nodes for c in self.judged)

    @property
    def outside(self) -> tuple[ZoneCount, ...]:
        return tuple(c for c in self.counts if c.expected is False)


def skew(counts: Iterable[int]) -> int | None:
    found = list(counts)
    return max(found) - min(found) if len(found) > 1 else None


def node_zone(node: NodeState) -> str | None:
    return node.labels.get(ZONE_LABEL) or node.labels.get(DEPRECATED_ZONE_LABEL) or None


def zone_source(provider: Provider | None) -> ZoneSource:
    return provider.zones if provider and provider.zones else _ASSUMED


def _values(value: Any, keys: list[str]) -> list[str]:
    """Every zone the path reaches: a string, a number (an OCI AD) or a list of them."""
    if not keys:
        leaves = value if isinstance(value, list) else [value]
        return [s for s in map(scalar, leaves) if s]
    key, rest = keys[0], keys[1:]
    found = dig(value, key.removesuffix("[]"))
    if not key.endswith("[]"):
        return _values(found, rest)
    return [v for item in (found if isinstance(found, list) else []) for v in _values(item, rest)]


def _unique(zones: Iterable[str], key: Callable[[str], str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for zone in zones:
        seen.setdefault(key(zone), zone)
    return tuple(seen.values())[:MAX_ZONES]


def expected_zones(
    pool: MachinePool, provider: Provider | None, infra: RawObject | None
) -> tuple[tuple[str, ...] | None, str]:
    """The zones the provider spreads the pool over, and where they come from (or why they
    are not known)."""
    source = zone_source(provider)
    kind = pool.infrastructure_ref.kind if pool.infrastructure_ref else "the infra pool"
    naming = source.naming
    if (source.fields or source.placed_by) and infra is None:
        return None, f"{kind} was not read"
    if placed := next((p for p in source.placed_by if dig(infra, *field_keys(p))), None):
        return None, f"{kind} {placed} places the instances"
    for path in source.fields:
        if found := _values(infra, path.split(".")):
            return _unique(found, naming), f"{kind} {path}"
    if source.failure_domains and pool.failure_domains:
        return _unique(pool.failure_domains, naming), FAILURE_DOMAINS
    return None, _unnamed(kind, source)


def _unnamed(kind: str, source: ZoneSource) -> str:
    if source is _ASSUMED:
        return f"{kind} is not verified here and spec.failureDomains is empty"
    if source.failure_domains:
        return f"neither {kind} nor spec.failureDomains names zones"
    return f"{kind} names no zones"


def pool_zones(
    pool: MachinePool,
    instances: Iterable[Instance],
    provider: Provider | None,
    infra: RawObject | None,
) -> PoolZones:
    """The Nodes of the pool's instances (those Cluster API matched: listed by providerID) per
    zone."""
    expected, source = expected_zones(pool, provider, infra)
    naming = zone_source(provider).naming
    nodes: dict[str, list[int]] = {}
    shown: dict[str, str] = {}
    unlabelled = [0, 0]
    for instance in instances:
        node = instance.node
        if node is None or not instance.listed or not instance.provider_id:
            continue
        zone = node_zone(node)
        tally = unlabelled if zone is None else nodes.setdefault(naming(zone), [0, 0])
        if zone is not None:
            shown.setdefault(naming(zone), zone)
        tally[0] += 1
        tally[1] += 1 if node.ready else 0
    counts = []
    for zone in expected or ():
        tally = nodes.pop(naming(zone), [0, 0])
        counts.append(ZoneCount(zone, tally[0], tally[1], True))
    others = sorted((shown[key], tally) for key, tally in nodes.items())
    known = None if expected is None else False
    counts += [ZoneCount(zone, n, ready, known) for zone, (n, ready) in others]
    return PoolZones(expected, source, tuple(counts), *unlabelled)


def _kind(provider: Provider | None, infra: RawObject | None) -> str:
    return provider.kind if provider else text(dig(infra, "kind")) or "the infra pool"


def rebalancing(provider: Provider | None, infra: RawObject | None) -> str:
    """Whether, and how, the provider's cloud evens the zones out, as verified."""
    source = zone_source(provider)
    for path in source.rebalance_suspended:
        value = dig(infra, *field_keys(path))
        if isinstance(value, bool):
            if value:
                return f"its rebalancing is suspended ({_kind(provider, infra)} {path} is true)"
            break
    return source.rebalance or (
        f"whether {_kind(provider, infra)}'s provider evens the zones out is not verified"
    )


def listing(counts: Iterable[ZoneCount]) -> str:
    """`a=2, b=1`: Nodes per zone."""
    return ", ".join(f"{c.zone}={c.nodes}" for c in counts)


@record
class DeleteBalance:
    """How deleting one instance changes its pool's zone balance."""

    # The delete leaves the zones more than one Node apart, and no nearer than before.
    worse: bool
    message: str


def delete_balance(
    zones: PoolZones,
    instance: Instance,
    provider: Provider | None,
    infra: RawObject | None,
    *,
    replacing: bool,
) -> DeleteBalance | None:
    """Nodes per zone before -> after the delete, and what the provider does next; None for
    a pool of fewer than two zones."""
    judged = zones.judged
    if len(judged) < 2:
        return None
    then = rebalancing(provider, infra)
    if replacing:
        source = zone_source(provider)
        placed = source.replacement or (
            f"where {_kind(provider, infra)}'s provider puts the replacement is not verified"
        )
        then = f"{placed}; {then}"
    unknown = ""
    if zones.expected is None:
        unknown = f"; the pool's zones are not known ({zones.source}): only its Nodes' zones count"
    node = instance.node
    zone = node_zone(node) if node else None
    naming = zone_source(provider).naming
    keys = [naming(c.zone) for c in judged]
    counted = node is not None and instance.listed and bool(instance.provider_id)
    if zone is None or not counted or naming(zone) not in keys:
        if node is None:
            why = "the instance has no Node"
        elif zone is None:
            why = f"Node {node.name} has no zone label"
        elif not counted:
            why = f"Node {node.name} is not among the pool's matched Nodes"
        else:
            why = f"Node {node.name} is in zone {zone}, none of the pool's"
        return DeleteBalance(
            False,
            f"zone balance: {why}; the zones stay {listing(judged)} Nodes "
            f"(max-min {zones.skew}){unknown}; then {then}",
        )
    at = keys.index(naming(zone))
    after = [c.nodes - 1 if i == at else c.nodes for i, c in enumerate(judged)]
    before_skew, after_skew = zones.skew or 0, skew(after) or 0
    # One apart is still balanced (0 -> 1 is every delete from an even pool): not worth a warning.
    worse = after_skew > 1 and after_skew >= before_skew
    shown = ", ".join(
        f"{c.zone}={c.nodes} -> {n}" if i == at else f"{c.zone}={c.nodes}"
        for i, (c, n) in enumerate(zip(judged, after, strict=True))
    )
    lead = "zone balance"
    if worse:
        lead = (
            "the pool's zones stay unbalanced"
            if after_skew == before_skew
            else "the delete unbalances the pool's zones"
        )
    limit = "; balanced is at most 1" if worse else ""
    return DeleteBalance(
        worse,
        f"{lead}: {shown} Nodes (max-min {before_skew} -> {after_skew}{limit}){unknown}; "
        f"then {then}",
    )


def _balanced(nodes: list[int], to: int) -> tuple[list[int], bool]:
    """nodes at `to` in all, one instance at a time: each new one to the first emptiest zone,
    each going one from the last fullest; and whether any such pick was among tied zones. Whole
    levels at once, so a size of 2**31-1 costs a few steps per zone, not one per instance."""
    after, tied = list(nodes), False
    while (left := to - sum(after)) != 0:
        growing = left > 0
        level = min(after) if growing else max(after)
        group = [i for i, n in enumerate(after) if n == level]
        others = [n for n in after if n != level]
        # Every zone at the level takes one step before any takes a second (or reaches the
        # next level); the first pick of a round already chooses among len(group) zones.
        tied = tied or len(group) > 1
        gap = (min(others) - level if growing else level - max(others)) if others else abs(left)
        rounds = min(gap, abs(left) // len(group))
        step = 1 if growing else -1
        if rounds:
            for i in group:
                after[i] += step * rounds
            continue
        for i in group[: abs(left)] if growing else group[::-1][: abs(left)]:
            after[i] += step
    return after, tied


def scale_balance(
    zones: PoolZones | None, to: int, provider: Provider | None, infra: RawObject | None
) -> str | None:
    """Nodes per zone now -> at `to` instances, as a group that keeps its zones balanced holds
    them (new ones go to the emptiest zone, the fullest loses first: AWS, Azure and GCP alike);
    None for a pool of fewer than two zones or whose Nodes were not read."""
    judged = zones.judged if zones is not None else ()
    if zones is None or len(judged) < 2:
        return None
    after, tied = _balanced([c.nodes for c in judged], to)
    shown = ", ".join(f"{c.zone}={c.nodes} -> {n}" for c, n in zip(judged, after, strict=True))
    if tied:
        shown += " (or another of the zones tied, the group's choice)"
    then = rebalancing(provider, infra)
    return f"zones (Nodes): {shown}, if the group keeps them balanced; {then}"
