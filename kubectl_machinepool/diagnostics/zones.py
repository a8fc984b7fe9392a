"""Rules about how a pool's Nodes spread over its zones (R27)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from kubectl_machinepool.diagnostics.core import (
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.rollout import OLD, pool_rollout
from kubectl_machinepool.model.zones import listing, rebalancing, zone_source
from kubectl_machinepool.providers.registry import infra_pool


def settling(pool: PoolDescription, ctx: Context) -> bool:
    """The pool is being scaled or rolled: its zones are in passing, not yet where the provider
    leaves them."""
    mp, counts = pool.pool, pool.counts
    if mp.phase != "Running" or mp.deleting_since is not None:
        return True
    if counts.nodes_matched != counts.desired:
        return True
    for instance in pool.instances:
        machine, node = instance.machine, instance.node
        if (machine and machine.object.deleting_since) or (node and node.deleting_since):
            return True
    # Only whether instances are old counts here, not for how long nothing moved.
    return pool_rollout(pool, ctx.snapshot, ctx.now, timedelta.max).count(OLD) > 0


def zones_unbalanced(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    zones = pool.zones
    skew = zones.skew if zones else None
    if zones is None or skew is None or skew <= 1 or settling(pool, ctx):
        return
    mp = pool.pool
    ref = mp.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    infra = ctx.raw(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    if zones.expected is None:
        over = f"the zones its Nodes are in (the pool's zones are not known: {zones.source})"
    else:
        over = f"the zones of {zones.source}"
    message = (
        f"Nodes per zone {listing(zones.judged)}: max-min {skew} over {over}, where balanced "
        "is at most 1"
    )
    kind = ref.kind if ref else "the infra pool"
    source = zone_source(provider).source
    behaviour = f"{kind}: {rebalancing(provider, infra)}" + (f" ({source})" if source else "")
    yield rule.finding(pool, pool_subject(pool), message, action=f"{rule.action} {behaviour}.")


RULES = [
    Rule(
        "MP2701",
        "R27",
        "Zones out of balance",
        Severity.WARNING,
        "Nodes per zone (topology.kubernetes.io/zone, else failure-domain.beta.kubernetes.io/zone) over the zones the provider spreads the pool over (its infra pool's zone field or spec.failureDomains, as the provider uses them; when those are not known, the zones its Nodes are in): max-min above 1. Not judged while the pool is being scaled or rolled: phase not Running, matched Nodes not the desired count, an instance being deleted, or instances still on the old version or model; nor for fewer than two zones",
        "Cluster API keeps no zone balance for MachinePools; the cloud's group does, on its own terms, and deleting single instances (delete-machine, cluster-autoscaler, remediation) can leave a zone short, so losing that zone takes more of the pool than it should.",
        "Find what keeps a zone short (capacity, quota, its subnet, the provider's scaling events); let the provider rebalance, or scale out and back in; do not delete single instances from the short zone.",
        (CAPI + "4063",),
        zones_unbalanced,
    ),
]
