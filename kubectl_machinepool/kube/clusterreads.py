"""A describe's Clusters, and for a diagnosis their control planes (version skew): the Clusters
LIST started beside the MachinePools', the control planes read once the Clusters in scope are
known."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from kubectl_machinepool.base.apiversion import ref_group, version_of
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.reads import Outcome, Reads
from kubectl_machinepool.kube.resource import Resource


def in_scope_key(
    cluster: RawObject, in_scope: frozenset[tuple[str, str]], named: str | None
) -> tuple[str, str] | None:
    """The Cluster's key when a pool in scope names it or it was asked for by name."""
    key = (cluster["metadata"].get("namespace", ""), cluster["metadata"].get("name"))
    return key if key in in_scope or key[1] == named else None


_CLUSTERS = "Clusters show as not readable"


@dataclass(frozen=True)
class ClustersAhead:
    """The Clusters LIST started before the version served was known, and in which."""

    resource: Resource
    namespace: str | None
    listed: Pending[Outcome]


def clusters_ahead(reads: Reads, namespace: str | None) -> ClustersAhead:
    """The Clusters LIST started beside the MachinePools', in the version that LIST tries
    first: over a wide-area link a diagnosis's control planes (a CRD GET, then their LIST)
    would otherwise be the longest chain of the management server's, a round trip more."""
    likely = reads.kube.likely_capi_resource("Cluster")
    listed = reads.spawn(partial(reads.listed, likely, namespace, _CLUSTERS), slot=False)
    return ClustersAhead(likely, namespace, listed)


def read_clusters(
    reads: Reads,
    early: ClustersAhead,
    in_scope: frozenset[tuple[str, str]],
    named: str | None,
    *,
    diagnosis: bool,
) -> tuple[Outcome, list[Outcome]]:
    """The Clusters (listed again if the server turned out to serve another version), and for
    a diagnosis then their control planes (version skew), in one thread."""
    namespace, resource = early.namespace, reads.kube.capi_resource("Cluster")
    clusters = early.listed.result()
    if resource != early.resource:
        clusters = reads.listed(resource, namespace, _CLUSTERS)
    if not diagnosis:
        return clusters, []
    refs = _control_plane_refs([c for c in clusters.objects if in_scope_key(c, in_scope, named)])
    consequence = "version skew is not checked"
    return clusters, [
        reads.now(group, kind, namespace, consequence, version=version)
        for (group, kind), version in sorted(refs.items())
    ]


def _control_plane_refs(clusters: list[RawObject]) -> dict[tuple[str, str], str | None]:
    kinds: dict[tuple[str, str], str | None] = {}
    for cluster in clusters:
        ref = dig(cluster, "spec", "controlPlaneRef")
        kind = text(dig(ref, "kind"))
        if kind:
            version = version_of(text(dig(ref, "apiVersion")) or "") or None
            kinds.setdefault((ref_group(ref), kind), version)
    return kinds
