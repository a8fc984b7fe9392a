"""MachineHealthChecks as describe shows them per pool: which of the pool's Machines each one
selects, what it checks, how it would have them remediated, and which it marks unhealthy now.

The MachineHealthCheck controller selects Machines in its own namespace by spec.selector with
the label cluster.x-k8s.io/cluster-name=spec.clusterName added (getMachinesFromMHC, v1.6 to
v1.14). It checks Machines only: a pool without MachinePool Machines has nothing it can select,
whatever its template's labels say. Both API generations map onto one model: v1beta1 keeps the
checks at the top of spec (durations as strings), v1beta2 under spec.checks and spec.remediation
(seconds).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.fields import (
    RawObject,
    count,
    dig,
    items,
    mapping,
    scalar,
    string_map,
    text,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.conditions import Condition, read_conditions
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.model.selector import selector_matches
from kubectl_machinepool.model.snapshot import Snapshot

KIND = "MachineHealthCheck"
# What the controller waits for a Machine to get a Node when the check does not say.
DEFAULT_NODE_STARTUP_SECONDS = 600
# The API's own maxItems for each condition list; a dump may hold more, which are left out.
MAX_CONDITIONS = 100
_INT32_MAX = 2**31 - 1


@record
class UnhealthyCondition:
    """A condition that makes a Node (or Machine) unhealthy once it has held for the timeout."""

    type: str
    status: str
    # None when the object gives no readable timeout.
    timeout_seconds: float | None


@record
class TemplateRef:
    """An external remediation template: remediation is that provider's, not the owner's."""

    api_version: str
    kind: str
    name: str


@record
class HealthCheck:
    namespace: str
    name: str
    uid: str
    api_version: str
    cluster: str
    # The metav1.LabelSelector as written; matched as the controller does (selects()).
    selector: Mapping[str, Any]
    # Seconds a Machine may go without a Node; 0 turns that check off.
    node_startup_seconds: float
    node_conditions: tuple[UnhealthyCondition, ...]
    machine_conditions: tuple[UnhealthyCondition, ...]
    # maxUnhealthy / unhealthyLessThanOrEqualTo (a count or a percentage), as written.
    max_unhealthy: str | None
    # unhealthyRange / unhealthyInRange ("[1-3]"), which takes precedence.
    unhealthy_range: str | None
    template: TemplateRef | None
    expected_machines: int | None
    current_healthy: int | None
    remediations_allowed: int | None
    # RemediationAllowed: False (TooManyUnhealthy) when the unhealthy count is out of bounds.
    remediation_allowed: Condition | None

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether a Machine with these labels in this namespace is selected: the selector with
        the cluster-name label set to spec.clusterName (over any value the selector gives it)."""
        match_labels = self.selector.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            return False
        pinned = {**match_labels, CLUSTER_NAME_LABEL: self.cluster}
        return selector_matches({**self.selector, "matchLabels": pinned}, labels)


@record
class Marked:
    """A pool Machine the check found unhealthy, or marked for its owner to remediate."""

    machine: str
    # HealthCheckSucceeded (False: unhealthy now) and OwnerRemediated (False: waiting for the
    # owner to remediate it; the health check never clears it).
    health: Condition | None
    owner_remediated: Condition | None
    deleting: bool

    @property
    def unhealthy(self) -> bool:
        return self.health is not None and self.health.status == "False"

    @property
    def waiting(self) -> bool:
        return self.owner_remediated is not None and self.owner_remediated.status == "False"

    @property
    def since(self) -> datetime | None:
        """Since when it is unhealthy, else since when it waits for remediation."""
        cond = self.health if self.unhealthy else self.owner_remediated
        return cond.since if cond else None


@record
class PoolHealthCheck:
    """One MachineHealthCheck as it concerns one pool."""

    check: HealthCheck
    # The pool's Machines it selects now.
    machines: tuple[str, ...]
    # Of those, the ones it found unhealthy or marked for remediation.
    marked: tuple[Marked, ...]
    # It would select a Machine with the pool template's labels (and the pool and cluster
    # labels core adds): the Machines the pool makes, or would make if it had any.
    template_matches: bool


def _seconds(value: Any) -> float | None:
    """A timeout: seconds (v1beta2) or a Go duration (v1beta1); None when unreadable."""
    if isinstance(value, str):
        try:
            return parse_duration(value, "timeout") or 0.0
        except UsageError:
            return None
    number = count(value)
    # The API's seconds are int32: anything larger is no timeout it would have stored.
    return None if number is None or number > _INT32_MAX else float(number)


def _conditions(raw: Any, timeout_key: str) -> tuple[UnhealthyCondition, ...]:
    return tuple(
        UnhealthyCondition(
            text(c.get("type")) or "", text(c.get("status")) or "", _seconds(c.get(timeout_key))
        )
        for c in items(raw)[:MAX_CONDITIONS]
    )


def _startup(value: Any) -> float:
    seconds = None if value is None else _seconds(value)
    # Unset is the default; what does not parse the API server would have refused.
    return DEFAULT_NODE_STARTUP_SECONDS if seconds is None else seconds


def _template(raw: Any) -> TemplateRef | None:
    ref = mapping(raw)
    kind, name = text(ref.get("kind")), text(ref.get("name"))
    if not kind and not name:
        return None
    return TemplateRef(text(ref.get("apiVersion")) or "", kind or "", name or "")


def health_check(obj: RawObject) -> HealthCheck:
    meta, spec, status = (mapping(obj.get(k)) for k in ("metadata", "spec", "status"))
    api_version = text(obj.get("apiVersion")) or ""
    if api_version.endswith("/v1beta1"):
        checks, timeout = spec, "timeout"
        node_conditions, startup = spec.get("unhealthyConditions"), spec.get("nodeStartupTimeout")
        most, in_range = spec.get("maxUnhealthy"), spec.get("unhealthyRange")
        template = spec.get("remediationTemplate")
    else:
        checks, remediation = mapping(spec.get("checks")), mapping(spec.get("remediation"))
        trigger, timeout = mapping(remediation.get("triggerIf")), "timeoutSeconds"
        node_conditions = checks.get("unhealthyNodeConditions")
        startup = checks.get("nodeStartupTimeoutSeconds")
        most, in_range = trigger.get("unhealthyLessThanOrEqualTo"), trigger.get("unhealthyInRange")
        template = remediation.get("templateRef")
    return HealthCheck(
        namespace=text(meta.get("namespace")) or "",
        name=text(meta.get("name")) or "",
        uid=text(meta.get("uid")) or "",
        api_version=api_version,
        cluster=text(spec.get("clusterName")) or "",
        selector=mapping(spec.get("selector")),
        node_startup_seconds=_startup(startup),
        node_conditions=_conditions(node_conditions, timeout),
        machine_conditions=_conditions(checks.get("unhealthyMachineConditions"), timeout),
        max_unhealthy=scalar(most),
        unhealthy_range=text(in_range),
        template=_template(template),
        expected_machines=count(status.get("expectedMachines")),
        current_healthy=count(status.get("currentHealthy")),
        remediations_allowed=count(status.get("remediationsAllowed")),
        remediation_allowed=read_conditions(obj).get("RemediationAllowed"),
    )


def health_checks(snapshot: Snapshot) -> list[HealthCheck]:
    """Every MachineHealthCheck in the snapshot, by namespace and name."""
    found = [health_check(o) for o in snapshot.of_kind(CAPI_GROUP, KIND)]
    return sorted(found, key=lambda c: (c.namespace, c.name))


def _template_labels(raw_pool: RawObject, pool: MachinePool) -> dict[str, str]:
    """The labels core gives each Machine of the pool (computeDesiredMachine)."""
    labels = string_map(dig(raw_pool, "spec", "template", "metadata", "labels"))
    labels[POOL_NAME_LABEL] = pool_label_value(pool.name)
    labels[CLUSTER_NAME_LABEL] = pool.cluster
    return labels


def _marked(instance: Instance) -> Marked | None:
    machine = instance.machine
    if machine is None:
        return None
    conditions = machine.object.conditions
    found = Marked(
        machine.object.name,
        conditions.get("HealthCheckSucceeded"),
        conditions.get("OwnerRemediated"),
        machine.object.deleting_since is not None,
    )
    return found if found.unhealthy or found.waiting else None


def pool_health_checks(
    raw_pool: RawObject,
    pool: MachinePool,
    instances: Sequence[Instance],
    checks: Iterable[HealthCheck],
) -> tuple[PoolHealthCheck, ...]:
    """The checks in the pool's namespace that select its Machines or its template's labels."""
    would_be = _template_labels(raw_pool, pool)
    machines = [i for i in instances if i.machine is not None]
    found = []
    for check in checks:
        if check.namespace != pool.namespace:
            continue
        selected = [i for i in machines if i.machine and check.selects(i.machine.labels)]
        template_matches = check.selects(would_be)
        if selected or template_matches:
            marked = (m for i in selected if (m := _marked(i)) is not None)
            names = tuple(sorted(i.machine.object.name for i in selected if i.machine))
            by_name = tuple(sorted(marked, key=lambda m: m.machine))
            found.append(PoolHealthCheck(check, names, by_name, template_matches))
    return tuple(found)
