"""Where a MachinePool's rollout stands: its target, and each instance up to date, old or unknown.

Upstream has no rollout signal for MachinePools (cluster-api#10059): observedGeneration moves
on at once, upToDateReplicas counts Machines that are not deleting (or is spec.replicas), and
status.versions (v1.14) is what the controller last counted. So an instance is judged by what it
runs: its Node's kubelet against the version the provider rolls to, the provider's own
per-instance model flag where it has one (CAPZ's latestModelApplied), and the Machine's version
only when there is no Node. A rollout is done when the pool's generation is observed, its
providerIDList is the infra pool's, no provider signal says it is still rolling, no old or unknown
instance is left, and as many up to date instances are Ready as are desired. Not done, it is
paused while reconciliation is (the Cluster's spec.paused, the pool's or the infra pool's paused
annotation): kubectl never judges a paused rollout against its progress deadline. Otherwise it is
stuck when nothing moved (an instance created, deleted or turned Ready, the pool's template
written) for a while, and progressing until then. Every instance the provider reports counts: a
surge instance that never got a Node holds the rollout, and is named with what keeps it from
counting.
Pure: a PoolDescription and its Snapshot in, a PoolRollout out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.fields import RawObject, dig, integer, items, mapping, text
from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.base.kubeversion import shown, unparseable
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.conditions import Condition
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.instances import Instance, same_version, uncopied
from kubectl_machinepool.model.restartrecord import made_before, recorded_start
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.records import Provider
from kubectl_machinepool.providers.registry import infra_pool

UP_TO_DATE, OLD, UNKNOWN = "up-to-date", "old", "unknown"
DONE, PROGRESSING, PAUSED, STUCK = "done", "progressing", "paused", "stuck"
# The Machine conditions that say which step of an instance's start failed, in order.
_MACHINE_STEPS = ("BootstrapConfigReady", "BootstrapReady", "InfrastructureReady")
# How far the API server's clock may run ahead of ours (last_change).
CLOCK_SKEW = timedelta(minutes=1)
# A condition message from a cluster is shown up to this many characters.
_MESSAGE = 160


@record
class InstanceRollout:
    name: str
    state: str  # UP_TO_DATE, OLD or UNKNOWN
    evidence: tuple[str, ...]
    ready: bool
    deleting: bool
    # What keeps it from counting: a failed start step, no Node, a Node not Ready, ...
    problems: tuple[str, ...] = ()

    @property
    def counts(self) -> bool:
        """Up to date, Ready and not leaving: it counts towards the desired replicas."""
        return self.state == UP_TO_DATE and self.ready and not self.deleting


@record
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


@record
class PoolRollout:
    namespace: str
    name: str
    cluster: str
    target: Target
    desired: int | None
    instances: tuple[InstanceRollout, ...]
    # Why the rollout is not done yet, in the order a reader should act on them.
    waiting_for: tuple[str, ...]
    # The last time anything about the rollout moved.
    last_change: datetime | None
    # DONE, PROGRESSING, PAUSED or STUCK.
    state: str
    # False: the workload cluster's Nodes could not be read; no instance's state is known.
    nodes_read: bool = True
    # Why nothing reconciles the pool now (description.py), or None.
    paused_by: str | None = None

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def stuck(self) -> bool:
        return self.state == STUCK

    @property
    def holding(self) -> tuple[InstanceRollout, ...]:
        """The instances behind a rollout not done: not up to date and Ready, or leaving; the
        new ones first, as they are what the old ones wait for."""
        behind = () if self.done else (i for i in self.instances if not i.counts)
        return tuple(sorted(behind, key=lambda i: i.state == OLD))

    def count(self, state: str) -> int:
        return sum(1 for i in self.instances if i.state == state)

    @property
    def available(self) -> int:
        return _available(self.instances)


def _available(instances: tuple[InstanceRollout, ...]) -> int:
    return sum(1 for i in instances if i.counts)


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
    *,
    nodes_read: bool,
    now: datetime,
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
    if ran and (unparseable(ran) or unparseable(version)):
        # Neither up to date nor old: no version to compare (base/kubeversion.py, MP1202).
        evidence.append(f"{source} {ran}, target {version}: not both semantic versions")
    elif ran:
        state = UP_TO_DATE if not version or same_version(ran, version) else OLD
        evidence.append(f"{source} {ran}" + ("" if state == UP_TO_DATE else f", target {version}"))
    elif nodes_read:
        evidence.append("no kubelet or Machine version")
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
        _problems(instance, now) if nodes_read else (),
    )


def _problems(instance: Instance, now: datetime) -> tuple[str, ...]:
    """Why the instance does not count yet, beyond its version: the step of its start that
    failed (its Machine's or infra machine's conditions), no Node for how long, a Node not
    Ready or going, a providerID the pool has not recorded."""
    found = []
    machine = instance.machine.object if instance.machine else None
    for step in _MACHINE_STEPS:
        cond = machine.conditions.get(step) if machine else None
        if cond is not None and cond.status == "False":
            found.append(_condition("Machine", cond))
            break
    infra = instance.infra_machine
    ready = infra.conditions.get("Ready") if infra is not None else None
    if infra is not None and ready is not None and ready.status == "False":
        found.append(_condition(infra.kind, ready))
    node = instance.node
    born = [o.created for o in (machine, infra) if o is not None and o.created is not None]
    if node is None:
        found.append(f"no Node for {human_duration(now - min(born))}" if born else "no Node")
    elif node.deleting_since is not None:
        found.append("Node being deleted")
    elif node.ready is not True:
        cond = node.conditions.get("Ready")
        found.append("Node not Ready" + (f" ({cond.reason})" if cond and cond.reason else ""))
    if instance.provider_id and not instance.listed:
        found.append("not in the MachinePool's spec.providerIDList")
    return tuple(found)


def _condition(what: str, cond: Condition) -> str:
    reason = f" ({cond.reason})" if cond.reason else ""
    message = cond.message if len(cond.message) <= _MESSAGE else cond.message[:_MESSAGE] + "…"
    return f"{what} {cond.type} False{reason}" + (f": {message}" if message else "")


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


def last_change(
    pool: PoolDescription, raw_pool: RawObject | None, now: datetime
) -> datetime | None:
    """The last time anything about the pool's rollout moved, as its objects tell, up to now.

    A time a little after now is the API server's clock ahead of ours: now. One further on was
    written after the moment judged (a dump judged --now earlier), so it tells nothing of it."""
    # The Paused condition's last transition: a pause lifted is movement too.
    paused = pool.pool.conditions.get("Paused")
    times = [pool.pool.created, _template_written(raw_pool), paused.since if paused else None]
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
    known = [min(t, now) for t in times if t is not None and t <= now + CLOCK_SKEW]
    return max(known) if known else None


def provider_rolling(pool: PoolDescription) -> list[str]:
    """The infra pool's own conditions that say its provider is still rolling it."""
    infra = pool.infra
    provider = infra_pool(infra.group, infra.kind) if infra is not None else None
    if infra is None or provider is None:
        return []
    found = []
    for signal in provider.rolling:
        cond = infra.conditions.get(signal.condition)
        if cond is not None and signal.says_rolling(cond.status, cond.reason):
            reason = f" ({cond.reason})" if cond.reason else ""
            found.append(f"{infra.kind} {infra.name} {cond.type}={cond.status}{reason}")
    return found


def _restart(pool: PoolDescription, raw_pool: RawObject | None, clock: datetime) -> list[str]:
    """A restart recorded on the pool is not done while instances older than it are left; one
    said to begin after the server's clock is none this tool began (rollout status notes it)."""
    started = recorded_start(raw_pool)
    left = len(made_before(pool.instances, started)) if started and started <= clock else 0
    if not left:
        return []
    return [
        f"the restart begun at {format_time(started)}: {left} instance"
        f"{'s' if left != 1 else ''} made before it left"
    ]


def pool_rollout(
    pool: PoolDescription,
    snapshot: Snapshot,
    now: datetime,
    stuck_after: timedelta,
    nodes_read: bool = True,
    *,
    server_time: datetime | None = None,
) -> PoolRollout:
    """nodes_read False: the workload cluster's Nodes could not be read, so no instance's
    version or readiness is known and the rollout is judged neither done nor stuck.
    server_time: the API server's clock, which a restart's recorded start is on."""
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
    instances = tuple(
        _instance(i, version, provider, snapshot, nodes_read=nodes_read, now=now)
        for i in pool.instances
    )
    waiting = []
    # Its target no version, the rollout cannot be judged: never done, nor stuck.
    judged = nodes_read and not unparseable(version)
    if not judged and nodes_read:
        waiting.append(
            f"the pool's version to be a semantic version (it is {shown(version or '')})"
        )
    if not nodes_read:
        waiting.append(f"the Nodes of Cluster {mp.namespace}/{mp.cluster} could not be read")
    infra_kind = ref.kind if ref else "infra pool"
    for what, gen, seen in (
        ("MachinePool", target.generation, target.observed_generation),
        (infra_kind, target.infra_generation, target.infra_observed_generation),
    ):
        if gen is not None and seen is not None and seen < gen:
            waiting.append(f"{what} generation {gen} not yet observed (observed {seen})")
    waiting += [f"{s} says it is still rolling" for s in provider_rolling(pool)]
    waiting += uncopied(mp, raw_infra, infra_kind)
    old = sum(1 for i in instances if i.state == OLD)
    unknown = sum(1 for i in instances if i.state == UNKNOWN)
    if old:
        waiting.append(f"{old} old instance{'s' if old != 1 else ''} left")
    if unknown:
        waiting.append(f"{unknown} instance{'s' if unknown != 1 else ''} of unknown version")
    waiting += _restart(pool, raw_pool, server_time or now)
    desired = mp.desired
    available = _available(instances)
    wanted = desired if desired is not None else len(instances)
    if available < wanted and nodes_read:
        waiting.append(f"{available} of {wanted} desired instances up to date and Ready")
    last = last_change(pool, raw_pool, now)
    if not waiting:
        state = DONE
    elif pool.paused_by:
        state = PAUSED
    elif judged and last is not None and now - last > stuck_after:
        state = STUCK
    else:
        state = PROGRESSING
    return PoolRollout(
        mp.namespace,
        mp.name,
        mp.cluster,
        target,
        desired,
        instances,
        tuple(waiting),
        last,
        state,
        nodes_read,
        pool.paused_by,
    )
