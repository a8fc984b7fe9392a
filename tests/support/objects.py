"""Builders for objects shaped like what Cluster API and its providers really write.

They return plain dicts (as `kubectl get -o yaml` shows them), so every test goes through the
real model builder, and the same dicts can be created on the test API server.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

CAPI = "cluster.x-k8s.io"
INFRA = "infrastructure.cluster.x-k8s.io"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io"
T0 = "2026-11-20T09:00:00Z"
# The clock rendered fixtures are read at: the objects here are dated relative to it.
NOW = datetime(2026, 11, 29, 15, 0, 0, tzinfo=UTC)


def meta(name: str, namespace: str, cluster: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "namespace": namespace, **extra}
    if cluster:
        out.setdefault("labels", {})[f"{CAPI}/cluster-name"] = cluster
    return out


def _ref(generation: str, group: str, version: str, kind: str, name: str) -> dict[str, str]:
    if generation == "v1beta2":
        return {"apiGroup": group, "kind": kind, "name": name}
    return {"apiVersion": f"{group}/{version}", "kind": kind, "name": name}


def machine_pool(
    generation: str,
    name: str,
    namespace: str,
    cluster: str,
    *,
    infra_kind: str,
    infra_version: str = "v1beta2",
    infra_group: str = INFRA,
    bootstrap_kind: str | None = "KubeadmConfig",
    replicas: int | None = 3,
    current: int = 3,
    ready_nodes: int = 3,
    available_nodes: int | None = None,
    with_machines: bool = False,
    phase: str = "Running",
    version: str = "v1.33.4",
    provider_ids: list[str] | None = None,
    failure_domains: list[str] | None = None,
    created: str = T0,
) -> dict[str, Any]:
    """A MachinePool as the CAPI controller leaves it, in the v1beta2 or v1beta1 shape.

    On v1beta2 the top-level ready/available counters follow upstream's setReplicas: Machine
    counts with MachinePool Machines, otherwise copies of status.replicas; the Node-based counts
    sit under status.deprecated.v1beta1.
    """
    available = ready_nodes if available_nodes is None else available_nodes
    provider_ids = provider_ids or []
    spec_tpl: dict[str, Any] = {
        "clusterName": cluster,
        "version": version,
        "infrastructureRef": _ref(generation, infra_group, infra_version, infra_kind, name),
        "bootstrap": {"dataSecretName": "" if bootstrap_kind is None else f"{name}-bootstrap"},
    }
    if bootstrap_kind:
        spec_tpl["bootstrap"]["configRef"] = _ref(
            generation, BOOTSTRAP, generation, bootstrap_kind, name
        )
    spec: dict[str, Any] = {"clusterName": cluster, "template": {"spec": spec_tpl}}
    if replicas is not None:
        spec["replicas"] = replicas
    if provider_ids:
        spec["providerIDList"] = provider_ids
    if failure_domains:
        spec["failureDomains"] = failure_domains
    node_refs = [
        {"apiVersion": "v1", "kind": "Node", "name": f"{name}-node-{i}", "uid": f"0000-{i}"}
        for i in range(min(ready_nodes, len(provider_ids)))
    ]
    v1beta1_conditions = [
        {
            "type": "Ready",
            "status": "True" if ready_nodes == replicas else "False",
            "lastTransitionTime": T0,
        },
        {"type": "BootstrapReady", "status": "True", "lastTransitionTime": T0},
        {"type": "InfrastructureReady", "status": "True", "lastTransitionTime": T0},
        {
            "type": "ReplicasReady",
            "status": "True" if ready_nodes == replicas else "False",
            "lastTransitionTime": T0,
        },
    ]
    for cond in v1beta1_conditions:
        if cond["status"] == "False":
            cond.update(severity="Info", reason="WaitingForReplicasReady")
    status: dict[str, Any] = {"phase": phase, "replicas": current, "observedGeneration": 1}
    if node_refs:
        status["nodeRefs"] = node_refs
    if generation == "v1beta2":
        status.update(
            readyReplicas=ready_nodes if with_machines else current,
            availableReplicas=available if with_machines else current,
            upToDateReplicas=current if with_machines else (replicas or 0),
            initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
            conditions=[
                {
                    "type": "Paused",
                    "status": "False",
                    "reason": "NotPaused",
                    "message": "",
                    "lastTransitionTime": T0,
                    "observedGeneration": 1,
                }
            ],
            deprecated={
                "v1beta1": {
                    "readyReplicas": ready_nodes,
                    "availableReplicas": available,
                    "unavailableReplicas": max(current - available, 0),
                    "conditions": v1beta1_conditions,
                }
            },
        )
    else:
        status.update(
            readyReplicas=ready_nodes,
            availableReplicas=available,
            unavailableReplicas=max(current - available, 0),
            bootstrapReady=True,
            infrastructureReady=True,
            conditions=v1beta1_conditions,
        )
    return {
        "apiVersion": f"{CAPI}/{generation}",
        "kind": "MachinePool",
        "metadata": meta(
            name,
            namespace,
            cluster,
            creationTimestamp=created,
            finalizers=["machinepool.cluster.x-k8s.io"],
        ),
        "spec": spec,
        "status": status,
    }


def infra_pool(
    kind: str,
    name: str,
    namespace: str,
    cluster: str,
    *,
    version: str = "v1beta2",
    group: str = INFRA,
    replicas: int = 3,
    provider_ids: list[str] | None = None,
    machine_kind: str | None = None,
    spec: dict[str, Any] | None = None,
    extra_status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An InfraMachinePool with the v1beta1-contract status most providers still report."""
    status: dict[str, Any] = {
        "ready": True,
        "replicas": replicas,
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T0}],
        **(extra_status or {}),
    }
    if machine_kind:
        status["infrastructureMachineKind"] = machine_kind
    return {
        "apiVersion": f"{group}/{version}",
        "kind": kind,
        "metadata": meta(name, namespace, cluster, creationTimestamp=T0),
        "spec": {**(spec or {}), "providerIDList": list(provider_ids or [])},
        "status": status,
    }


def aws_ids(count: int, zone: str = "eu-west-1a") -> list[str]:
    return [f"aws:///{zone}/i-0{i:016x}" for i in range(0x3A5F10, 0x3A5F10 + count)]


def azure_ids(count: int, vmss: str) -> list[str]:
    sub = "6f1f5d1c-8d0e-4b8e-9a7e-2f3c1e0b7a11"
    return [
        f"azure:///subscriptions/{sub}/resourceGroups/prod-rg/providers/Microsoft.Compute/"
        f"virtualMachineScaleSets/{vmss}/virtualMachines/{i}"
        for i in range(count)
    ]


def gce_ids(count: int, pool: str) -> list[str]:
    return [f"gce://prod-project/europe-west4-a/gke-{pool}-5f2a{i:02d}" for i in range(count)]


def list_scenario(generation: str, namespace: str) -> list[dict[str, Any]]:
    """Pools of four providers, as an operator would see them in one management cluster.

    `asg-workers` is the case the Node-based counters exist for: the ASG reports 3 instances (so
    the v1beta2 readyReplicas says 3) while only 2 Nodes are Ready. `pending-pool` points at an
    infra pool that does not exist.
    """
    aws = aws_ids(3)
    azure = azure_ids(2, "prod-vmss")
    gke = gce_ids(4, "default")
    return [
        machine_pool(
            generation, "asg-workers", namespace, "prod",
            infra_kind="AWSMachinePool", replicas=3, current=3, ready_nodes=2,
            phase="ScalingUp", provider_ids=aws, failure_domains=["eu-west-1a", "eu-west-1b"],
        ),
        infra_pool("AWSMachinePool", "asg-workers", namespace, "prod", provider_ids=aws),
        machine_pool(
            generation, "vmss-workers", namespace, "prod",
            infra_kind="AzureMachinePool", infra_version="v1beta1", replicas=2, current=2,
            ready_nodes=2, with_machines=True, provider_ids=azure, failure_domains=["1", "2", "3"],
            created="2026-11-27T14:30:00Z",
        ),
        infra_pool(
            "AzureMachinePool", "vmss-workers", namespace, "prod", version="v1beta1",
            replicas=2, provider_ids=azure, machine_kind="AzureMachinePoolMachine",
        ),
        machine_pool(
            generation, "gke-default", namespace, "prod",
            infra_kind="GCPManagedMachinePool", infra_version="v1beta1", bootstrap_kind=None,
            replicas=4, current=4, ready_nodes=4, provider_ids=gke, version="v1.32.9",
            created="2026-09-01T08:00:00Z",
        ),
        infra_pool(
            "GCPManagedMachinePool", "gke-default", namespace, "prod", version="v1beta1",
            replicas=4, provider_ids=gke, machine_kind="GCPManagedMachinePool",
        ),
        machine_pool(
            generation, "pending-pool", namespace, "prod",
            infra_kind="AWSMachinePool", replicas=1, current=0, ready_nodes=0, phase="Pending",
            created="2026-11-29T14:58:00Z",
        ),
    ]  # fmt: skip
