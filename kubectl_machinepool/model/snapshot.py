"""The boundary between reading and thinking: raw objects as the API (or a dump) gave them.

Everything after a Snapshot is pure: the same Snapshot built from a live cluster or from a
`kubectl get -o yaml` file gives the same model and the same output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field, replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from kubectl_machinepool.model.states import NodeState

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.records import record

T = TypeVar("T")
# What a function made of an object as its LIST streamed in, by (function, id of the object);
# the object is kept beside it, so its id cannot be reused by another while this is held.
Made = Mapping[tuple[Callable[[RawObject], Any], int], tuple[RawObject, Any]]


@record(slots=False)
class WorkloadNodes:
    """The Nodes of a workload cluster, or why they are missing.

    Live, each Cluster gets its own entry; a dump's Node objects form one entry (cluster None)
    that stands for every Cluster in the dump.
    """

    namespace: str | None
    cluster: str | None
    # The Node objects, when their states are made as they are described (a dump).
    nodes: tuple[RawObject, ...] | None
    note: str | None = None
    # Names of kube-system bootstrap token Secrets; None when they were not listed.
    token_secrets: tuple[str, ...] | None = None
    # The workload API server did not answer (as opposed to refusing us, or not being asked).
    unreachable: bool = False
    # The state of each Node, made as it was read live (the Node objects are not kept then).
    states: tuple[NodeState, ...] | None = None
    # The workload cluster's Events about Nodes, read live; None when not read (a dump's are
    # among its objects).
    events: tuple[RawObject, ...] | None = None
    # Why those Events were not read (the warning says so; the Nodes were read).
    events_note: str | None = None

    @property
    def read(self) -> bool:
        return self.nodes is not None or self.states is not None


@record(slots=False)
class Snapshot:
    objects: tuple[RawObject, ...] = ()
    # Things that could not be read (RBAC, missing CRDs): shown to the user, never fatal.
    notes: tuple[str, ...] = field(default=())
    workloads: tuple[WorkloadNodes, ...] = field(default=())
    # (group, kind) pairs that could not be listed: their absence here proves nothing.
    unread: tuple[tuple[str, str], ...] = field(default=())
    # (group, kind, note): which of the notes says why that very kind could not be read.
    unread_notes: tuple[tuple[str, str, str], ...] = field(default=())
    # Where Secrets (metadata only) were listed: None nowhere, "" in every namespace.
    secrets_scope: str | None = None
    # A dump: only kinds it holds at least one object of count as read, since a kind left
    # out of `kubectl get` proves nothing about the cluster.
    offline: bool = False
    # Per-instance states made while their LISTs streamed in (fetch.py), not after the last
    # one: 1000 Machines and infra machines took 20 ms. Dumps have none.
    made: Made = field(default_factory=dict)
    # An export's capture time, or a dump's newest timestamp (a note says so): what ages are
    # read against unless --now says otherwise.
    captured: datetime | None = None
    # Those of the notes that only reads for rules gave: describe leaves them out.
    extra_notes: tuple[str, ...] = ()
    # Those of the notes that say how the input was taken, not what could not be read (a
    # dump's time, inferred): they leave no doubt that what is not shown is not there.
    remarks: tuple[str, ...] = ()
    # Objects asked for by name that could not be read: (group, kind, namespace, name, why).
    unread_objects: tuple[tuple[str, str, str, str, str], ...] = ()

    @classmethod
    def of(
        cls,
        objects: Iterable[RawObject],
        notes: Iterable[str] = (),
        workloads: Iterable[WorkloadNodes] = (),
        unread: Iterable[tuple[str, str]] = (),
        secrets_scope: str | None = None,
        *,
        unread_notes: Iterable[tuple[str, str, str]] = (),
        made: Made | None = None,
        extra_notes: Iterable[str] = (),
        unread_objects: Iterable[tuple[str, str, str, str, str]] = (),
    ) -> Snapshot:
        return cls(
            tuple(objects),
            tuple(notes),
            tuple(workloads),
            tuple(unread),
            tuple(unread_notes),
            secrets_scope,
            made=made or {},
            extra_notes=tuple(extra_notes),
            unread_objects=tuple(unread_objects),
        )

    def without_extra_notes(self) -> Snapshot:
        """As read by a command that runs no rule: what only rules read is unread, unsaid."""
        if not self.extra_notes:
            return self
        extra = set(self.extra_notes)
        return replace(
            self,
            notes=tuple(n for n in self.notes if n not in extra),
            unread_notes=tuple(u for u in self.unread_notes if u[2] not in extra),
            extra_notes=(),
        )

    def made_of(self, obj: RawObject, make: Callable[[RawObject], T]) -> T:
        """make(obj), or what it made of this very object as it was read."""
        found = self.made.get((make, id(obj)))
        if found is not None and found[0] is obj:
            made: T = found[1]
            return made
        return make(obj)

    @cached_property
    def _kinds(self) -> frozenset[tuple[str, str]]:
        return frozenset(
            (group_of(str(o.get("apiVersion", ""))), str(o.get("kind", ""))) for o in self.objects
        )

    def secrets_listed(self, namespace: str) -> bool:
        """Whether a Secret missing from this snapshot is really missing in that namespace."""
        return self.secrets_scope is not None and self.secrets_scope in ("", namespace)

    def note_for(self, group: str, kind: str) -> str | None:
        """The note on why this kind of this group could not be read (kinds share names)."""
        return next((n for g, k, n in self.unread_notes if (g, k) == (group, kind)), None)

    def was_read(self, group: str, kind: str) -> bool:
        if self.offline:
            return (group, kind) in self._kinds
        return (group, kind) not in self.unread

    def nodes_for(self, namespace: str, cluster: str) -> WorkloadNodes | None:
        fallback = None
        for workload in self.workloads:
            if (workload.namespace, workload.cluster) == (namespace, cluster):
                return workload
            if workload.cluster is None:
                fallback = workload
        return fallback

    def of_kind(self, group: str, kind: str) -> Iterator[RawObject]:
        for obj in self.objects:
            if obj.get("kind") == kind and group_of(str(obj.get("apiVersion", ""))) == group:
                yield obj

    @cached_property
    def _by_identity(self) -> dict[tuple[str, str, str, str], RawObject]:
        index: dict[tuple[str, str, str, str], RawObject] = {}
        for obj in self.objects:
            meta = obj.get("metadata") or {}
            key = (
                group_of(str(obj.get("apiVersion", ""))),
                str(obj.get("kind", "")),
                str(meta.get("namespace", "")),
                str(meta.get("name", "")),
            )
            index[key] = obj
        return index

    def find(self, group: str, kind: str, namespace: str, name: str) -> RawObject | None:
        return self._by_identity.get((group, kind, namespace, name))

    def why_unread(self, group: str, kind: str, namespace: str, name: str) -> str | None:
        """Why this object, asked for by name, could not be read; None when it was not asked
        for, or was read."""
        wanted = (group, kind, namespace, name)
        return next((why for *key, why in self.unread_objects if tuple(key) == wanted), None)
