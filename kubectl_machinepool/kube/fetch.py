"""What to read for each command: one LIST per kind in scope, never one request per object.

Only the MachinePool list and API discovery are essential. Everything else that cannot be read
(RBAC, a missing CRD, an unreachable workload cluster) becomes a note and the rest is still shown.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from kubectl_machinepool.base.apiversion import CAPI_GROUP, group_of
from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError, UnreachableError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.clusterreads import clusters_ahead, in_scope_key, read_clusters
from kubectl_machinepool.kube.instancereads import Instances, machine_kinds
from kubectl_machinepool.kube.owners import OwnerReads
from kubectl_machinepool.kube.parallel import MAX_PARALLEL, Pending
from kubectl_machinepool.kube.reads import Outcome, Reads, template_refs
from kubectl_machinepool.kube.resource import (
    CLUSTERCTL_PROVIDERS,
    DEPLOYMENTS,
    EVENTS,
    NODES,
    SECRETS,
)
from kubectl_machinepool.kube.warmstart import pools_read
from kubectl_machinepool.kube.workload import workload_nodes, workload_of
from kubectl_machinepool.model.controllers import CORE_PROVIDER, PROVIDER_LABEL
from kubectl_machinepool.model.poolname import POOL_NAME_LABEL
from kubectl_machinepool.model.selector import Selection, selected
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.providers.registry import infra_pool

if TYPE_CHECKING:
    from kubectl_machinepool.kube.changes import Watched

CORE_SELECTOR = f"{PROVIDER_LABEL}={CORE_PROVIDER}"
# Connections opened beside a read plan's first LISTs (the MachinePools', the Machines'), for
# the reads that start when the pools are in: as many as run at once, less those two, of which
# the MachinePools' is free again by then. Each would cost the reads after it two round trips
# (TCP, TLS) on a wide-area link; opened beside the first, they cost none.
AHEAD = MAX_PARALLEL - 2
# list's, in one namespace: its Cluster's Secret GET takes the MachinePool LIST's connection,
# and an infra kind's CRD GET and LIST on one opened ahead end no later than the Nodes' chain.
# Each connection opened ahead costs a TLS handshake (about 1.6 ms of CPU) that a nearby server
# does not repay: list -n, which reads little, would pay for seven. Across namespaces (-A) it
# is AHEAD + 1, there being no Machine LIST beside the MachinePools'.
IN_A_NAMESPACE = 1


def read_pools(
    kube: Kube,
    namespace: str | None,
    selection: Selection,
    workload_kubeconfig: str | None,
    timeout: float | None,
) -> Snapshot:
    """For `list`: the MachinePools in scope, the infra pools of those selected, and beside
    them the Nodes of their Clusters (one LIST each, for UP-TO-DATE and FINDINGS). Every pool in
    scope is kept, named or not, so that the Nodes of one left out are not taken for strays."""
    reads = Reads(kube)
    every = pools_read(
        kube,
        namespace,
        selection,
        workload_kubeconfig,
        timeout,
        ahead=AHEAD + 1 if namespace is None else IN_A_NAMESPACE,
        connections=1,
        selector=True,
    )
    pools = [p for p in every if selected(p, selection)]
    clusters = sorted({_cluster_of(p) for p in pools})
    nodes = [
        reads.spawn(
            partial(workload_nodes, kube, ns, name, workload_kubeconfig, timeout, events=False)
        )
        for ns, name in clusters
    ]
    refs = template_refs(pools, "infrastructureRef")
    infra = reads.take(reads.kinds(refs, namespace, "MACHINES shows <unknown>"))
    workloads = [read.result() for read in nodes]
    reads.settle()
    # What list never reads is unread, not read and found empty.
    unread = [*reads.unread, *_LIST_LEAVES, *((g, k) for g, _, k in machine_kinds(infra))]
    return Snapshot.of(
        [*every, *infra],
        [*reads.notes, *(w.note for w in workloads if w.note)],
        workloads,
        unread,
        unread_notes=reads.unread_notes,
    )


_LIST_LEAVES = [(CAPI_GROUP, kind) for kind in ("Cluster", "Machine", "MachineHealthCheck")]


def _cluster_of(pool: RawObject) -> tuple[str, str]:
    namespace = text(dig(pool, "metadata", "namespace")) or ""
    return namespace, text(dig(pool, "spec", "clusterName")) or ""


def _companion_kinds(infra_refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """The kinds the pools' providers keep the cloud's side in (AKS: ASO agent pools)."""
    found: dict[tuple[str, str], str | None] = {}
    for group, kind in infra_refs:
        provider = infra_pool(group, kind)
        if provider is not None and provider.companion is not None:
            found[(provider.companion.group, provider.companion.kind)] = None
    return found


# Events about other kinds (Pods, Services, ...) are not kept: the timeline is the pools'.
_EVENT_KINDS_SKIPPED = frozenset({"Pod", "Service", "Endpoints", "ConfigMap", "Secret"})


def _events(reads: Reads, namespace: str | None) -> Outcome:
    """The Events in scope, but those about kinds no pool has. Events that cannot be read
    are a note like any other kind's: a Warning Event may be among them."""
    why = "the pools' Events are not shown"
    try:
        found = reads.kube.list_of(EVENTS, namespace, _pool_event, managed_fields=False)
    except MachinePoolError as err:
        return Outcome("", "Event", why, [], err)
    return Outcome("", "Event", why, [e for e in found if e is not None])


def _pool_event(obj: RawObject) -> RawObject | None:
    about = obj.get("involvedObject")
    kind = about.get("kind") if isinstance(about, dict) else None
    return None if kind in _EVENT_KINDS_SKIPPED else obj


_CHECKS = "MachineHealthChecks are not shown or judged"


def _rule_reads(
    reads: Reads, namespace: str | None, infra_refs: Iterable[tuple[str, str]]
) -> list[Pending[Outcome]]:
    """What only rules read: the core controller's Deployment (its version), the Secret names
    in scope, and the objects the pools' providers keep the cloud's side in."""
    return [
        reads.later_resource(
            DEPLOYMENTS, None, "the Cluster API version is unknown", selector=CORE_SELECTOR
        ),
        reads.later_resource(
            SECRETS,
            namespace,
            "missing bootstrap data Secrets are not detected",
            metadata_only=True,
        ),
        *reads.kinds(_companion_kinds(infra_refs), namespace, "their versions are not compared"),
    ]


def read_description(
    kube: Kube,
    namespace: str | None,
    selection: Selection,
    workload_kubeconfig: str | None,
    timeout: float | None,
    *,
    diagnosis: bool = False,
    report_extras: bool = False,
    meanwhile: Callable[[], object] | None = None,
    keep_nodes: bool = False,
    owners: bool = False,
) -> Snapshot:
    """For `describe` and the commands after it: pools, their Clusters, provider objects, Nodes.

    diagnosis adds what only rules need: the core controller Deployment (its version), control
    planes, Secret names in scope and the workload's bootstrap token Secret names. Every pool in
    scope is kept, selected or not, so a Node naming a pool that is not there is really orphaned.
    The Machines (the largest LIST) are read beside the MachinePools; after these, every LIST
    runs side by side, the workload clusters' Nodes included; meanwhile is called once they all
    have started (the caller's own work, e.g. imports). keep_nodes (export): the Node objects
    are kept, not only their states. owners (a write's plan): the objects that apply the
    selected pools and their infra pools from outside (kube/owners.py), read beside the rest.
    """
    reads = Reads(kube)
    early_clusters = clusters_ahead(reads, namespace)
    instances = Instances(reads, namespace)
    try:
        # The Clusters LIST's connection is free again by the time the pools are in.
        every_pool = pools_read(
            kube,
            namespace,
            selection,
            workload_kubeconfig,
            timeout,
            ahead=AHEAD - 1,
            connections=2 + diagnosis,
        )
    except MachinePoolError:
        reads.settle()  # the Machine LIST started beside it must not outlive the connection
        raise
    pools = [p for p in every_pool if selected(p, selection)]
    owned = OwnerReads(reads, pools if owners else ())
    clusters = {
        (p["metadata"].get("namespace", ""), (p.get("spec") or {}).get("clusterName", ""))
        for p in pools
    }

    def nodes_of(key: tuple[str, str]) -> Pending[WorkloadNodes]:
        ns, name = key
        return reads.spawn(
            partial(
                workload_nodes,
                kube,
                ns,
                name,
                workload_kubeconfig,
                timeout,
                tokens=diagnosis,
                keep=keep_nodes,
            )
        )

    workloads = {key: nodes_of(key) for key in sorted(clusters)}
    # A Cluster asked for by name is read even when it has no pool left: its Nodes can still
    # name pools that went (orphans), and saying so is the point of asking.
    named = selection.cluster if not (selection.names or selection.selector) else None
    in_scope = frozenset(clusters)  # the Clusters the pools name, before any asked for by name
    cluster_read = (
        reads.spawn(
            partial(read_clusters, reads, early_clusters, in_scope, named, diagnosis=diagnosis)
        )
        if pools or named
        else None
    )
    infra_refs = template_refs(pools, "infrastructureRef")
    instances.start(infra_refs)
    # The bootstrap configs, and the Events about the pools' objects (as describe shows them);
    # for describe and diagnose, the MachineHealthChecks (described per pool, judged by a rule).
    bootstrap = [
        *reads.kinds(
            template_refs(pools, "bootstrap"), namespace, "bootstrap configs are not shown"
        ),
        *([reads.spawn(partial(_events, reads, namespace))] if pools else []),
        *(
            [reads.later_resource(kube.capi_resource("MachineHealthCheck"), namespace, _CHECKS)]
            if diagnosis and pools
            else []
        ),
    ]
    extras = _rule_reads(reads, namespace, infra_refs) if diagnosis and (pools or named) else []
    if meanwhile is not None:
        meanwhile()

    objects: list[RawObject] = list(every_pool)
    cluster_objects: list[RawObject] = []
    control_planes: list[Outcome] = []
    if cluster_read is not None:
        read, control_planes = cluster_read.result()
        for obj in reads.record(read):
            if (key := in_scope_key(obj, in_scope, named)) is not None:
                cluster_objects.append(obj)
                clusters.add(key)
    for key in sorted(clusters - workloads.keys()):
        workloads[key] = nodes_of(key)
    objects += cluster_objects
    infra = instances.take_infra()
    objects += infra
    owned.start(infra if owners else ())
    objects += reads.take(bootstrap)
    objects += instances.take(infra)
    secrets_scope = None
    if diagnosis and (pools or cluster_objects):
        reads.quiet, reads.extras = not report_extras, True
        objects += [o for read in control_planes for o in reads.record(read)]
        objects += reads.take(extras)
        if ("", "Secret") not in reads.unread:
            secrets_scope = namespace or ""
    nodes = [workloads[key].result() for key in sorted(clusters)]
    reads.settle()
    kept = {id(obj) for obj in objects}  # not what a LIST read in vain (ids are unique here)
    return Snapshot.of(
        [*objects, *owned.taken()],
        [*reads.notes, *(w.events_note for w in nodes if w.events_note)],
        nodes,
        reads.unread,
        secrets_scope,
        unread_notes=reads.unread_notes,
        made={key: made for key, made in instances.made.items() if key[1] in kept},
        extra_notes=reads.extra_notes,
        unread_objects=owned.unread,  # once taken, just above
    )


def _listed_pools(kube: Kube, namespace: str | None, selector: str | None) -> Outcome:
    why = "the infra pool kinds in use are not known"
    try:
        found = kube.machine_pools(namespace, selector)
    except UnreachableError:
        raise  # no server to ask: nothing `providers` could say is known
    except MachinePoolError as err:
        return Outcome(CAPI_GROUP, "MachinePool", why, [], err)
    return Outcome(CAPI_GROUP, "MachinePool", why, found)


def read_providers(kube: Kube, namespace: str | None, selector: str | None) -> Snapshot:
    """For `providers`: clusterctl's Provider objects and the controller Deployments clusterctl
    labelled (every namespace), and the MachinePools in scope, side by side. A cluster that
    clusterctl did not install serves no Provider kind: that is no note, the Deployments name
    the providers then."""
    reads = Reads(kube)
    inventory = reads.later_resource(
        CLUSTERCTL_PROVIDERS, None, "the providers are named by their controller Deployments"
    )
    deployments = reads.later_resource(
        DEPLOYMENTS,
        None,
        "the controllers' images and the MachinePool feature gate are not known",
        selector=PROVIDER_LABEL,
    )
    pools = reads.spawn(partial(_listed_pools, kube, namespace, selector))
    try:
        listed = inventory.result()
        objects = [] if isinstance(listed.error, NotFoundError) else reads.record(listed)
        objects += reads.take([deployments, pools])
    finally:
        reads.settle()
    return Snapshot.of(objects, reads.notes, unread=reads.unread, unread_notes=reads.unread_notes)


def watched(
    kube: Kube,
    snapshot: Snapshot,
    namespace: str | None,
    *,
    node_clusters: Iterable[tuple[str, str]],
    override: str | None,
    timeout: float | None,
    instances: bool = True,
    events: bool = False,
) -> list[Watched]:
    """What a followed view watches, read from what it showed: the MachinePools, their infra
    pool kinds, the Machines and infra machine kinds when there are any (and instances is
    asked for), and the Nodes of these Clusters. A kind that cannot be resolved or a workload
    that cannot be reached is left out: the view's own reads say why."""
    from kubectl_machinepool.kube.changes import Watched

    pools = [o for o in snapshot.objects if o.get("kind") == "MachinePool"]
    found = [Watched(kube, kube.capi_resource("MachinePool"), namespace)]
    kinds = set(template_refs(pools, "infrastructureRef"))
    infra = [
        o
        for o in snapshot.objects
        if (group_of(str(o.get("apiVersion", ""))), o.get("kind")) in kinds
    ]
    per_instance = (
        {(group, kind) for group, _, kind in machine_kinds(infra)} if instances else set()
    )
    if per_instance:
        found.append(Watched(kube, kube.capi_resource("Machine"), namespace, POOL_NAME_LABEL))
    for group, kind in sorted(kinds | per_instance):
        with contextlib.suppress(MachinePoolError):
            found.append(Watched(kube, kube.resource(group, kind), namespace))
    if events:
        found.append(Watched(kube, EVENTS, namespace))
    for ns, cluster in sorted(set(node_clusters)):
        with contextlib.suppress(MachinePoolError):
            found.append(Watched(workload_of(kube, ns, cluster, override, timeout), NODES, None))
    return found
