"""MachinePool Machines and infra machines: read from the start, beside the MachinePools, and
kept only where the infra pools as read say a pool has them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from kubectl_machinepool.base.apiversion import group_of, version_of
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.kube.compact import INSTANCE_UNUSED, Compactor
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.reads import Made, Outcome, Reads
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.pool import names_machines
from kubectl_machinepool.model.poolname import POOL_NAME_LABEL
from kubectl_machinepool.providers.registry import infra_pool


def machine_kinds(infra: list[RawObject]) -> set[tuple[str, str, str]]:
    """(group, version, kind) of the per-instance kinds infra pools declare (not their own)."""
    found = set()
    for obj in infra:
        kind = text(dig(obj, "status", "infrastructureMachineKind"))
        if kind and names_machines(kind, text(obj.get("kind"))):
            api_version = text(obj.get("apiVersion")) or ""
            found.add((group_of(api_version), version_of(api_version), kind))
    return found


_MACHINES_WHY = "instances show without them"


# The states module is imported while the reads run (app/reading.import_next), not before the
# first request: by the time a LIST's first object arrives it is there.
def _machine_state() -> Callable[[RawObject], object]:
    from kubectl_machinepool.model.states import machine_state

    return machine_state


def _object_state() -> Callable[[RawObject], object]:
    from kubectl_machinepool.model.states import object_state

    return object_state


class Instances:
    """MachinePool Machines and infra machines, where an infra pool says it has them.

    Only the infra pools' status says which kinds that is; waiting for it before the largest
    LISTs start would put server round trips in a row. So the Machines are read from the start,
    beside the MachinePools (in the version machine_pools() tries first), and when a pool's
    infra kind is one the provider registry knows to have MachinePool Machines, that machine
    kind is read beside its infra pools. Each is kept only if the infra pools as read confirm
    it, and read again in the version the server turned out to serve, should that differ.
    """

    def __init__(self, reads: Reads, namespace: str | None) -> None:
        self.reads, self.namespace = reads, namespace
        self.compact = Compactor(INSTANCE_UNUSED)
        self.made: dict[tuple[Callable[[RawObject], Any], int], tuple[RawObject, Any]] = {}
        self.guess = reads.kube.likely_capi_resource("Machine")
        self.machines = reads.spawn(partial(self._machines, self.guess))
        self.infra: list[Pending[Outcome]] = []
        self.expected: dict[tuple[str, str], Pending[Outcome]] = {}

    def start(self, infra_refs: dict[tuple[str, str], str | None]) -> None:
        """The pools' infra pools, and the machine kinds the registry expects of them."""
        consequence = "infra pools are not shown"
        for (group, kind), version in sorted(infra_refs.items()):
            read = partial(self.reads.now, group, kind, self.namespace, consequence)
            self.infra.append(self.reads.spawn(partial(read, version=version)))
            provider = infra_pool(group, kind)
            if provider and provider.machine_kind and names_machines(provider.machine_kind, kind):
                key = (group, provider.machine_kind)
                self.expected[key] = self.reads.spawn(partial(self._infra_machines, *key, version))

    def _machines(self, resource: Resource) -> Outcome:
        return self.reads.listed(
            resource,
            self.namespace,
            _MACHINES_WHY,
            selector=POOL_NAME_LABEL,
            shape=Made(self.compact, _machine_state, self.made),
        )

    def _infra_machines(self, group: str, kind: str, version: str | None) -> Outcome:
        try:
            resource = self.reads.kube.resource(group, kind, version)
        except MachinePoolError as err:
            return Outcome(group, kind, _MACHINES_WHY, [], err)
        # Core lists the machine kind in the infra pool's own API version.
        if version and resource.version != version:
            resource = replace(resource, version=version)
        return self.reads.listed(
            resource,
            self.namespace,
            _MACHINES_WHY,
            selector=POOL_NAME_LABEL,
            shape=Made(self.compact, _object_state, self.made),
        )

    def take_infra(self) -> list[RawObject]:
        return self.reads.take(self.infra)

    def take(self, infra: list[RawObject]) -> list[RawObject]:
        """The instances' objects, after take_infra() gave the infra pools."""
        kinds = machine_kinds(infra)
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


def _listed_in(outcome: Outcome, api_version: str) -> bool:
    """Whether a LIST read its kind in this version (an empty or failed one reads alike)."""
    return not outcome.objects or outcome.objects[0].get("apiVersion") == api_version
