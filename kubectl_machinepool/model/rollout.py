"""Where a MachinePool's rollout stands: its target, and each instance up to date, old or unknown.

Upstream has no rollout signal for MachinePools (cluster-api#10059): observedGeneration moves
on at once, upToDateReplicas counts Machines that are not deleting (or is spec.replicas), and
status.versions (v1.14) is what the controller last counted. So an instance is judged by what it
runs: its Node's kubelet against the version the provider rolls to, the provider's own
per-instance model flag where it has one (CAPZ's latestModelApplied), and the Machine's version
only when there is no Node. A rollout is done when the pool's generation is observed, no
provider signal says it is still rolling, no old or unknown instance is left, and as many up to
date instances are Ready as are desired. It is stuck when it is not done and nothing moved
(an instance created, deleted or turned Ready, the pool's template written) for a while.
Pure: a PoolDescription and its Snapshot in, a PoolRollout out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.fields import RawObject, dig, integer, items, mapping, text
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import Instance, same_version
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.records import Provider
from kubectl_machinepool.providers.registry import infra_pool

UP_TO_DATE, OLD, UNKNOWN = "up-to-date", "old", "unknown"


@dataclass(frozen=True, slots=True)
class InstanceRollout:
    name: str
    state: str  # UP_TO_DATE, OLD or UNKNOWN
    evidence: tuple[str, ...]
    ready: bool
    deleting: bool


@dataclass(frozen=True, slots=True)
class Target:
    """What the pool rolls to, as its objects say."""

    version: str | None
    # "Kind field=value" of the infra pool's version and image fields.
    infra_fields: tuple[str, ...]
    bootstrap: str | None  # "Kind name (generation N)"
    # status.versions (Cluster API v1.14+): kubelet versions and how many instances run each,
    # as the MachinePool controller last counted them; shown, never judged by (it can be stale).
    counted: tuple[tuple[str, int], ...]
    generation: int | None
    observed_generation: int | None
    infra_generation: int | None
    infra_observed_generation: int | None


@dataclass(frozen=True, slots=True)
class PoolRollout:
    namespace: str
    name: str
    cluster: str
    target: Target
    desired: int | None
    instances: tuple[InstanceRollout, ...]
    # Why the rollout is not done yet, in the order a reader should act on them.
    waiting_for: tuple[str, ...]
    # The last time anything about the rollout moved, and whether it has not moved for too long.
    last_change: datetime | None
    stuck: bool
    # False: the workload cluster's Nodes could not be read; no instance's state is known.
    nodes_read: bool = True

    @property
    def done(self) -> bool:
        return not self.waiting_for

    def count(self, state: str) -> int:
        return sum(1 for i in self.instances if i.state == state)

    @property
    def available(self) -> int:
        return _available(self.instances)


def _available(instances: tuple[InstanceRollout, ...]) -> int:
    """Up to date, Ready and not leaving: what counts towards the desired replicas."""
    return sum(1 for i in instances if i.state == UP_TO_DATE and i.ready and not i.deleting)


def _latest_model(provider: Provider | None, raw: RawObject | None) -> bool | None:
    if provider is None or provider.latest_model_field is None or raw is None:
        return None
    value = dig(raw, *provider.latest_model_field.split("."))
    return value if isinstance(value, bool) else None


def _instance(
    instance: Instance,
    version: str | None,
    provider: Provider | None,
    snapshot: Snapshot,
    nodes_read: bool,
) -> InstanceRollout:
    evidence: list[str] = []
    state = UNKNOWN
    node, machine = instance.node, instance.machine
    ran = node.kubelet_version if node is not None else None
    source = "kubelet"
    if not nodes_read:
        # No Node is not the same as a Node not read: what it runs and whether it is Ready
        # are unknown, whatever the Machine asked for.
        evidence.append("Node not read")
    elif not ran and machine is not None and machine.version:
        ran, source = machine.version, "Machine version (no Node)"
    if ran:
        state = UP_TO_DATE if not version or same_version(ran, version) else OLD
        evidence.append(f"{source} {ran}" + ("" if state == UP_TO_DATE else f", target {version}"))
    elif nodes_read:
        evidence.append("no Node and no Machine version")
    infra = instance.infra_machine
    raw = (
        snapshot.find(infra.group, infra.kind, infra.namespace, infra.name)
        if infra is not None
        else None
    )
    latest = _latest_model(provider, raw)
    if latest is not None and provider is not None and provider.latest_model_field:
        field = provider.latest_model_field.rpartition(".")[2]
        evidence.append(f"{field}={'true' if latest else 'false'}")
        if not latest:
            state = OLD
        elif state == UNKNOWN:
            state = UP_TO_DATE
    image = provider.node_image_label if provider else None
    if image and node is not None and node.labels.get(image):
        evidence.append(f"image {node.labels[image]}")
    deleting = any(
        o is not None and o.deleting_since is not None
        for o in (machine.object if machine else None, infra, node)
    )
    if deleting:
        evidence.append("deleting")
    return InstanceRollout(
        instance.sort_name,
        state,
        tuple(evidence),
        node is not None and node.ready is True,
        deleting,
    )


def _counted(raw: RawObject | None) -> tuple[tuple[str, int], ...]:
    found = []
    for entry in items(dig(raw, "status", "versions")):
        version, replicas = text(entry.get("version")), integer(entry.get("replicas"))
        if version and replicas is not None:
            found.append((version, replicas))
    return tuple(found)


def _generation(raw: RawObject | None) -> tuple[int | None, int | None]:
    return (
        integer(dig(raw, "metadata", "generation")),
        integer(dig(raw, "status", "observedGeneration")),
    )


def _template_written(raw: RawObject | None) -> datetime | None:
    """When a client last wrote the pool's template version (managedFields), if it says."""
    latest = None
    for entry in items(dig(raw, "metadata", "managedFields")):
        fields = mapping(entry.get("fieldsV1"))
        template = mapping(dig(fields, "f:spec", "f:template", "f:spec"))
        when = parse_time(entry.get("time"))
        if "f:version" in template and when and (latest is None or when > latest):
            latest = when
    return latest


def _last_change(pool: PoolDescription, raw_pool: RawObject | None) -> datetime | None:
    times = [pool.pool.created, _template_written(raw_pool)]
    for instance in pool.instances:
        for obj in (instance.machine.object if instance.machine else None, instance.infra_machine):
            if obj is not None:
                times += [obj.created, obj.deleting_since]
        if instance.node is not None:
            times += [
                instance.node.created,
                instance.node.ready_since,
                instance.node.deleting_since,
            ]
    known = [t for t in times if t is not None]
    return max(known) if known else None


def _provider_rolling(pool: PoolDescription, provider: Provider | None) -> list[str]:
    infra = pool.infra
    if infra is None or provider is None:
        return []
    found = []
    for name, rolling in (
        (provider.updating_condition, "True"),
        (provider.model_condition, "False"),
    ):
        cond = infra.conditions.get(name) if name else None
        if cond is not None and cond.status == rolling:
            reason = f" ({cond.reason})" if cond.reason else ""
            found.append(f"{infra.kind} {infra.name} {cond.type}={cond.status}{reason}")
    return found


def pool_rollout(
    pool: PoolDescription,
    snapshot: Snapshot,
    now: datetime,
    stuck_after: timedelta,
    nodes_read: bool = True,
) -> PoolRollout:
    """nodes_read False: the workload cluster's Nodes could not be read, so no instance's
    version or readiness is known and the rollout is judged neither done nor stuck."""
    mp = pool.pool
    ref = mp.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    version = mp.desired_version
    raw_pool = snapshot.find(group_of(mp.api_version), "MachinePool", mp.namespace, mp.name)
    raw_infra = (
        snapshot.find(ref.api_group, ref.kind, mp.namespace, ref.name) if ref is not None else None
    )
    boot = mp.bootstrap_ref
    raw_boot = snapshot.find(boot.api_group, boot.kind, mp.namespace, boot.name) if boot else None
    boot_generation = integer(dig(raw_boot, "metadata", "generation"))
    model = provider.model_version_field if provider else None
    model_value = text(dig(raw_infra, *model.split("."))) if model else None
    target = Target(
        version,
        tuple(f"{t.kind} {t.field}={t.value}" for t in pool.version_targets)
        + ((f"{ref.kind} {model}={model_value}",) if ref and model and model_value else ()),
        None
        if boot is None
        else f"{boot.kind} {boot.name}"
        + (f" (generation {boot_generation})" if boot_generation is not None else ""),
        _counted(raw_pool),
        mp.generation,
        mp.observed_generation,
        *_generation(raw_infra),
    )
    instances = tuple(_instance(i, version, provider, snapshot, nodes_read) for i in pool.instances)
    waiting = []
    if not nodes_read:
        waiting.append(f"the Nodes of Cluster {mp.namespace}/{mp.cluster} could not be read")
    if pool.paused_by:
        waiting.append(f"reconciliation is paused: {pool.paused_by}")
    for what, gen, seen in (
        ("MachinePool", target.generation, target.observed_generation),
        (
            ref.kind if ref else "infra pool",
            target.infra_generation,
            target.infra_observed_generation,
        ),
    ):
        if gen is not None and seen is not None and seen < gen:
            waiting.append(f"{what} generation {gen} not yet observed (observed {seen})")
    waiting += [f"{s} says it is still rolling" for s in _provider_rolling(pool, provider)]
    old = sum(1 for i in instances if i.state == OLD)
    unknown = sum(1 for i in instances if i.state == UNKNOWN)
    if old:
        waiting.append(f"{old} old instance{'s' if old != 1 else ''} left")
    if unknown:
        waiting.append(f"{unknown} instance{'s' if unknown != 1 else ''} of unknown version")
    desired = mp.desired
    available = _available(instances)
    wanted = desired if desired is not None else len(instances)
    if available < wanted and nodes_read:
        waiting.append(f"{available} of {wanted} desired instances up to date and Ready")
    last = _last_change(pool, raw_pool)
    moved_long_ago = last is not None and now - last > stuck_after
    stuck = bool(waiting) and moved_long_ago and nodes_read
    return PoolRollout(
        mp.namespace,
        mp.name,
        mp.cluster,
        target,
        desired,
        instances,
        tuple(waiting),
        last,
        stuck,
        nodes_read,
    )
