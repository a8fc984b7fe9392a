"""diagnose: every known MachinePool problem as a finding with evidence, action and references.

Each rule (R1-R28, after the upstream bug it detects) has one or more codes (MP0101 is R1a);
`kubectl machinepool explain --list` lists them with their upstream references. Rules are pure functions over describe's model plus the raw objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kubectl_machinepool.base.fields import dig
from kubectl_machinepool.diagnostics import (
    cluster,
    healthchecks,
    infrastructure,
    lifecycle,
    nodes,
    ownership,
    replicas,
    scaling,
    versions,
    zones,
)
from kubectl_machinepool.diagnostics.core import CapiVersion, Context, Finding, Rule, Severity
from kubectl_machinepool.diagnostics.ignoring import Ignore, Ignored, ignored, set_aside
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.controllers import controller_tag, core_controller
from kubectl_machinepool.model.description import Description, PoolDescription
from kubectl_machinepool.model.snapshot import Snapshot

RULES: list[Rule] = sorted(
    scaling.RULES
    + replicas.RULES
    + infrastructure.RULES
    + nodes.RULES
    + lifecycle.RULES
    + versions.RULES
    + healthchecks.RULES
    + zones.RULES
    + cluster.RULES
    + ownership.RULES,
    key=lambda r: r.code,
)
BY_CODE = {rule.code: rule for rule in RULES}
_CLUSTER_LOOKS_HEALTHY = BY_CODE["MP1701"]
_PAUSED = BY_CODE["MP0001"]


def capi_version(snapshot: Snapshot, override: str | None) -> CapiVersion:
    """From --capi-version, else the manager container's image tag of the core controller."""
    if override:
        return CapiVersion.parse(override, "--capi-version")
    deployment = core_controller(snapshot)
    if deployment is None:
        return CapiVersion(None, "the capi-controller-manager Deployment was not read")
    namespace = dig(deployment, "metadata", "namespace")
    return CapiVersion.parse(
        controller_tag(deployment),
        f"image of Deployment {namespace}/{dig(deployment, 'metadata', 'name')}",
    )


def diagnose(
    description: Description, snapshot: Snapshot, capi: CapiVersion, thresholds: Thresholds
) -> list[Finding]:
    """All findings, per pool most severe first; pools in namespace/name order."""
    return diagnosis(description, snapshot, capi, thresholds, ())[0]


def diagnosis(
    description: Description,
    snapshot: Snapshot,
    capi: CapiVersion,
    thresholds: Thresholds,
    ignores: Sequence[Ignore],
) -> tuple[list[Finding], Ignored]:
    """The findings no ignore covers, as diagnose() orders them, and those set aside. A pool's
    are set aside before MP0001 names what it holds back and MP1701 counts its problems."""
    found: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    aside: list[tuple[Finding, str]] = []
    for described in description.clusters:
        ctx = Context(described, snapshot, description.now, capi, thresholds)
        for rule in RULES:
            for finding in rule.check_cluster(rule, ctx) if rule.check_cluster else ():
                # A dump's Nodes stand for every Cluster in it: report each Node once.
                key = (finding.code, finding.namespace, finding.subject)
                if key not in seen:
                    seen.add(key)
                    found += set_aside([finding], ignores, aside)
        for pool in described.pools:
            pool_findings = set_aside(
                (f for rule in RULES if rule.check for f in rule.check(rule, pool, ctx)),
                ignores,
                aside,
            )
            if pool.paused_by:
                withheld = sorted(
                    {f.code for f in pool_findings if BY_CODE[f.code].needs_reconcile}
                )
                pool_findings = [f for f in pool_findings if not BY_CODE[f.code].needs_reconcile]
                paused = cluster.paused_reconciliation(_PAUSED, pool, ctx, withheld)
                pool_findings += set_aside(paused, ignores, aside)
            problems = sum(1 for f in pool_findings if f.severity >= Severity.WARNING)
            healthy = cluster.cluster_looks_healthy(_CLUSTER_LOOKS_HEALTHY, pool, ctx, problems)
            pool_findings += set_aside(healthy, ignores, aside)
            found += [with_evidence(f, pool) for f in pool_findings]
    ordered = sorted(found, key=lambda f: (f.namespace, f.pool, -f.severity, f.code, f.subject))
    return ordered, ignored(aside, ignores)


# Events listed under a finding as its evidence.
EVIDENCE = 3


def with_evidence(finding: Finding, pool: PoolDescription) -> Finding:
    """The finding with the pool's Events about what it names (the pool itself, its infra pool
    and bootstrap config when it names nothing): Warnings first, the most recent first."""
    if not pool.events:
        return finding
    names = set(finding.instances) | {o.name for o in finding.objects}
    if not names:
        mp = pool.pool
        refs = [r for r in (mp.infrastructure_ref, mp.bootstrap_ref) if r is not None]
        names = {mp.name, *(r.name for r in refs)}
    relevant = [e for e in pool.events if e.name in names]
    relevant.sort(
        key=lambda e: (e.type != "Warning", -(e.last.timestamp() if e.last else 0), e.reason)
    )
    return replace(finding, events=tuple(relevant[:EVIDENCE]))


__all__ = [
    "BY_CODE",
    "RULES",
    "CapiVersion",
    "Finding",
    "Severity",
    "Thresholds",
    "capi_version",
    "core_controller",
    "diagnose",
]
