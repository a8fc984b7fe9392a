"""A Cluster's workload API server, reached through its `<cluster>-kubeconfig` Secret (or
--workload-kubeconfig): its Nodes, their Events, the bootstrap token Secrets, and the
PodDisruptionBudgets a drain would meet."""

from __future__ import annotations

import base64
from functools import partial

from kubectl_machinepool.base.errors import MachinePoolError, UnreachableError
from kubectl_machinepool.base.fields import RawObject, dig
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import connection_from_dict, load_connection
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.resource import BUDGETS, EVENTS, NODES, PODS, SECRETS
from kubectl_machinepool.model.snapshot import WorkloadNodes
from kubectl_machinepool.offline.dump import read_documents
from kubectl_machinepool.plans.disruption import Disruption, disruption_of

# Events of Nodes are recorded in whichever namespace their reporter chose ("default" for the
# kubelet): read in every namespace, only those about Nodes.
NODE_EVENTS = "involvedObject.kind=Node"
BOOTSTRAP_TOKENS = "type=bootstrap.kubernetes.io/token"
# A workload cluster is secondary: without --request-timeout, it is not waited for as long as the
# management cluster (interruptible.RESPONSE_TIMEOUT). It must connect, shake hands and keep
# sending within WORKLOAD_TIMEOUT each; a whole answer may take WORKLOAD_ANSWER_TIMEOUT (5000
# Nodes took more than 10 s on a busy 2-core machine). A note says which phase it failed in.
WORKLOAD_TIMEOUT = 10.0
WORKLOAD_ANSWER_TIMEOUT = 120.0


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


def workload_of(
    kube: Kube, namespace: str, cluster: str, override: str | None, timeout: float | None
) -> Kube:
    """The run's connection to a Cluster's workload API server: made on first use (its Secret
    read once), kept by the management cluster's Kube and closed with it, so that each read
    of a followed view goes over the connections the one before opened."""
    key = (namespace, cluster, override, timeout)
    if (warming := kube.warming.pop(key, None)) is not None:  # warmstart.py's
        return kube.workloads.setdefault(key, warming.result())
    if (found := kube.workloads.get(key)) is not None:
        return found
    made = workload_kube(kube, namespace, cluster, override, timeout)
    kept = kube.workloads.setdefault(key, made)  # two reads of one Cluster: one is kept
    if kept is made:
        kube.adopt(made)
    else:
        made.close()
    return kept


def _forget(kube: Kube, workload: Kube) -> None:
    """A read through it failed: the next one reads the Secret again (it may name a new
    server or new credentials). Its watches go on; it is closed with the run."""
    for key, kept in list(kube.workloads.items()):
        if kept is workload:
            kube.workloads.pop(key, None)


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
    events: bool = True,
) -> WorkloadNodes:
    """The Nodes of a Cluster's workload cluster, through its kubeconfig Secret (or override).
    keep (export): the Node objects themselves, not their states. events False (list): the
    Nodes' Events are not read.

    Each Node's state is made as it arrives and the Node itself is not kept: this LIST is often
    the last to end (a pool without Machines waits for nothing else), and making 5000 states
    after it took 0.09 s; what a state does not hold (images, addresses, managedFields) is
    never shared or kept, which took another 0.05 s of CPU while the answer streamed in.
    """
    from kubectl_machinepool.model.states import node_state

    try:
        workload = workload_of(kube, namespace, cluster, override, timeout)
        # Side by side on connections opened together: over a wide-area link each read after
        # another would cost its round trip, and a new connection two more.
        token_read = Pending(partial(_token_secrets, workload), slot=False) if tokens else None
        events_read = (
            Pending(partial(_node_events, workload, namespace, cluster), slot=False)
            if events
            else None
        )
        try:
            if keep:
                nodes = tuple(workload.list(NODES, None, managed_fields=False))
            else:
                states = workload.list_of(NODES, None, node_state, managed_fields=False)
        except MachinePoolError:
            _forget(kube, workload)
            raise
        finally:
            token_secrets = token_read.result() if token_read else None
            node_events, events_note = events_read.result() if events_read else (None, None)
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
        events=node_events,
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
