"""delete-machine's plan: which instance, whether it may go, and the writes that make it go.

Pure: built from describe's model and the raw objects it came from, plus what the command
found out around it (the user's permissions, PodDisruptionBudgets on the workload cluster).
The plan is what the user sees and confirms, and exactly what the executor writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum, IntEnum
from typing import Any

from kubectl_machinepool.deletion import Verdict
from kubectl_machinepool.description import ClusterDescription, Description, PoolDescription
from kubectl_machinepool.errors import UsageError
from kubectl_machinepool.fields import dig, integer, items, mapping, text
from kubectl_machinepool.humanize import human_duration
from kubectl_machinepool.instances import Instance
from kubectl_machinepool.model import PAUSED_ANNOTATION
from kubectl_machinepool.options import parse_duration
from kubectl_machinepool.selector import selector_matches
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject, Snapshot, group_of
from kubectl_machinepool.timeutil import format_time

DELETE_MACHINE_ANNOTATION = "cluster.x-k8s.io/delete-machine"
# Providers that delete an annotated Machine even before replicas go down (facts §7, step 3).
ANNOTATION_DELETES = frozenset({"AzureMachinePool"})


class Mode(Enum):
    REPLACE = "replace"
    SCALE_DOWN = "scale-down"


class Level(IntEnum):
    OK = 0
    WARNING = 1
    REFUSED = 2


@dataclass(frozen=True, slots=True)
class Check:
    level: Level
    message: str


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """An object a write addresses, with the uid and resourceVersion the plan was made from."""

    group: str
    version: str
    kind: str
    plural: str
    namespace: str
    name: str
    uid: str
    resource_version: str

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def kubectl_name(self) -> str:
        """`machine.cluster.x-k8s.io/NAME`, the way kubectl names what it changed."""
        return f"{self.kind.lower()}.{self.group}/{self.name}"

    def path(self, subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}/namespaces/{self.namespace}/{self.plural}"
        return f"{base}/{self.name}" + (f"/{subresource}" if subresource else "")


@dataclass(frozen=True, slots=True)
class Write:
    """One request of the plan. Preconditions (uid, resourceVersion) are added when it is sent,
    from the object as the plan saw it or as the previous write left it."""

    verb: str  # the RBAC verb: patch, update, delete
    target: ObjectRef
    summary: str
    body: dict[str, Any] | None = None
    subresource: str = ""
    # What to send to take this write back if a later one fails.
    undo: dict[str, Any] | None = None
    undo_summary: str = ""
    # Why a write without undo cannot be taken back, when that is not plain from its verb.
    kept_because: str = ""
    # How kubectl would report it: "annotated", "scaled", "deleted".
    done: str = ""

    @property
    def method(self) -> str:
        return {"patch": "PATCH", "update": "PUT", "delete": "DELETE"}[self.verb]

    @property
    def resource(self) -> str:
        """The resource as RBAC names it, e.g. machinepools/scale."""
        return self.target.plural + (f"/{self.subresource}" if self.subresource else "")

    @property
    def access(self) -> Access:
        t = self.target
        return Access(self.verb, t.group, t.plural, self.subresource, t.namespace, t.name)


@dataclass(frozen=True, slots=True)
class Access:
    """What a SelfSubjectAccessReview asks about one write."""

    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str

    @property
    def attributes(self) -> dict[str, str]:
        """As SelfSubjectAccessReview's resourceAttributes."""
        fields = {
            "verb": self.verb,
            "group": self.group,
            "resource": self.resource,
            "subresource": self.subresource,
            "namespace": self.namespace,
            "name": self.name,
        }
        return {k: v for k, v in fields.items() if v}


@dataclass(frozen=True, slots=True)
class Budget:
    """A PodDisruptionBudget covering pods on the Node, as the workload cluster reports it now."""

    namespace: str
    name: str
    disruptions_allowed: int
    pods: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Disruption:
    """What a drain of the Node would meet; budgets is None when it could not be checked."""

    budgets: tuple[Budget, ...] | None
    note: str | None = None

    @property
    def blocking(self) -> tuple[Budget, ...]:
        return tuple(b for b in self.budgets or () if b.disruptions_allowed < 1)


@dataclass(frozen=True, slots=True)
class Request:
    mode: Mode
    drain_timeout: timedelta | None = None
    allow_unverified: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    """The instance to remove, with the raw objects the writes address."""

    cluster: ClusterDescription
    pool: PoolDescription
    instance: Instance
    pool_raw: RawObject
    machine_raw: RawObject | None
    infra_machine_raw: RawObject | None
    infra_pool_raw: RawObject | None

    @property
    def name(self) -> str:
        """How the user knows the instance: Machine, else Node, else providerID."""
        i = self.instance
        if i.machine:
            return f"Machine {i.machine.object.namespace}/{i.machine.object.name}"
        if i.node:
            return f"Node {i.node.name}"
        return f"instance {i.provider_id}"


@dataclass(frozen=True, slots=True)
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


def _ref(raw: RawObject, plural: str) -> ObjectRef:
    meta = mapping(raw.get("metadata"))
    api_version = text(raw.get("apiVersion")) or ""
    return ObjectRef(
        group_of(api_version),
        api_version.rpartition("/")[2],
        text(raw.get("kind")) or "",
        plural,
        text(meta.get("namespace")) or "",
        text(meta.get("name")) or "",
        text(meta.get("uid")) or "",
        text(meta.get("resourceVersion")) or "",
    )


def _v1beta1(machine: RawObject) -> bool:
    return str(machine.get("apiVersion", "")).endswith("/v1beta1")


def _drain_timeout(machine: RawObject) -> Any:
    """The Machine's node drain timeout as stored: seconds (v1beta2) or a duration (v1beta1)."""
    if _v1beta1(machine):
        return dig(machine, "spec", "nodeDrainTimeout")
    return dig(machine, "spec", "deletion", "nodeDrainTimeoutSeconds")


def drain_bound(machine: RawObject) -> float | None:
    """Seconds after which the drain of this Machine's Node gives up; None (or 0): never."""
    stored = _drain_timeout(machine)
    if isinstance(stored, str):
        try:
            return parse_duration(stored, "spec.nodeDrainTimeout")
        except UsageError:
            return None
    return float(stored) if isinstance(stored, int) and stored > 0 else None


def _drain_timeout_write(machine_raw: RawObject, machine: ObjectRef, value: timedelta) -> Write:
    seconds = max(1, int(value.total_seconds()))
    old = _drain_timeout(machine_raw)
    if _v1beta1(machine_raw):
        field, new, patch = "spec.nodeDrainTimeout", f"{seconds}s", "nodeDrainTimeout"
        body: dict[str, Any] = {"spec": {patch: f"{seconds}s"}}
        undo: dict[str, Any] = {"spec": {patch: old}}
    else:
        field, new = "spec.deletion.nodeDrainTimeoutSeconds", str(seconds)
        body = {"spec": {"deletion": {"nodeDrainTimeoutSeconds": seconds}}}
        deletion = mapping(dig(machine_raw, "spec", "deletion"))
        if set(deletion) - {"nodeDrainTimeoutSeconds"}:
            undo = {"spec": {"deletion": {"nodeDrainTimeoutSeconds": old}}}
        else:
            # An empty spec.deletion is invalid (minProperties 1): drop it as it was absent.
            undo = {"spec": {"deletion": deletion or None}}
    return Write(
        "patch",
        machine,
        f"set {field}={new} on {machine.display}",
        body,
        undo=undo,
        undo_summary=f"set {field} back to {old if old is not None else 'unset'}",
        done="patched",
    )


def _scale_down_writes(target: Target, machine: ObjectRef, now: datetime) -> list[Write]:
    stamp = format_time(now)
    # Put back what was there (cluster-autoscaler may have marked it first), not just remove.
    before = mapping(dig(target.machine_raw, "metadata", "annotations")).get(
        DELETE_MACHINE_ANNOTATION
    )
    undo_summary = (
        f"removed the {DELETE_MACHINE_ANNOTATION} annotation again"
        if before is None
        else f"set the {DELETE_MACHINE_ANNOTATION} annotation back to {before!r}"
    )
    infra_kind = target.pool.infra.kind if target.pool.infra else ""
    undo: dict[str, Any] | None = {"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: before}}}
    kept_because = ""
    if infra_kind in ANNOTATION_DELETES:
        # The provider may already be deleting the instance: removing the mark proves nothing.
        undo = None
        kept_because = f"the {infra_kind} provider deletes an annotated Machine on the mark alone"
    pool = _ref(target.pool_raw, "machinepools")
    desired = target.pool.pool.desired or 0
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": pool.name, "namespace": pool.namespace},
        "spec": {"replicas": desired - 1},
    }
    return [
        Write(
            "patch",
            machine,
            f"annotate {machine.display} {DELETE_MACHINE_ANNOTATION}={stamp}",
            {"metadata": {"annotations": {DELETE_MACHINE_ANNOTATION: stamp}}},
            undo=undo,
            undo_summary=undo_summary,
            kept_because=kept_because,
            done="annotated",
        ),
        Write(
            "update",
            pool,
            f"scale {pool.display} from {desired} to {desired - 1} replicas (/scale)",
            scale,
            subresource="scale",
            done="scaled",
        ),
    ]


def writes_for(target: Target, request: Request, now: datetime) -> tuple[Write, ...]:
    """The writes, in order; empty when there is no Machine to write to."""
    if target.machine_raw is None:
        return ()
    machine = _ref(target.machine_raw, "machines")
    writes: list[Write] = []
    if request.drain_timeout is not None:
        writes.append(_drain_timeout_write(target.machine_raw, machine, request.drain_timeout))
    if request.mode is Mode.SCALE_DOWN:
        writes += _scale_down_writes(target, machine, now)
    else:
        writes.append(Write("delete", machine, f"delete {machine.display}", done="deleted"))
    return tuple(writes)


def _owned_by_machine(infra_machine: RawObject | None, machine: RawObject) -> bool:
    uid = dig(machine, "metadata", "uid")
    name = dig(machine, "metadata", "name")
    return any(
        o.get("kind") == "Machine" and (o.get("uid") == uid if uid else o.get("name") == name)
        for o in items(dig(infra_machine, "metadata", "ownerReferences"))
    )


def _machine_checks(target: Target) -> list[Check]:
    """Decision rule steps 1c/1d: a Machine of this pool whose infra machine it controls."""
    pool, instance = target.pool, target.instance
    machine, raw = instance.machine, target.machine_raw
    if machine is None or raw is None:
        return [
            Check(
                Level.REFUSED,
                f"{target.name} has no Machine: the pool lists or owns it, but Cluster API has "
                "no object that deleting would remove",
            )
        ]
    checks = []
    controllers = [
        o for o in items(dig(raw, "metadata", "ownerReferences")) if o.get("controller") is True
    ]
    if not any(
        o.get("kind") == "MachinePool" and o.get("uid") == pool.pool.uid for o in controllers
    ):
        found = ", ".join(f"{o.get('kind')} {o.get('name')}" for o in controllers) or "none"
        checks.append(
            Check(
                Level.REFUSED,
                f"Machine {machine.object.name} is not controlled by MachinePool {pool.pool.name} "
                f"(uid {pool.pool.uid or 'unknown'}); its controller: {found}",
            )
        )
    kind = pool.pool.machine_kind
    group = pool.infra.api_version.rpartition("/")[0] if pool.infra else None
    ref_group = text(dig(raw, "spec", "infrastructureRef", "apiGroup")) or group_of(
        text(dig(raw, "spec", "infrastructureRef", "apiVersion")) or ""
    )
    if machine.infra_kind != kind or ref_group != group:
        checks.append(
            Check(
                Level.REFUSED,
                f"Machine {machine.object.name} points at {machine.infra_kind} in {ref_group}, not "
                f"the {kind} in {group} its infra pool declares",
            )
        )
    elif target.infra_machine_raw is None:
        checks.append(
            Check(
                Level.REFUSED,
                f"{kind} {machine.infra_name} does not exist: deleting the Machine would not reach "
                "an instance",
            )
        )
    elif not _owned_by_machine(target.infra_machine_raw, raw):
        checks.append(
            Check(
                Level.REFUSED,
                f"{kind} {machine.infra_name} does not name Machine {machine.object.name} as its "
                "owner: Cluster API would not delete it",
            )
        )
    else:
        checks.append(
            Check(
                Level.OK,
                f"Machine {machine.object.name} is controlled by MachinePool {pool.pool.name} "
                f"(uid) and controls {kind} {machine.infra_name}",
            )
        )
    if machine.object.deleting_since is not None:
        checks.append(
            Check(Level.REFUSED, f"Machine {machine.object.name} is already being deleted")
        )
    if machine.node_name is None:
        checks.append(
            Check(
                Level.WARNING,
                f"Machine {machine.object.name} has no nodeRef: no Node will be drained first",
            )
        )
    return checks + _hold_checks(target)


_HOOKS = (
    "pre-drain.delete.hook.machine.cluster.x-k8s.io",
    "pre-terminate.delete.hook.machine.cluster.x-k8s.io",
)


def _hold_checks(target: Target) -> list[Check]:
    """Annotations that make Cluster API stop at a step of the deletion."""
    checks = []
    for obj in (target.machine_raw, target.infra_machine_raw):
        notes = mapping(dig(obj, "metadata", "annotations"))
        what = f"{obj.get('kind')} {dig(obj, 'metadata', 'name')}" if obj else ""
        if PAUSED_ANNOTATION in notes:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"{what} is paused ({PAUSED_ANNOTATION}): its deletion would stall",
                )
            )
        hooks = sorted(k for k in notes if k.startswith(_HOOKS))
        if hooks:
            checks.append(
                Check(
                    Level.WARNING,
                    f"{what} carries deletion hooks {', '.join(hooks)}: the deletion waits until "
                    "their owners remove them",
                )
            )
    return checks


def _verdict_checks(target: Target, request: Request) -> list[Check]:
    verdict = target.pool.deletion
    if verdict.verdict is Verdict.NOT_SUPPORTED:
        instead = f"; instead: {verdict.instead}" if verdict.instead else ""
        return [Check(Level.REFUSED, f"not supported: {verdict.reason}{instead}")]
    if verdict.verdict is Verdict.UNVERIFIED:
        if request.mode is Mode.SCALE_DOWN:
            return [
                Check(
                    Level.REFUSED,
                    f"unverified: {verdict.reason}, and whether it deletes the annotated instance "
                    "first is not known: --scale-down could remove any instance",
                )
            ]
        if request.allow_unverified:
            return [
                Check(Level.WARNING, f"unverified: {verdict.reason} (--allow-unverified-provider)")
            ]
        return [
            Check(
                Level.REFUSED,
                f"unverified: {verdict.reason}; --allow-unverified-provider goes ahead anyway",
            )
        ]
    effect = verdict.scale_down if request.mode is Mode.SCALE_DOWN else verdict.reason
    checks = [Check(Level.OK, f"supported: {effect}")]
    if request.mode is Mode.SCALE_DOWN and not verdict.honours_delete_annotation:
        checks.append(
            Check(
                Level.REFUSED,
                f"--scale-down cannot choose this instance: {verdict.scale_down}; use --replace, "
                "or lower spec.replicas and let the cloud pick",
            )
        )
    elif (
        request.mode is Mode.SCALE_DOWN
        and target.pool.infra is not None
        and target.pool.infra.kind in ANNOTATION_DELETES
    ):
        checks.append(
            Check(
                Level.WARNING,
                f"{target.pool.infra.kind}: the annotation alone makes the provider delete the "
                "instance, so it cannot be taken back if the scale step fails",
            )
        )
    return checks


def _paused_or_deleting(target: Target) -> list[Check]:
    cluster, pool = target.cluster, target.pool
    problems = []
    if cluster.cluster is None and not cluster.cluster_unread:
        problems.append(f"Cluster {cluster.namespace}/{cluster.name} does not exist")
    if pool.paused_by:
        problems.append(f"reconciliation is paused ({pool.paused_by})")
    if cluster.cluster and cluster.cluster.deleting_since:
        problems.append(f"Cluster {cluster.namespace}/{cluster.name} is being deleted")
    if pool.pool.deleting_since:
        problems.append(f"MachinePool {pool.pool.name} is being deleted")
    infra = target.infra_pool_raw
    if infra is not None and PAUSED_ANNOTATION in mapping(dig(infra, "metadata", "annotations")):
        problems.append(f"{pool.infra.kind if pool.infra else 'the infra pool'} is paused")
    if pool.infra and pool.infra.deleting_since:
        problems.append(f"{pool.infra.kind} {pool.infra.name} is being deleted")
    if problems:
        return [
            Check(
                Level.REFUSED,
                "; ".join(problems) + ": nothing would act on the deletion as planned",
            )
        ]
    if cluster.cluster is None:
        return [
            Check(
                Level.WARNING,
                f"Cluster {cluster.namespace}/{cluster.name} could not be read: whether it is "
                "paused or deleting is unknown (the pool and its infra pool are neither)",
            )
        ]
    return [
        Check(Level.OK, "the Cluster, the pool and its infra pool are neither paused nor deleting")
    ]


def _replica_checks(target: Target, request: Request) -> list[Check]:
    mp = target.pool.pool
    low, high = mp.autoscaler_bounds
    if request.mode is Mode.REPLACE:
        checks = [
            Check(Level.OK, f"spec.replicas stays {mp.desired}: a replacement instance follows")
        ]
        if mp.replicas_managed_by:
            checks.append(Check(Level.WARNING, f"replicas are managed by {mp.replicas_managed_by}"))
        return checks
    if mp.desired is None or mp.desired < 1:
        return [Check(Level.REFUSED, "spec.replicas is not set above 0: nothing to scale down")]
    if mp.replicas_managed_by:
        return [
            Check(
                Level.REFUSED,
                f"replicas are managed by {mp.replicas_managed_by} (replicas-managed-by): lowering "
                "spec.replicas would fight it",
            )
        ]
    if low is not None and mp.desired - 1 < low:
        return [
            Check(
                Level.REFUSED,
                f"scaling to {mp.desired - 1} goes below the cluster-autoscaler minimum {low}",
            )
        ]
    bounds = (
        f" (cluster-autoscaler bounds {low}..{high})" if low is not None or high is not None else ""
    )
    return [Check(Level.OK, f"spec.replicas goes from {mp.desired} to {mp.desired - 1}{bounds}")]


def _rollout_check(target: Target) -> list[Check]:
    phase = target.pool.pool.phase
    if phase and phase != "Running":
        return [
            Check(
                Level.WARNING,
                f"the pool is {phase}, not Running: it is mid-rollout or scaling, so the "
                "replacement may take longer and counts will move",
            )
        ]
    return []


def _drain_checks(target: Target, request: Request, disruption: Disruption) -> list[Check]:
    raw = target.machine_raw or {}
    configured = drain_bound(raw) if raw else None
    limit_seconds = request.drain_timeout.total_seconds() if request.drain_timeout else configured
    bounded = bool(limit_seconds)
    node = target.instance.machine.node_name if target.instance.machine else None
    checks = []
    if disruption.budgets is None:
        checks.append(
            Check(
                Level.WARNING,
                f"PodDisruptionBudgets were not checked: {disruption.note or 'unknown reason'}",
            )
        )
    elif disruption.blocking:
        names = ", ".join(
            f"{b.namespace}/{b.name} (pods {', '.join(b.pods)})" for b in disruption.blocking
        )
        if limit_seconds:
            limit = human_duration(timedelta(seconds=max(1, int(limit_seconds))))
            checks.append(
                Check(
                    Level.WARNING,
                    f"PodDisruptionBudgets allow no disruption now: {names}; the drain gives up "
                    f"after {limit} and the Node goes anyway",
                )
            )
        else:
            checks.append(
                Check(
                    Level.REFUSED,
                    f"PodDisruptionBudgets allow no disruption now: {names}; the drain of Node "
                    f"{node} would wait forever (pool Machines get no drain timeout); fix the "
                    "budget, or pass --drain-timeout to bound the drain",
                )
            )
    elif disruption.budgets:
        count, covered = len(disruption.budgets), sum(len(b.pods) for b in disruption.budgets)
        budgets = (
            "1 PodDisruptionBudget covers" if count == 1 else f"{count} PodDisruptionBudgets cover"
        )
        checks.append(
            Check(
                Level.OK,
                f"{budgets} {covered} pods on Node {node}, and each allows a disruption now",
            )
        )
    else:
        checks.append(Check(Level.OK, f"no PodDisruptionBudget covers a pod on Node {node}"))
    if not bounded and not disruption.blocking:
        checks.append(
            Check(
                Level.WARNING,
                "the Machine has no drain timeout: a budget that starts blocking during the drain "
                "stalls it forever (--drain-timeout bounds it)",
            )
        )
    return checks


def _permission_checks(
    writes: tuple[Write, ...], permissions: dict[Access, bool | None]
) -> list[Check]:
    checks = []
    for write in writes:
        allowed = permissions.get(write.access)
        target = write.target
        what = f"{write.verb} {write.resource}.{target.group} in namespace {target.namespace}"
        if allowed is False:
            checks.append(Check(Level.REFUSED, f"you may not {what}"))
        elif allowed is None:
            checks.append(Check(Level.WARNING, f"could not check whether you may {what}"))
        else:
            checks.append(Check(Level.OK, f"you may {what}"))
    return checks


def _then(target: Target, request: Request) -> str:
    pool, machine = target.pool, target.instance.machine
    node = machine.node_name if machine and machine.node_name else "(no Node)"
    infra = f"{pool.pool.machine_kind} {machine.infra_name}" if machine else "the infra machine"
    drain = f"Cluster API drains Node {node} (evicting pods, respecting PodDisruptionBudgets)"
    if request.mode is Mode.SCALE_DOWN:
        effect = (
            pool.deletion.scale_down or "the provider should remove the annotated Machine first"
        )
        return (
            f"{effect}: {drain}, deletes {infra}, and the provider removes that very instance; "
            "the pool stays one smaller"
        )
    return f"{drain}, deletes {infra} and then the Node; {pool.deletion.reason}"


def plan_deletion(
    target: Target,
    request: Request,
    now: datetime,
    permissions: dict[Access, bool | None],
    disruption: Disruption,
) -> Plan:
    """Every check, in the order the user reads them, and the writes they guard."""
    writes = writes_for(target, request, now)
    checks = _verdict_checks(target, request)
    if target.pool.deletion.verdict is not Verdict.NOT_SUPPORTED:
        checks += _machine_checks(target)
    checks += _paused_or_deleting(target)
    checks += _replica_checks(target, request)
    checks += _rollout_check(target)
    if target.instance.machine is not None:
        checks += _drain_checks(target, request, disruption)
    checks += _permission_checks(writes, permissions)
    return Plan(target, request, tuple(checks), writes, _then(target, request))


def budget_of(pdb: RawObject, pods: list[RawObject]) -> Budget | None:
    """The budget if its selector covers any of these pods (same namespace), else None."""
    namespace = text(dig(pdb, "metadata", "namespace")) or ""
    selector = dig(pdb, "spec", "selector")
    if not isinstance(selector, dict):
        return None  # policy/v1: a null selector selects nothing, an empty one everything
    covered = [
        text(dig(p, "metadata", "name")) or ""
        for p in pods
        if dig(p, "metadata", "namespace") == namespace
        and selector_matches(selector, mapping(dig(p, "metadata", "labels")))
    ]
    if not covered:
        return None
    return Budget(
        namespace,
        text(dig(pdb, "metadata", "name")) or "",
        integer(dig(pdb, "status", "disruptionsAllowed")) or 0,
        tuple(sorted(covered)),
    )


def evictable(pod: RawObject) -> bool:
    """Pods Cluster API's drain evicts: running, not DaemonSet-owned, not static, not skipped."""
    if dig(pod, "status", "phase") in ("Succeeded", "Failed"):
        return False
    if dig(pod, "metadata", "labels", "cluster.x-k8s.io/drain") == "skip":
        return False
    if "kubernetes.io/config.mirror" in mapping(dig(pod, "metadata", "annotations")):
        return False
    return not any(
        o.get("kind") == "DaemonSet" for o in items(dig(pod, "metadata", "ownerReferences"))
    )


def disruption_of(pods: list[RawObject], pdbs: list[RawObject]) -> Disruption:
    drained = [p for p in pods if evictable(p)]
    budgets = [b for b in (budget_of(pdb, drained) for pdb in pdbs) if b is not None]
    return Disruption(tuple(sorted(budgets, key=lambda b: (b.namespace, b.name))))


@dataclass(frozen=True, slots=True)
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
        group = pool.infra.api_version.rpartition("/")[0]
        infra_machine_raw = snapshot.find(
            group, machine.infra_kind, mp.namespace, machine.infra_name or ""
        )
    return Target(
        cluster,
        pool,
        instance,
        snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {},
        machine_raw,
        infra_machine_raw,
        infra_pool,
    )
