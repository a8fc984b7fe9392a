"""`list`'s pools: each MachinePool with its Nodes up to date, their kubelet versions, and the
warnings and errors of the rules that what list reads can judge.

list reads the MachinePools, their infra pools and the workload clusters' Nodes (one LIST per
Cluster), nothing else. Its findings are diagnose's own rules (diagnostics/rules.py) run over
the description made of those reads, counted only for the rules whose every input is among
them (COVERED, listed in docs/list.md); diagnose runs them all.

Library code: no click, no printing.
"""

from __future__ import annotations

from datetime import datetime

from kubectl_machinepool.app.options import RuleOptions
from kubectl_machinepool.diagnostics.core import CapiVersion, Finding, Severity
from kubectl_machinepool.diagnostics.rules import diagnosis
from kubectl_machinepool.model.description import ClusterDescription, describe
from kubectl_machinepool.model.listing import ListedPool, listed_pool
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot

# The rules judged from a MachinePool, its infra pool and its Cluster's Nodes alone. Left out:
# what needs the core controller's version (MP0501, MP0701, MP0903, MP1503), the Cluster
# (MP09xx, MP1201), Machines and infra machines (MP1601, MP1602, MP2101), bootstrap configs
# (MP1401), Secrets (MP1502), MachineHealthChecks (MP2601), and MP1001, whose pool is gone.
COVERED = frozenset(
    {
        # ScalingUp too long, and why: the pool's phase, conditions and managedFields, its
        # providerIDList against the Nodes; a Node no list holds, by its likely pool.
        "MP0100",
        "MP0101",
        "MP0102",
        "MP0103",
        "MP0104",
        # Who writes spec.replicas: the pool's annotations and managedFields; bounds the
        # autoscaler cannot use.
        "MP0201",
        "MP0301",
        "MP0302",
        "MP0303",
        # The infra pool not ready.
        "MP0401",
        # status.nodeRefs and the Ready count against the Nodes.
        "MP0702",
        "MP0704",
        "MP0705",
        # The uninitialized taint on the pool's Nodes, and on a Node no list holds.
        "MP0801",
        # The Nodes' kubelets against the desired version, a rollout that does not move.
        "MP1101",
        "MP1102",
        # The template's version against the infra pool's version and image fields.
        "MP1301",
        # BootstrapReady False on the pool.
        "MP1501",
        # What the infra pool says of autoscaling and its cloud group.
        "MP1802",
        "MP1803",
        "MP2401",
        "MP2501",
        # The Nodes per zone.
        "MP2701",
        # The pool's fields against its last-applied copy.
        "MP2801",
    }
)


# Judged with the default graces and nothing ignored.
JUDGED = RuleOptions()


def _counted(finding: Finding) -> bool:
    return finding.severity >= Severity.WARNING and finding.code in COVERED


def _strays(cluster: ClusterDescription) -> dict[str, tuple[str, ...]]:
    """The pools each Node no pool holds most likely belongs to, by Node name."""
    outside = cluster.outside
    return {n.node.name: n.likely_pools for n in outside.listed} if outside else {}


def listed_pools(
    snapshot: Snapshot, now: datetime, selection: Selection, rules: RuleOptions = JUDGED
) -> list[ListedPool]:
    """The selected pools, ordered like kubectl (namespace, then name), each with its counts
    and the codes of its findings; a finding about a Node no pool holds counts for the pools
    that Node most likely belongs to, as describe names them. rules: the graces and ignores
    diagnose would judge with (the user's config file), so that both count alike."""
    description = describe(snapshot, selection, now)
    capi = CapiVersion(None, "list does not read the core controller")
    found, _ = diagnosis(description, snapshot, capi, rules.thresholds, rules.ignores)
    findings = [f for f in found if _counted(f)]
    listed = []
    for cluster in description.clusters:
        strays = _strays(cluster)
        mine = [
            f for f in findings if (f.namespace, f.cluster) == (cluster.namespace, cluster.name)
        ]
        for described in cluster.pools:
            name = described.pool.name
            codes = tuple(
                f.code
                for f in mine
                if f.pool == name
                or (not f.pool and any(name in strays.get(n, ()) for n in f.instances))
            )
            listed.append(listed_pool(described, codes))
    return sorted(listed, key=lambda p: (p.pool.namespace, p.pool.name))
