"""What to read for each command: one LIST per kind in scope, never one request per object.

Only the MachinePool list and API discovery are essential. Everything else that cannot be read
(RBAC, a missing CRD, an unreachable workload cluster) becomes a note and the rest is still shown.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.errors import MachinePoolError, UnreachableError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.compact import INSTANCE_UNUSED, Compactor
from kubectl_machinepool.kube.connection import connection_from_dict, load_connection
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.poolname import POOL_NAME_LABEL
from kubectl_machinepool.model.selector import Selection, selected
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.offline.dump import read_documents
from kubectl_machinepool.plans.disruption import Disruption, disruption_of
from kubectl_machinepool.providers.registry import infra_pool

if TYPE_CHECKING:
    from kubectl_machinepool.kube.changes import Watched

NODES = Resource("", "v1", "Node", "nodes", namespaced=False)
EVENTS = Resource("", "v1", "Event", "events")
# Events of Nodes are recorded in whichever namespace their reporter chose ("default" for the
# kubelet): read in every namespace, only those about Nodes.
NODE_EVENTS = "involvedObject.kind=Node"
SECRETS = Resource("", "v1", "Secret", "secrets")
PODS = Resource("", "v1", "Pod", "pods")
BUDGETS = Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
DEPLOYMENTS = Resource("apps", "v1", "Deployment", "deployments")
BOOTSTRAP_TOKENS = "type=bootstrap.kubernetes.io/token"
# clusterctl labels the core provider's components with this.
CORE_PROVIDER = "cluster.x-k8s.io/provider=cluster-api"
T = TypeVar("T")
# A workload cluster is secondary: without --request-timeout, do not wait for it forever. It
# must connect and keep sending within WORKLOAD_TIMEOUT; a whole answer may take
# WORKLOAD_ANSWER_TIMEOUT (5000 Nodes took more than 10 s on a busy 2-core machine).
WORKLOAD_TIMEOUT = 10.0
WORKLOAD_ANSWER_TIMEOUT = 120.0


def _template_refs(pools: Iterable[RawObject], field: str) -> dict[tuple[str, str], str | None]:
    """(group, kind) of each referenced infra pool or bootstrap config, and a v1beta1 version."""
    kinds: dict[tuple[str, str], str | None] = {}
    for pool in pools:
        template = ((pool.get("spec") or {}).get("template") or {}).get("spec") or {}
        ref = template.get(field) or {}
        if field == "bootstrap":
            ref = ref.get("configRef") or {}
        if not ref.get("kind"):
            continue
        api_version = ref.get("apiVersion", "")
        group = ref.get("apiGroup") or group_of(api_version)
        kinds.setdefault((group, ref["kind"]), api_version.rpartition("/")[2] or None)
    return kinds


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One LIST as it ended: the objects, or why there are none (for record() to say)."""

    group: str
    kind: str
    consequence: str
    objects: list[RawObject]
    error: MachinePoolError | None = None


class _Reads:
    """Secondary reads, run side by side: a failure (RBAC, missing CRD, a 5xx from a webhook)
    becomes a note. Notes are recorded in the order reads are taken, not the order they finish,
    so the output does not depend on which server answered first."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.notes: list[str] = []
        self.unread: list[tuple[str, str]] = []
        self.unread_notes: list[tuple[str, str, str]] = []
        # Reads only rules need stay silent in describe: their absence is said by the findings.
        self.quiet = False
        # Set while those are taken: their notes are also kept apart (an export records which
        # they are, so that describe on it stays as silent as describe live).
        self.extras = False
        self.extra_notes: list[str] = []
        self._started: list[Pending[Any]] = []

    def spawn(self, call: Callable[[], T]) -> Pending[T]:
        """A read in its own thread, waited for by settle() if nobody takes it."""
        pending = Pending(call)
        self._started.append(pending)
        return pending

    def settle(self) -> None:
        """Wait for every read started, taken or not (a speculative one the infra pools did not
        confirm): none may still hold a connection when the caller closes it."""
        for pending in self._started:
            with contextlib.suppress(Exception):
                pending.result()

    def now(
        self,
        group: str,
        kind: str,
        namespace: str | None,
        consequence: str,
        *,
        version: str | None = None,
    ) -> _Outcome:
        try:
            resource = self.kube.resource(group, kind, version)
        except MachinePoolError as err:
            return _Outcome(group, kind, consequence, [], err)
        return self.listed(resource, namespace, consequence)

    def listed(
        self,
        resource: Resource,
        namespace: str | None,
        consequence: str,
        *,
        selector: str | None = None,
        shape: _Made | None = None,
        metadata_only: bool = False,
    ) -> _Outcome:
        group, kind = resource.group, resource.kind
        try:
            found = self.kube.list(
                resource,
                namespace,
                selector,
                shape=shape,
                metadata_only=metadata_only,
                managed_fields=shape is None or shape.managed_fields,
            )
        except MachinePoolError as err:
            return _Outcome(group, kind, consequence, [], err)
        return _Outcome(group, kind, consequence, found)

    def later_resource(
        self,
        resource: Resource,
        namespace: str | None,
        consequence: str,
        *,
        selector: str | None = None,
        metadata_only: bool = False,
    ) -> Pending[_Outcome]:
        return self.spawn(
            partial(
                self.listed,
                resource,
                namespace,
                consequence,
                selector=selector,
                metadata_only=metadata_only,
            )
        )

    def record(self, outcome: _Outcome) -> list[RawObject]:
        if outcome.error is None:
            return outcome.objects
        if not self.quiet:
            note = f"cannot read {outcome.kind} objects, so {outcome.consequence}: "
            note += outcome.error.message
            self.notes.append(note)
            self.unread_notes.append((outcome.group, outcome.kind, note))
            if self.extras:
                self.extra_notes.append(note)
        self.unread.append((outcome.group, outcome.kind))
        return []

    def take(self, pending: Iterable[Pending[_Outcome]]) -> list[RawObject]:
        found: list[RawObject] = []
        for one in pending:
            found += self.record(one.result())
        return found

    def kinds(
        self, kinds: dict[tuple[str, str], str | None], namespace: str | None, consequence: str
    ) -> list[Pending[_Outcome]]:
        return [
            self.spawn(partial(self.now, group, kind, namespace, consequence, version=version))
            for (group, kind), version in sorted(kinds.items())
        ]


def _machine_pools(kube: Kube, namespace: str | None, selection: Selection) -> list[RawObject]:
    pools = kube.machine_pools(namespace, selection.selector)
    return [p for p in pools if selected(p, selection)]


def read_pools(kube: Kube, namespace: str | None, selector: str | None) -> Snapshot:
    """For `list`: MachinePools in scope and their infra pools."""
    pools = _machine_pools(kube, namespace, Selection(namespace, selector=selector))
    reads = _Reads(kube)
    refs = _template_refs(pools, "infrastructureRef")
    infra = reads.take(reads.kinds(refs, namespace, "MACHINES shows <unknown>"))
    reads.settle()
    return Snapshot.of(
        [*pools, *infra], reads.notes, unread=reads.unread, unread_notes=reads.unread_notes
    )


def _companion_kinds(infra_refs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """The kinds the pools' providers keep the cloud's side in (AKS: ASO agent pools)."""
    found: dict[tuple[str, str], str | None] = {}
    for group, kind in infra_refs:
        provider = infra_pool(group, kind)
        if provider is not None and provider.companion is not None:
            found[(provider.companion.group, provider.companion.kind)] = None
    return found


def _machine_kinds(infra: list[RawObject]) -> set[tuple[str, str, str]]:
    """(group, version, kind) of the per-instance kinds infra pools declare (not their own)."""
    found = set()
    for obj in infra:
        kind = (obj.get("status") or {}).get("infrastructureMachineKind")
        if isinstance(kind, str) and kind and kind != obj.get("kind"):
            group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
            found.add((group, version, kind))
    return found


_MACHINES_WHY = "instances show without them"


def _has_machines(group: str, kind: str) -> bool:
    """Whether the registry expects MachinePool Machines of this infra pool kind (a kind that
    names itself as its machine kind, as GKE's, has none)."""
    provider = infra_pool(group, kind)
    return bool(provider and provider.machine_kind and provider.machine_kind != kind)


class _Made:
    """Kube.list's shape for per-instance kinds: each object compacted, then its state made
    (and kept in `into`) while the rest of the answer is still on its way."""

    def __init__(
        self,
        compact: Compactor,
        make: Callable[[], Callable[[RawObject], object]],
        into: dict[tuple[Callable[[RawObject], Any], int], tuple[RawObject, Any]],
    ) -> None:
        self._compact, self._make, self._into = compact, make, into
        self.managed_fields = compact.managed_fields

    def __call__(self, obj: RawObject) -> None:
        self._compact(obj)
        make = self._make()
        self._into[(make, id(obj))] = (obj, make(obj))


# The states module is imported while the reads run (reading._AFTER_THE_READS), not before the
# first request: by the time a LIST's first object arrives it is there.
def _machine_state() -> Callable[[RawObject], object]:
    from kubectl_machinepool.model.states import machine_state

    return machine_state


def _object_state() -> Callable[[RawObject], object]:
    from kubectl_machinepool.model.states import object_state

    return object_state


class _Instances:
    """MachinePool Machines and infra machines, where an infra pool says it has them.

    Only the infra pools' status says which kinds that is; waiting for it before the largest
    LISTs start would put server round trips in a row. So the Machines are read from the start,
    beside the MachinePools (in the version machine_pools() tries first), and when a pool's
    infra kind is one the provider registry knows to have MachinePool Machines, that machine
    kind is read beside its infra pools. Each is kept only if the infra pools as read confirm
    it, and read again in the version the server turned out to serve, should that differ.
    """

    def __init__(self, reads: _Reads, namespace: str | None) -> None:
        self.reads, self.namespace = reads, namespace
        self.compact = Compactor(INSTANCE_UNUSED)
        self.made: dict[tuple[Callable[[RawObject], Any], int], tuple[RawObject, Any]] = {}
        self.guess = reads.kube.likely_capi_resource("Machine")
        self.machines = reads.spawn(partial(self._machines, self.guess))
        self.infra: list[Pending[_Outcome]] = []
        self.expected: dict[tuple[str, str], Pending[_Outcome]] = {}

    def start(self, infra_refs: dict[tuple[str, str], str | None]) -> None:
        """The pools' infra pools, and the machine kinds the registry expects of them."""
        consequence = "infra pools are not shown"
        for (group, kind), version in sorted(infra_refs.items()):
            read = partial(self.reads.now, group, kind, self.namespace, consequence)
            self.infra.append(self.reads.spawn(partial(read, version=version)))
            provider = infra_pool(group, kind)
            if provider and provider.machine_kind and _has_machines(group, kind):
                key = (group, provider.machine_kind)
                self.expected[key] = self.reads.spawn(partial(self._infra_machines, *key, version))

    def _machines(self, resource: Resource) -> _Outcome:
        return self.reads.listed(
            resource,
            self.namespace,
            _MACHINES_WHY,
            selector=POOL_NAME_LABEL,
            shape=_Made(self.compact, _machine_state, self.made),
        )

    def _infra_machines(self, group: str, kind: str, version: str | None) -> _Outcome:
        try:
            resource = self.reads.kube.resource(group, kind, version)
        except MachinePoolError as err:
            return _Outcome(group, kind, _MACHINES_WHY, [], err)
        # Core lists the machine kind in the infra pool's own API version.
        if version and resource.version != version:
            resource = replace(resource, version=version)
        return self.reads.listed(
            resource,
            self.namespace,
            _MACHINES_WHY,
            selector=POOL_NAME_LABEL,
            shape=_Made(self.compact, _object_state, self.made),
        )

    def take_infra(self) -> list[RawObject]:
        return self.reads.take(self.infra)

    def take(self, infra: list[RawObject]) -> list[RawObject]:
        """The instances' objects, after take_infra() gave the infra pools."""
        kinds = _machine_kinds(infra)
        if not kinds:
            return []
        machines = self.machines.result()
        served = self.reads.kube.capi_resource("Machine")
        if served != self.guess:  # a v1beta1-only server: that LIST found no such resource
            machines = self._machines(served)
        found = self.reads.record(machines)
        for group, version, kind in sorted(kinds):
            expected = self.expected.get((group, kind))
            outcome = expected.result() if expected else None
            if outcome is None or not _listed_in(outcome, f"{group}/{version}"):
                outcome = self._infra_machines(group, kind, version)
            found += self.reads.record(outcome)
        return found


def _listed_in(outcome: _Outcome, api_version: str) -> bool:
    """Whether a LIST read its kind in this version (an empty or failed one reads alike)."""
    return not outcome.objects or outcome.objects[0].get("apiVersion") == api_version


# Events about other kinds (Pods, Services, ...) are not kept: the timeline is the pools'.
_EVENT_KINDS_SKIPPED = frozenset({"Pod", "Service", "Endpoints", "ConfigMap", "Secret"})


def _events(reads: _Reads, namespace: str | None) -> _Outcome:
    """The Events in scope, but those about kinds no pool has. Events that cannot be read
    are a note like any other kind's: a Warning Event may be among them."""
    why = "the pools' Events are not shown"
    try:
        found = reads.kube.list_of(EVENTS, namespace, _pool_event, managed_fields=False)
    except MachinePoolError as err:
        return _Outcome("", "Event", why, [], err)
    return _Outcome("", "Event", why, [e for e in found if e is not None])


def _pool_event(obj: RawObject) -> RawObject | None:
    about = obj.get("involvedObject")
    kind = about.get("kind") if isinstance(about, dict) else None
    return None if kind in _EVENT_KINDS_SKIPPED else obj


def _secret_kubeconfig(kube: Kube, namespace: str, cluster: str) -> object:
    name = f"{cluster}-kubeconfig"
    secret = kube.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{name}")
    value = dig(secret, "data", "value")
    unusable = MachinePoolError(f"Secret {namespace}/{name} holds no kubeconfig under key value")
    try:
        if not isinstance(value, str):
            raise unusable
        content = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as err:
        raise unusable from err
    # Whoever writes the Secret writes this YAML: dumps' bounds on nesting and aliases apply.
    documents = read_documents(f"Secret {namespace}/{name}", content)
    return documents[0] if documents else None


def _token_secrets(workload: Kube) -> tuple[str, ...] | None:
    """Names of the workload cluster's bootstrap token Secrets (metadata only), if readable."""
    try:
        found = workload.list(
            SECRETS, "kube-system", field_selector=BOOTSTRAP_TOKENS, metadata_only=True
        )
    except MachinePoolError:
        return None
    return tuple(sorted(str(s["metadata"].get("name", "")) for s in found))


def workload_kube(
    kube: Kube, namespace: str, cluster: str, override: str | None, timeout: float | None
) -> Kube:
    """A connection to a Cluster's workload API server: its kubeconfig Secret, or override."""
    if override:
        connection = load_connection(override, None, plugin_timeout=timeout or WORKLOAD_TIMEOUT)
    else:
        config = _secret_kubeconfig(kube, namespace, cluster)
        connection = connection_from_dict(config, f"Secret {namespace}/{cluster}-kubeconfig")
    if timeout:
        return Kube(connection, timeout, kube.chunk_size)
    return Kube(
        connection, WORKLOAD_TIMEOUT, kube.chunk_size, answer_timeout=WORKLOAD_ANSWER_TIMEOUT
    )


def workload_disruption(
    kube: Kube,
    namespace: str,
    cluster: str,
    override: str | None,
    timeout: float | None,
    *,
    node: str,
) -> Disruption:
    """The PodDisruptionBudgets a drain of this Node would meet now, or why that is unknown."""
    try:
        with workload_kube(kube, namespace, cluster, override, timeout) as workload:
            pods = workload.list(PODS, None, field_selector=f"spec.nodeName={node}")
            budgets = workload.list(BUDGETS, None)
    except MachinePoolError as err:
        return Disruption(None, err.message)
    return disruption_of(pods, budgets)


def workload_nodes(
    kube: Kube,
    namespace: str,
    cluster: str,
    override: str | None,
    timeout: float | None,
    *,
    tokens: bool = False,
    keep: bool = False,
) -> WorkloadNodes:
    """The Nodes of a Cluster's workload cluster, through its kubeconfig Secret (or override).
    keep (export): the Node objects themselves, not their states.

    Each Node's state is made as it arrives and the Node itself is not kept: this LIST is often
    the last to end (a pool without Machines waits for nothing else), and making 5000 states
    after it took 0.09 s; what a state does not hold (images, addresses, managedFields) is
    never shared or kept, which took another 0.05 s of CPU while the answer streamed in.
    """
    from kubectl_machinepool.model.states import node_state

    try:
        with workload_kube(kube, namespace, cluster, override, timeout) as workload:
            if keep:
                nodes = tuple(workload.list(NODES, None, managed_fields=False))
            else:
                states = workload.list_of(NODES, None, node_state, managed_fields=False)
            token_secrets = _token_secrets(workload) if tokens else None
            events, events_note = _node_events(workload, namespace, cluster)
    except MachinePoolError as err:
        note = f"Nodes of Cluster {namespace}/{cluster} are not shown: {err.message}"
        unreachable = isinstance(err, UnreachableError)
        return WorkloadNodes(namespace, cluster, None, note, unreachable=unreachable)
    return WorkloadNodes(
        namespace,
        cluster,
        nodes if keep else None,
        token_secrets=token_secrets,
        states=None if keep else tuple(states),
        events=events,
        events_note=events_note,
    )


def _node_events(
    workload: Kube, namespace: str, cluster: str
) -> tuple[tuple[RawObject, ...] | None, str | None]:
    """The workload cluster's Events about Nodes, or why they are not shown."""
    try:
        found = workload.list(EVENTS, None, field_selector=NODE_EVENTS, managed_fields=False)
    except MachinePoolError as err:
        note = f"cannot read Event objects of Cluster {namespace}/{cluster}, so its Nodes' "
        return None, note + f"Events are not shown: {err.message}"
    return tuple(found), None


def _control_plane_refs(clusters: list[RawObject]) -> dict[tuple[str, str], str | None]:
    kinds: dict[tuple[str, str], str | None] = {}
    for cluster in clusters:
        ref = dig(cluster, "spec", "controlPlaneRef")
        kind = text(dig(ref, "kind"))
        if kind:
            api_version = text(dig(ref, "apiVersion")) or ""
            group = text(dig(ref, "apiGroup")) or group_of(api_version)
            kinds.setdefault((group, kind), api_version.rpartition("/")[2] or None)
    return kinds


_CHECKS = "MachineHealthChecks are not shown or judged"


def _rule_reads(
    reads: _Reads, namespace: str | None, infra_refs: Iterable[tuple[str, str]]
) -> list[Pending[_Outcome]]:
    """What only rules read: the core controller's Deployment (its version), the Secret names
    in scope, and the objects the pools' providers keep the cloud's side in."""
    return [
        reads.later_resource(
            DEPLOYMENTS, None, "the Cluster API version is unknown", selector=CORE_PROVIDER
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
) -> Snapshot:
    """For `describe` and the commands after it: pools, their Clusters, provider objects, Nodes.

    diagnosis adds what only rules need: the core controller Deployment (its version), control
    planes, Secret names in scope and the workload's bootstrap token Secret names. Every pool in
    scope is kept, selected or not, so a Node naming a pool that is not there is really orphaned.
    The Machines (the largest LIST) are read beside the MachinePools; after these, every LIST
    runs side by side, the workload clusters' Nodes included; meanwhile is called once they all
    have started (the caller's own work, e.g. imports). keep_nodes (export): the Node objects
    are kept, not only their states.
    """
    reads = _Reads(kube)
    instances = _Instances(reads, namespace)
    try:
        every_pool = kube.machine_pools(namespace)
    except MachinePoolError:
        reads.settle()  # the Machine LIST started beside it must not outlive the connection
        raise
    pools = [p for p in every_pool if selected(p, selection)]
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
    cluster_read = None
    if pools or named:
        why = "Clusters show as not readable"
        cluster_read = reads.spawn(
            partial(reads.listed, kube.capi_resource("Cluster"), namespace, why)
        )
    infra_refs = _template_refs(pools, "infrastructureRef")
    instances.start(infra_refs)
    # The bootstrap configs, and the Events about the pools' objects (as describe shows them);
    # for describe and diagnose, the MachineHealthChecks (described per pool, judged by a rule).
    bootstrap = [
        *reads.kinds(
            _template_refs(pools, "bootstrap"), namespace, "bootstrap configs are not shown"
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
    if cluster_read is not None:
        for obj in reads.take([cluster_read]):
            key = (obj["metadata"].get("namespace", ""), obj["metadata"].get("name"))
            if key in clusters or key[1] == named:
                cluster_objects.append(obj)
                clusters.add(key)
    for key in sorted(clusters - workloads.keys()):
        workloads[key] = nodes_of(key)
    control_planes = []
    if diagnosis and (pools or cluster_objects):
        control_planes = reads.kinds(
            _control_plane_refs(cluster_objects), namespace, "version skew is not checked"
        )
    objects += cluster_objects
    infra = instances.take_infra()
    objects += infra
    objects += reads.take(bootstrap)
    objects += instances.take(infra)
    secrets_scope = None
    if diagnosis and (pools or cluster_objects):
        reads.quiet, reads.extras = not report_extras, True
        objects += reads.take(control_planes)
        objects += reads.take(extras)
        if ("", "Secret") not in reads.unread:
            secrets_scope = namespace or ""
    nodes = [workloads[key].result() for key in sorted(clusters)]
    reads.settle()
    kept = {id(obj) for obj in objects}  # not what a LIST read in vain (ids are unique here)
    return Snapshot.of(
        objects,
        [*reads.notes, *(w.events_note for w in nodes if w.events_note)],
        nodes,
        reads.unread,
        secrets_scope,
        unread_notes=reads.unread_notes,
        made={key: made for key, made in instances.made.items() if key[1] in kept},
        extra_notes=reads.extra_notes,
    )


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
    kinds = set(_template_refs(pools, "infrastructureRef"))
    infra = [
        o
        for o in snapshot.objects
        if (group_of(str(o.get("apiVersion", ""))), o.get("kind")) in kinds
    ]
    machine_kinds = (
        {(group, kind) for group, _, kind in _machine_kinds(infra)} if instances else set()
    )
    if machine_kinds:
        found.append(Watched(kube, kube.capi_resource("Machine"), namespace, POOL_NAME_LABEL))
    for group, kind in sorted(kinds | machine_kinds):
        with contextlib.suppress(MachinePoolError):
            found.append(Watched(kube, kube.resource(group, kind), namespace))
    if events:
        found.append(Watched(kube, EVENTS, namespace))
    for ns, cluster in sorted(set(node_clusters)):
        with contextlib.suppress(MachinePoolError):
            found.append(Watched(workload_kube(kube, ns, cluster, override, timeout), NODES, None))
    return found
