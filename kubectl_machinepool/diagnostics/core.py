"""Findings, rules and what rules may look at.

A rule is a small pure function over one described pool (and its Cluster, the raw objects and
the clock) that returns findings. It never raises for "the cluster is unhealthy".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field, replace
from datetime import datetime, timedelta
from enum import IntEnum
from typing import NamedTuple

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, strings, text
from kubectl_machinepool.base.kubeversion import version
from kubectl_machinepool.base.records import record
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import ClusterDescription, PoolDescription
from kubectl_machinepool.model.events import EventRecord
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import NodeState

CAPI = "kubernetes-sigs/cluster-api#"
CAPA = "kubernetes-sigs/cluster-api-provider-aws#"
CAPZ = "kubernetes-sigs/cluster-api-provider-azure#"
AUTOSCALER = "kubernetes/autoscaler#"


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class ObjectKey(NamedTuple):
    """An object a finding is about, by identity: a name alone may be reused (a Node re-created
    under its name is another Node)."""

    kind: str
    name: str
    uid: str | None


@record
class Finding:
    code: str
    rule: str
    severity: Severity
    # Where the finding sits: the Cluster and pool it belongs to (pool "" for Cluster-level
    # findings), and the object it is about.
    namespace: str
    cluster: str
    pool: str
    subject: str
    message: str
    action: str
    refs: tuple[str, ...]
    # The rows of describe's tree it concerns: Machine names, providerIDs or Node names.
    instances: tuple[str, ...] = ()
    # The objects it is about, with their uids, where a script must tell them apart.
    objects: tuple[ObjectKey, ...] = ()
    # Events that bear it out: about the objects it names (or, naming none, about the pool
    # and its infra pool and bootstrap config), Warnings first, the most recent first.
    events: tuple[EventRecord, ...] = ()


@record
class CapiVersion:
    """The core controller's version, and where it was read (image tag, flag), if known."""

    version: tuple[int, int, int] | None
    source: str

    @classmethod
    def parse(cls, text: str | None, source: str) -> CapiVersion:
        """The tag or flag read whole as a semantic version (base/kubeversion.py)."""
        found = version(text)
        return cls(found.core if found else None, source)

    @property
    def known(self) -> bool:
        return self.version is not None

    def between(self, low: tuple[int, int, int], high: tuple[int, int, int]) -> bool | None:
        """low <= version < high; None when the version is unknown."""
        return None if self.version is None else low <= self.version < high

    def __str__(self) -> str:
        return "v" + ".".join(map(str, self.version)) if self.version else "unknown"


@record(slots=False)
class Context:
    """Everything a rule may read besides the pool itself."""

    cluster: ClusterDescription
    snapshot: Snapshot
    now: datetime
    capi: CapiVersion
    thresholds: Thresholds = field(default_factory=Thresholds)

    def raw(self, group: str, kind: str, namespace: str, name: str) -> RawObject | None:
        return self.snapshot.find(group, kind, namespace, name)

    def raw_pool(self, pool: PoolDescription) -> RawObject:
        return self.raw(CAPI_GROUP, "MachinePool", pool.pool.namespace, pool.pool.name) or {}

    @property
    def nodes(self) -> tuple[NodeState, ...] | None:
        """Every Node of the workload cluster (None when they were not read)."""
        return self.cluster.nodes

    def provider_ids_elsewhere(self, pool: PoolDescription) -> frozenset[str]:
        """providerIDs that other MachinePools list or that Machines outside this pool carry."""
        mine = {
            (i.machine.object.namespace, i.machine.object.name) for i in pool.instances if i.machine
        }
        found: set[str] = set()
        for other in self.snapshot.of_kind(CAPI_GROUP, "MachinePool"):
            meta = dig(other, "metadata")
            if (dig(meta, "namespace"), dig(meta, "name")) != (pool.pool.namespace, pool.pool.name):
                found.update(strings(dig(other, "spec", "providerIDList")))
        for machine in self.snapshot.of_kind(CAPI_GROUP, "Machine"):
            meta = dig(machine, "metadata")
            if (dig(meta, "namespace"), dig(meta, "name")) not in mine:
                found.add(text(dig(machine, "spec", "providerID")) or "")
        return frozenset(found - {""})

    @property
    def workload_tokens(self) -> tuple[str, ...] | None:
        """Bootstrap token Secrets in the workload cluster's kube-system, if they were listed."""
        workload = self.snapshot.nodes_for(self.cluster.namespace, self.cluster.name)
        return workload.token_secrets if workload else None


Check = Callable[["Rule", PoolDescription, Context], Iterable[Finding]]
ClusterCheck = Callable[["Rule", Context], Iterable[Finding]]


@record
class Proposal:
    """One command line of this tool that remedies a finding on one pool: what it names first
    (the pool, or delete-machine's Machine), its options in order, why, what it writes, and its
    risk. -n is the finding's namespace."""

    target: str
    options: tuple[tuple[str, str], ...]
    why: str
    writes: str
    # It takes instances away (deletes, replaces or scales them in).
    disruptive: bool
    # It makes the provider replace instances: a rollout, which waits for one in progress.
    rolls: bool


# A finding's Proposal, or why there is none for this one.
Propose = Callable[[Finding, PoolDescription, Context], "Proposal | str"]


@record(slots=False)
class Remedy:
    """A rule's remedy as one of this tool's own writes: which command, shown how (explain),
    and how its arguments come from a finding. Planned only by `fix`, carried out only through
    the command's own plan, preflight and the write engine."""

    command: str
    # The command line with its arguments named, and where each comes from.
    usage: str
    propose: Propose


@record(slots=False)
class Rule:
    """One known problem: what it checks, why it matters, what to do, and where upstream says so."""

    code: str
    rule: str
    title: str
    severity: Severity
    checks: str
    why: str
    action: str
    refs: tuple[str, ...]
    # Per pool, or once per Cluster (for what belongs to no pool, such as orphan Nodes).
    check: Check | None = None
    check_cluster: ClusterCheck | None = None
    # The finding means "a controller should have acted by now", which does not hold while
    # the pool or its Cluster is paused.
    needs_reconcile: bool = False
    # One of this tool's writes remedies it (fix plans it); None: the remedy is outside the
    # tool (the cloud's console, quotas, IAM, the provider), and action says it.
    remedy: Remedy | None = None

    def cluster_finding(self, ctx: Context, subject: str, message: str) -> Finding:
        return Finding(
            self.code, self.rule, self.severity, ctx.cluster.namespace, ctx.cluster.name, "",
            subject, message, self.action, self.refs,
        )  # fmt: skip

    def node_finding(self, ctx: Context, node: NodeState, message: str) -> Finding:
        """A Cluster finding about one Node that no pool holds (orphaned, untracked)."""
        return replace(
            self.cluster_finding(ctx, f"Node {node.name}", message),
            instances=(node.name,),
            objects=(ObjectKey("Node", node.name, node.uid or None),),
        )

    def finding(
        self,
        pool: PoolDescription,
        subject: str,
        message: str,
        *,
        severity: Severity | None = None,
        instances: tuple[str, ...] = (),
        action: str | None = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            rule=self.rule,
            severity=self.severity if severity is None else severity,
            namespace=pool.pool.namespace,
            cluster=pool.pool.cluster,
            pool=pool.pool.name,
            subject=subject,
            message=message,
            action=action or self.action,
            refs=self.refs,
            instances=instances,
        )


def pool_subject(pool: PoolDescription) -> str:
    return f"MachinePool {pool.pool.namespace}/{pool.pool.name}"


def since(when: datetime | None, now: datetime) -> timedelta | None:
    return None if when is None else now - when


def names(values: Iterable[str], limit: int = 5) -> str:
    """a, b, c and 2 more — evidence that stays one sentence."""
    listed = list(values)
    head = ", ".join(listed[:limit])
    return head + (f" and {len(listed) - limit} more" if len(listed) > limit else "")
