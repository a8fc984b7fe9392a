"""What delete-machine acts on: the instance the user named, how it is to go, and the plan.

The Target carries the raw objects the writes address, found in the same Snapshot describe's
model came from, so the plan the user confirms is made from exactly what was read.
"""

from __future__ import annotations

from datetime import timedelta
from enum import Enum

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import ClusterDescription, Description, PoolDescription
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.writes import Write


class Mode(Enum):
    REPLACE = "replace"
    SCALE_DOWN = "scale-down"


@record
class Request:
    mode: Mode
    drain_timeout: timedelta | None = None
    allow_unverified: bool = False


@record
class Target:
    """The instance to remove, with the raw objects the writes address."""

    cluster: ClusterDescription
    pool: PoolDescription
    instance: Instance
    pool_raw: RawObject
    machine_raw: RawObject | None
    infra_machine_raw: RawObject | None
    infra_pool_raw: RawObject | None
    # The Cluster, whose topology may set the pool's replicas (None: not read, or none).
    cluster_raw: RawObject | None = None

    @property
    def name(self) -> str:
        """How the user knows the instance: Machine, else Node, else providerID."""
        i = self.instance
        if i.machine:
            return f"Machine {i.machine.object.namespace}/{i.machine.object.name}"
        if i.node:
            return f"Node {i.node.name}"
        return f"instance {i.provider_id}"


@record
class Plan:
    target: Target
    request: Request
    checks: tuple[Check, ...]
    writes: tuple[Write, ...]
    # What Cluster API and the provider do after the writes.
    then: str

    @property
    def refusals(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.level is Level.REFUSED)


@record
class Wanted:
    """How the user named the instance: exactly one of these is set."""

    machine: str | None = None
    node: str | None = None
    provider_id: str | None = None

    @property
    def display(self) -> str:
        if self.machine:
            return f'machines.cluster.x-k8s.io "{self.machine}"'
        if self.node:
            return f'node "{self.node}"'
        return f'providerID "{self.provider_id}"'

    def matches(self, instance: Instance) -> bool:
        machine = instance.machine
        if self.machine:
            return machine is not None and machine.object.name == self.machine
        if self.node:
            names = {instance.node.name if instance.node else None}
            names.add(machine.node_name if machine else None)
            return self.node in names
        return instance.provider_id == self.provider_id


def find_target(description: Description, snapshot: Snapshot, wanted: Wanted) -> list[Target]:
    """Every pool instance the user's name fits (more than one only for ambiguous input)."""
    found = []
    for cluster in description.clusters:
        for pool in cluster.pools:
            for instance in pool.instances:
                if wanted.matches(instance):
                    found.append(_target(cluster, pool, instance, snapshot))
    return found


def _target(
    cluster: ClusterDescription, pool: PoolDescription, instance: Instance, snapshot: Snapshot
) -> Target:
    mp = pool.pool
    ref = mp.infrastructure_ref
    infra_pool = snapshot.find(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    machine = instance.machine
    machine_raw = (
        snapshot.find(CAPI_GROUP, "Machine", mp.namespace, machine.object.name) if machine else None
    )
    infra_machine_raw = None
    if machine and machine.infra_kind and pool.infra:
        infra_machine_raw = snapshot.find(
            pool.infra.group, machine.infra_kind, mp.namespace, machine.infra_name or ""
        )
    return Target(
        cluster,
        pool,
        instance,
        snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {},
        machine_raw,
        infra_machine_raw,
        infra_pool,
        snapshot.find(CAPI_GROUP, "Cluster", mp.namespace, mp.cluster),
    )
