"""Secondary reads run side by side, each ending in its objects or in a note saying what is not
shown and why: the engine every read plan (fetch.py) and the instance reads use."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, TypeVar

from kubectl_machinepool.base.apiversion import ref_group, version_of
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.compact import Compactor
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.resource import Resource

T = TypeVar("T")


def template_refs(pools: Iterable[RawObject], field: str) -> dict[tuple[str, str], str | None]:
    """(group, kind) of each referenced infra pool or bootstrap config, and a v1beta1 version."""
    kinds: dict[tuple[str, str], str | None] = {}
    for pool in pools:
        ref = dig(pool, "spec", "template", "spec", field)
        if field == "bootstrap":
            ref = dig(ref, "configRef")
        kind = text(dig(ref, "kind"))
        if kind:
            version = version_of(text(dig(ref, "apiVersion")) or "") or None
            kinds.setdefault((ref_group(ref), kind), version)
    return kinds


@record
class Outcome:
    """One LIST as it ended: the objects, or why there are none (for record() to say)."""

    group: str
    kind: str
    consequence: str
    objects: list[RawObject]
    error: MachinePoolError | None = None


class Made:
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


class Reads:
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

    def spawn(self, call: Callable[[], T], *, slot: bool = True) -> Pending[T]:
        """A read in its own thread, waited for by settle() if nobody takes it; slot=False
        for one that another read waits for (parallel.Pending)."""
        pending = Pending(call, slot=slot)
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
    ) -> Outcome:
        try:
            resource = self.kube.resource(group, kind, version)
        except MachinePoolError as err:
            return Outcome(group, kind, consequence, [], err)
        return self.listed(resource, namespace, consequence)

    def listed(
        self,
        resource: Resource,
        namespace: str | None,
        consequence: str,
        *,
        selector: str | None = None,
        shape: Made | None = None,
        metadata_only: bool = False,
    ) -> Outcome:
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
            return Outcome(group, kind, consequence, [], err)
        return Outcome(group, kind, consequence, found)

    def later_resource(
        self,
        resource: Resource,
        namespace: str | None,
        consequence: str,
        *,
        selector: str | None = None,
        metadata_only: bool = False,
    ) -> Pending[Outcome]:
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

    def record(self, outcome: Outcome) -> list[RawObject]:
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

    def take(self, pending: Iterable[Pending[Outcome]]) -> list[RawObject]:
        found: list[RawObject] = []
        for one in pending:
            found += self.record(one.result())
        return found

    def kinds(
        self, kinds: dict[tuple[str, str], str | None], namespace: str | None, consequence: str
    ) -> list[Pending[Outcome]]:
        return [
            self.spawn(partial(self.now, group, kind, namespace, consequence, version=version))
            for (group, kind), version in sorted(kinds.items())
        ]
