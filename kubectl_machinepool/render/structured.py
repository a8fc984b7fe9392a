"""JSON and YAML as kubectl prints them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.diagnostics.ignoring import Ignored
from kubectl_machinepool.model.cloud import (
    InstanceCloud,
    PoolCloud,
    clouds_by_instance,
    instance_key,
)
from kubectl_machinepool.model.conditions import Condition, Conditions
from kubectl_machinepool.model.description import ClusterDescription, Description, PoolDescription
from kubectl_machinepool.model.healthchecks import PoolHealthCheck, UnhealthyCondition
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.outsiders import OutsideNode, OutsideNodes
from kubectl_machinepool.model.pool import MachinePool, TemplateRef
from kubectl_machinepool.model.states import MachineState, NodeState, ObjectState
from kubectl_machinepool.model.zones import PoolZones
from kubectl_machinepool.render.events import event_doc
from kubectl_machinepool.render.owners import owners_document
from kubectl_machinepool.render.streams import Stream, write_json, write_yaml

SCHEMA_VERSION = "kubectl-machinepool/v1alpha1"


def write_document(document: Any, output_format: str, write: Callable[[str], None]) -> None:
    """-o json or -o yaml, in chunks (see render/streams.py)."""
    (write_json if output_format == "json" else write_yaml)(document, write)


def document_text(document: Any, output_format: str) -> str:
    """-o json or -o yaml, whole: for a view drawn again on each change."""
    parts: list[str] = []
    write_document(document, output_format, parts.append)
    return "".join(parts)


def to_json(document: Any) -> str:
    return document_text(document, "json")


def to_yaml(document: Any) -> str:
    return document_text(document, "yaml")


# -- list: a summary per pool -----------------------------------------------------------------


def _ref_dict(ref: TemplateRef | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {"apiGroup": ref.api_group, "kind": ref.kind, "name": ref.name}


def pool_summary(pool: MachinePool) -> dict[str, Any]:
    infra = _ref_dict(pool.infrastructure_ref)
    if infra is not None:
        infra["machineKind"] = pool.machine_kind
    return {
        "namespace": pool.namespace,
        "name": pool.name,
        "uid": pool.uid,
        "cluster": pool.cluster,
        "apiVersion": pool.api_version,
        "replicas": {
            "desired": pool.desired,
            "current": pool.current,
            "ready": pool.ready,
            "available": pool.available,
        },
        "phase": pool.phase or None,
        "version": pool.version,
        "infrastructure": infra,
        "machinePoolMachines": pool.has_machines,
        "bootstrap": _ref_dict(pool.bootstrap_ref),
        "failureDomains": list(pool.failure_domains),
        "creationTimestamp": format_time(pool.created),
        "deletionTimestamp": format_time(pool.deleting_since),
        # Only in a fleet view (--contexts), where it says which cluster the pool is in.
        **({"context": pool.context} if pool.context is not None else {}),
    }


# -- describe ---------------------------------------------------------------------------------
# The shape is a contract for scripts (docs/describe.md, schemas/describe.json).


def condition_doc(cond: Condition | None) -> dict[str, Any] | None:
    if cond is None:
        return None
    return {
        "type": cond.type,
        "status": cond.status,
        "reason": cond.reason or None,
        "message": cond.message or None,
        "lastTransitionTime": format_time(cond.since),
        "severity": cond.severity or None,
        "generation": cond.generation,
    }


def _conditions(conditions: Conditions) -> list[dict[str, Any] | None]:
    return [condition_doc(c) for c in conditions.all]


def object_doc(state: ObjectState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    return {
        "kind": state.kind,
        "apiVersion": state.api_version,
        "namespace": state.namespace,
        "name": state.name,
        "uid": state.uid,
        "ready": state.ready,
        "phase": state.phase,
        "failure": state.failure,
        "creationTimestamp": format_time(state.created),
        "deletionTimestamp": format_time(state.deleting_since),
        "conditions": _conditions(state.conditions),
    }


def _machine(machine: MachineState | None) -> dict[str, Any] | None:
    if machine is None:
        return None
    return {
        **(object_doc(machine.object) or {}),
        "providerID": machine.provider_id,
        "version": machine.version,
        "nodeName": machine.node_name,
    }


def _node(node: NodeState | None) -> dict[str, Any] | None:
    if node is None:
        return None
    return {
        "name": node.name,
        "uid": node.uid,
        "providerID": node.provider_id,
        "ready": node.ready,
        "kubeletVersion": node.kubelet_version,
        "unschedulable": node.unschedulable,
        "taints": list(node.taints),
        "creationTimestamp": format_time(node.created),
        "deletionTimestamp": format_time(node.deleting_since),
        "conditions": _conditions(node.conditions),
    }


def _instance_cloud(cloud: InstanceCloud | None) -> dict[str, Any] | None:
    if cloud is None:
        return None
    return {
        "id": cloud.id,
        "idSource": cloud.id_source,
        "zone": cloud.zone,
        "zoneSource": cloud.zone_source,
        "joined": cloud.joined,
        "inspect": cloud.inspect,
        "replace": cloud.replace,
    }


def _instance(instance: Instance, cloud: InstanceCloud | None) -> dict[str, Any]:
    return {
        "providerID": instance.provider_id,
        "inProviderIDList": instance.listed,
        "healthy": instance.healthy,
        "problems": list(instance.problems),
        "machine": _machine(instance.machine),
        "infraMachine": object_doc(instance.infra_machine),
        "node": _node(instance.node),
        "cloud": _instance_cloud(cloud),
    }


def _cloud(cloud: PoolCloud | None) -> dict[str, Any] | None:
    if cloud is None:
        return None
    return {
        "cloud": cloud.cloud,
        "kind": cloud.kind,
        "name": cloud.name,
        "poolID": cloud.pool_id,
        "instanceType": cloud.instance_type,
        "images": [{"label": label, "value": value} for label, value in cloud.images],
    }


def _number(value: float | None) -> float | int | None:
    return int(value) if value is not None and float(value).is_integer() else value


def _unhealthy_if(conditions: tuple[UnhealthyCondition, ...]) -> list[dict[str, Any]]:
    return [
        {"type": c.type, "status": c.status, "timeoutSeconds": _number(c.timeout_seconds)}
        for c in conditions
    ]


def _health_check(found: PoolHealthCheck) -> dict[str, Any]:
    check, template = found.check, found.check.template
    return {
        "namespace": check.namespace,
        "name": check.name,
        "uid": check.uid,
        "apiVersion": check.api_version,
        "cluster": check.cluster,
        "machines": list(found.machines),
        "templateMatches": found.template_matches,
        "checks": {
            "nodeStartupTimeoutSeconds": _number(check.node_startup_seconds),
            "unhealthyNodeConditions": _unhealthy_if(check.node_conditions),
            "unhealthyMachineConditions": _unhealthy_if(check.machine_conditions),
        },
        "remediation": {
            "unhealthyLessThanOrEqualTo": check.max_unhealthy,
            "unhealthyInRange": check.unhealthy_range,
            "templateRef": None
            if template is None
            else {"apiVersion": template.api_version, "kind": template.kind, "name": template.name},
        },
        "status": {
            "expectedMachines": check.expected_machines,
            "currentHealthy": check.current_healthy,
            "remediationsAllowed": check.remediations_allowed,
            "remediationAllowed": condition_doc(check.remediation_allowed),
        },
        "marked": [
            {
                "machine": m.machine,
                "healthCheckSucceeded": condition_doc(m.health),
                "ownerRemediated": condition_doc(m.owner_remediated),
                "deleting": m.deleting,
            }
            for m in found.marked
        ],
    }


def _zones(zones: PoolZones | None) -> dict[str, Any] | None:
    if zones is None:
        return None
    return {
        "expected": None if zones.expected is None else list(zones.expected),
        "source": zones.source,
        "perZone": [
            {"zone": c.zone, "nodes": c.nodes, "ready": c.ready, "expected": c.expected}
            for c in zones.counts
        ],
        "unlabelled": {"nodes": zones.unlabelled, "ready": zones.unlabelled_ready},
        "skew": zones.skew,
    }


def _pool(pool: PoolDescription) -> dict[str, Any]:
    # Instances are made one at a time as they are written: thousands of them are most of it.
    """list's summary of the pool (the same keys, so scripts can use either), plus the detail."""
    mp, counts, verdict = pool.pool, pool.counts, pool.deletion
    low, high = mp.autoscaler_bounds
    clouds, keys = clouds_by_instance(pool.cloud), map(instance_key, pool.instances)
    return {
        **pool_summary(mp),
        "paused": pool.paused_by is not None,
        "pausedBy": pool.paused_by,
        "failure": mp.failure,
        "replicasManagedBy": mp.replicas_managed_by,
        "autoscaler": None if low is None and high is None else {"min": low, "max": high},
        "conditions": _conditions(mp.conditions),
        "counts": {
            "desired": counts.desired,
            "providerReported": counts.provider_reported,
            "statusReady": counts.status_ready,
            "statusAvailable": counts.status_available,
            "providerIDs": counts.provider_ids,
            "nodesMatched": counts.nodes_matched,
            "nodesReady": counts.nodes_ready,
            "nodesAvailable": counts.nodes_available,
            "machines": counts.machines,
        },
        "kubeletVersions": [{"version": v, "nodes": n} for v, n in pool.kubelet_versions],
        "versionTargets": [
            {
                "kind": t.kind,
                "field": t.field,
                "value": t.value,
                "kubernetesVersion": t.version,
                "deployed": t.deployed,
            }
            for t in pool.version_targets
        ],
        "events": [event_doc(e) for e in pool.events],
        "zones": _zones(pool.zones),
        "owners": owners_document(pool.pool),
        "healthChecks": None
        if pool.health_checks is None
        else [_health_check(c) for c in pool.health_checks],
        "bootstrapConfig": object_doc(pool.bootstrap),
        "infrastructurePool": object_doc(pool.infra),
        "deletion": {
            "verdict": verdict.verdict.value,
            "reason": verdict.reason,
            "instead": verdict.instead,
            "honoursDeleteAnnotation": verdict.honours_delete_annotation,
            "scaleDown": verdict.scale_down,
        },
        "cloud": _cloud(pool.cloud),
        "instances": Stream(map(_instance, pool.instances, map(clouds.get, keys))),
    }


def _outside_node(outside: OutsideNode) -> dict[str, Any]:
    node, likely = outside.node, outside.likely_pools
    return {
        "name": node.name,
        "uid": node.uid,
        "providerID": node.provider_id,
        "ready": node.ready,
        "reasons": list(outside.reasons),
        # One name when the evidence points at one pool; every candidate in likelyPools.
        "likelyPool": likely[0] if len(likely) == 1 else None,
        "likelyPools": list(likely),
        "uninitializedTaintSeconds": None
        if outside.tainted_for is None
        else int(outside.tainted_for.total_seconds()),
    }


def _outside(outside: OutsideNodes | None) -> dict[str, Any] | None:
    if outside is None:
        return None
    return {
        "controlPlane": outside.control_plane,
        "machineDeployments": outside.machine_deployments,
        "others": len(outside.listed),
        "nodes": [_outside_node(n) for n in outside.listed],
    }


def _cluster(cluster: ClusterDescription) -> dict[str, Any]:
    state = object_doc(cluster.cluster)
    return {
        "namespace": cluster.namespace,
        "name": cluster.name,
        "found": None
        if cluster.cluster is None and cluster.cluster_unread
        else cluster.cluster is not None,
        "paused": cluster.paused,
        "phase": state["phase"] if state else None,
        "conditions": state["conditions"] if state else [],
        "nodes": {"read": cluster.nodes_read, "note": cluster.nodes_note},
        "machinePools": [_pool(p) for p in cluster.pools],
        "nodesOutsidePools": _outside(cluster.outside),
    }


def finding_doc(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "rule": finding.rule,
        "severity": finding.severity.label,
        "namespace": finding.namespace,
        "cluster": finding.cluster,
        "machinePool": finding.pool or None,
        "subject": finding.subject,
        "message": finding.message,
        "action": finding.action,
        "refs": list(finding.refs),
        "instances": list(finding.instances),
        "objects": [{"kind": o.kind, "name": o.name, "uid": o.uid} for o in finding.objects],
        "events": [event_doc(e) for e in finding.events],
    }


def ignored_doc(ignored: Ignored) -> dict[str, Any]:
    """The findings --ignore and the config file left out: how many, and who asked."""
    return {"count": ignored.count, "sources": list(ignored.sources)}


def describe_stream(
    description: Description, findings: Sequence[Finding] = (), ignored: Ignored | None = None
) -> dict[str, Any]:
    """describe -o json/yaml, with each pool's instances a Stream: for write_document."""
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolDescription",
        "now": format_time(description.now),
        "notes": list(description.notes),
        "clusters": [_cluster(c) for c in description.clusters],
        "findings": [finding_doc(f) for f in findings],
        "ignoredFindings": ignored_doc(ignored or Ignored()),
    }
