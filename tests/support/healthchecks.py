"""MachineHealthChecks as a user applies them and as their controller leaves them, in either API
generation, and the conditions that controller writes on a Machine it finds unhealthy (v1.14:
core/reconcilers/machinehealthcheck; v1.10: internal/controllers/machinehealthcheck)."""

from __future__ import annotations

from typing import Any

from .objects import CAPI, T0

Obj = dict[str, Any]


def health_check(
    generation: str,
    ns: str,
    name: str,
    cluster: str,
    selector: Obj,
    *,
    node_conditions: tuple[tuple[str, str, int], ...] = (
        ("Ready", "False", 300),
        ("Ready", "Unknown", 300),
    ),
    startup: int | None = None,
    max_unhealthy: str | int | None = None,
    unhealthy_range: str | None = None,
    template: tuple[str, str, str] | None = None,
    status: Obj | None = None,
) -> Obj:
    """An MHC with the spec a user writes (node conditions as (type, status, seconds),
    template as (apiVersion, kind, name)) and, when given, the status its controller wrote."""
    spec: Obj = {"clusterName": cluster, "selector": selector}
    if generation == "v1beta2":
        checks: Obj = {
            "unhealthyNodeConditions": [
                {"type": t, "status": s, "timeoutSeconds": seconds}
                for t, s, seconds in node_conditions
            ]
        }
        if startup is not None:
            checks["nodeStartupTimeoutSeconds"] = startup
        spec["checks"] = checks
        trigger = {
            k: v
            for k, v in (
                ("unhealthyLessThanOrEqualTo", max_unhealthy),
                ("unhealthyInRange", unhealthy_range),
            )
            if v is not None
        }
        remediation: Obj = {"triggerIf": trigger} if trigger else {}
        if template is not None:
            api_version, kind, ref = template
            remediation["templateRef"] = {"apiVersion": api_version, "kind": kind, "name": ref}
        if remediation:
            spec["remediation"] = remediation
    else:
        spec["unhealthyConditions"] = [
            {"type": t, "status": s, "timeout": f"{seconds}s"} for t, s, seconds in node_conditions
        ]
        if startup is not None:
            spec["nodeStartupTimeout"] = f"{startup}s"
        if max_unhealthy is not None:
            spec["maxUnhealthy"] = max_unhealthy
        if unhealthy_range is not None:
            spec["unhealthyRange"] = unhealthy_range
        if template is not None:
            api_version, kind, ref = template
            spec["remediationTemplate"] = {
                "apiVersion": api_version,
                "kind": kind,
                "name": ref,
                "namespace": ns,
            }
    obj: Obj = {
        "apiVersion": f"{CAPI}/{generation}",
        "kind": "MachineHealthCheck",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"mhc-{ns}-{name}",
            "creationTimestamp": T0,
            # The MHC webhook labels it with its Cluster.
            "labels": {f"{CAPI}/cluster-name": cluster},
        },
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def checked_status(
    generation: str,
    targets: list[str],
    healthy: int,
    allowed: int,
    remediation_allowed: bool = True,
) -> Obj:
    """The status the controller writes: counts, targets and RemediationAllowed in both sets."""
    reason = "RemediationAllowed" if remediation_allowed else "TooManyUnhealthy"
    status = "True" if remediation_allowed else "False"
    current = {
        "type": "RemediationAllowed",
        "status": status,
        "reason": reason,
        "message": "" if remediation_allowed else "Remediation is not allowed",
        "lastTransitionTime": T0,
        "observedGeneration": 1,
    }
    legacy: Obj = {"type": "RemediationAllowed", "status": status, "lastTransitionTime": T0}
    if not remediation_allowed:
        legacy.update(reason="TooManyUnhealthy", severity="Warning")
    counts: Obj = {
        "expectedMachines": len(targets),
        "currentHealthy": healthy,
        "remediationsAllowed": allowed,
        "observedGeneration": 1,
        "targets": targets,
    }
    if generation == "v1beta2":
        return {
            **counts,
            "conditions": [current],
            "deprecated": {"v1beta1": {"conditions": [legacy]}},
        }
    return {**counts, "conditions": [legacy], "v1beta2": {"conditions": [current]}}


def mark_unhealthy(
    machine: Obj,
    since: str,
    *,
    reason: str = "UnhealthyNode",
    message: str = "Condition Ready on Node is reporting status False with reason KubeletNotReady for more than 5m0s",
    waiting: bool = True,
) -> None:
    """What the MHC controller writes on a Machine that failed its check: HealthCheckSucceeded
    False and, when remediation is the owner's and allowed, OwnerRemediated False."""
    status = machine["status"]
    v1beta2 = machine["apiVersion"].endswith("/v1beta2")
    current = status["conditions"] if v1beta2 else status["v1beta2"]["conditions"]
    legacy = status["deprecated"]["v1beta1"]["conditions"] if v1beta2 else status["conditions"]
    current.append(
        {
            "type": "HealthCheckSucceeded",
            "status": "False",
            "reason": reason,
            "message": f"Health check failed:\n  * {message}",
            "lastTransitionTime": since,
            "observedGeneration": 1,
        }
    )
    legacy.append(
        {
            "type": "HealthCheckSucceeded",
            "status": "False",
            "reason": reason,
            "severity": "Warning",
            "message": message,
            "lastTransitionTime": since,
        }
    )
    if waiting:
        current.append(
            {
                "type": "OwnerRemediated",
                "status": "False",
                "reason": "WaitingForRemediation",
                "message": "Waiting for remediation",
                "lastTransitionTime": since,
                "observedGeneration": 1,
            }
        )
        legacy.append(
            {
                "type": "OwnerRemediated",
                "status": "False",
                "reason": "WaitingForRemediation",
                "severity": "Warning",
                "lastTransitionTime": since,
            }
        )


def health_checked(
    pool: str, cluster: str, marked: dict[str, str], *, template: bool = False
) -> Any:
    """A scenario change: a MachineHealthCheck selecting the pool's Machines by pool-name label,
    and the Machines in `marked` failed it at the given times (waiting for remediation by the
    owner, unless the check hands it to an external remediation template)."""

    def change(objects: list[Obj]) -> None:
        mp = next(
            o for o in objects if o["kind"] == "MachinePool" and o["metadata"]["name"] == pool
        )
        generation = mp["apiVersion"].rpartition("/")[2]
        ns = mp["metadata"]["namespace"]
        ref = ("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3RemediationTemplate", "reboot")
        selector = {"matchLabels": {f"{CAPI}/pool-name": pool}}
        check = health_check(
            generation,
            ns,
            f"{pool}-unhealthy",
            cluster,
            selector,
            template=ref if template else None,
        )
        objects.append(check)
        for obj in [o for o in objects if o["kind"] == "Machine"]:
            name = obj["metadata"]["name"]
            if name in marked:
                mark_unhealthy(obj, marked[name], waiting=not template)
                objects.append(marked_event(ns, name, check["metadata"]["name"], marked[name]))

    return change


def marked_event(ns: str, machine: str, check: str, when: str) -> Obj:
    """The Event the controller records on a Machine each time it marks it (v1.14:
    EventMachineMarkedUnhealthy, from machinehealthcheck-controller)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{machine}.markedunhealthy", "namespace": ns},
        "involvedObject": {
            "apiVersion": f"{CAPI}/v1beta2",
            "kind": "Machine",
            "name": machine,
            "namespace": ns,
        },
        "type": "Normal",
        "reason": "MachineMarkedUnhealthy",
        "message": f"Machine {ns}/{machine} has been marked as unhealthy by {ns}/{check}",
        "count": 1,
        "firstTimestamp": when,
        "lastTimestamp": when,
        "source": {"component": "machinehealthcheck-controller"},
    }
