"""One realistic management cluster + workload Nodes per provider shape, in both CAPI generations.

Objects are shaped after what each controller writes (Cluster API's MachinePool controller, the providers' infra pool controllers): the MachinePool
controller's status and Node annotations, the provider's infra pool status and conditions,
MachinePool Machines with their infra machines. `salt` makes Node names and providerIDs unique
when several tests share one API server as "workload cluster"; goldens use no salt.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubectl_machinepool.model.revisions import ANNOTATION, VERSION, Change, Revision, encode

from .objects import BOOTSTRAP, CAPI, INFRA, T0
from .ownerobjects import owner_object

CONTROLPLANE = "controlplane.cluster.x-k8s.io"
RECENT = "2026-11-29T14:41:00Z"  # 19 minutes before NOW
# NOW, when the examples were dumped: a kubelet that posts its status has just beaten.
HEARTBEAT = "2026-11-29T15:00:00Z"
Obj = dict[str, Any]


def uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}/{namespace}/{name}"))


def _meta(kind: str, ns: str, name: str, cluster: str, **extra: Any) -> Obj:
    labels = {f"{CAPI}/cluster-name": cluster, **extra.pop("labels", {})}
    return {
        "name": name,
        "namespace": ns,
        "uid": uid(kind, ns, name),
        "labels": labels,
        "creationTimestamp": T0,
        **extra,
    }


def _owner(kind: str, api_version: str, ns: str, name: str, controller: bool = True) -> Obj:
    ref = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(kind, ns, name)}
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def _ref(generation: str, group: str, version: str, kind: str, name: str) -> Obj:
    if generation == "v1beta2":
        return {"apiGroup": group, "kind": kind, "name": name}
    return {"apiVersion": f"{group}/{version}", "kind": kind, "name": name}


def v1beta1_condition(
    kind: str,
    status: str = "True",
    reason: str = "",
    message: str = "",
    severity: str = "",
    when: str = T0,
) -> Obj:
    cond: Obj = {"type": kind, "status": status, "lastTransitionTime": when}
    if status != "True":
        cond.update(severity=severity or "Info", reason=reason)
        if message:
            cond["message"] = message
    return cond


def condition(
    kind: str, status: str = "True", reason: str | None = None, message: str = "", when: str = T0
) -> Obj:
    return {
        "type": kind,
        "status": status,
        "reason": reason or (kind if status == "True" else f"Not{kind}"),
        "message": message,
        "lastTransitionTime": when,
        "observedGeneration": 1,
    }


# -- Cluster API objects, in either generation --------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A scenario's provider kinds."""

    cluster_infra: tuple[str, str, str]  # group, version, kind
    control_plane: tuple[str, str, str]


def cluster(generation: str, ns: str, name: str, shape: Shape) -> Obj:
    infra_group, infra_version, infra_kind = shape.cluster_infra
    cp_group, cp_version, cp_kind = shape.control_plane
    available = condition("Available", message="")
    spec: Obj = {
        "controlPlaneEndpoint": {"host": f"{name}-api.example.internal", "port": 6443},
        "infrastructureRef": _ref(generation, infra_group, infra_version, infra_kind, name),
        "controlPlaneRef": _ref(generation, cp_group, cp_version, cp_kind, f"{name}-control-plane"),
        "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
    }
    if generation == "v1beta2":
        status: Obj = {
            "phase": "Provisioned",
            "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
            "conditions": [available, condition("Paused", "False", "NotPaused")],
            "deprecated": {"v1beta1": {"conditions": [v1beta1_condition("Ready")]}},
            "observedGeneration": 1,
        }
    else:
        status = {
            "phase": "Provisioned",
            "infrastructureReady": True,
            "controlPlaneReady": True,
            "conditions": [v1beta1_condition("Ready")],
            "v1beta2": {"conditions": [available, condition("Paused", "False", "NotPaused")]},
            "observedGeneration": 1,
        }
    meta = _meta("Cluster", ns, name, name)
    meta["labels"].pop(f"{CAPI}/cluster-name")
    meta["finalizers"] = ["cluster.cluster.x-k8s.io"]
    return {
        "apiVersion": f"{CAPI}/{generation}",
        "kind": "Cluster",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


@dataclass(frozen=True)
class PoolSpec:
    name: str
    infra: tuple[str, str, str]  # group, version, kind
    bootstrap: tuple[str, str, str] | None
    desired: int
    provider_ids: list[str]
    ready_nodes: int
    phase: str = "Running"
    version: str = "v1.33.4"
    with_machines: bool = False
    machines_ready: int = 0
    machines_available: int = 0
    failure_domains: tuple[str, ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()
    min_ready_seconds: int = 0


def with_template_metadata(pool: Obj) -> Obj:
    pool["spec"]["template"]["metadata"] = json.loads(json.dumps(TEMPLATE_METADATA))
    return pool


def machine_pool(generation: str, ns: str, cluster_name: str, p: PoolSpec) -> Obj:
    """A MachinePool with the status the MachinePool controller computes from its inputs."""
    infra_group, infra_version, infra_kind = p.infra
    current = len(p.provider_ids)
    all_ready = p.ready_nodes == current and current == p.desired
    bootstrap: Obj = {"dataSecretName": "" if p.bootstrap is None else f"{p.name}-bootstrap-data"}
    if p.bootstrap is not None:
        b_group, b_version, b_kind = p.bootstrap
        bootstrap["configRef"] = _ref(generation, b_group, b_version, b_kind, p.name)
    template_spec: Obj = {
        "clusterName": cluster_name,
        "version": p.version,
        "bootstrap": bootstrap,
        "infrastructureRef": _ref(generation, infra_group, infra_version, infra_kind, p.name),
    }
    spec: Obj = {
        "clusterName": cluster_name,
        "replicas": p.desired,
        "template": {"spec": template_spec},
    }
    if p.min_ready_seconds:
        if generation == "v1beta2":
            template_spec["minReadySeconds"] = p.min_ready_seconds
        else:
            spec["minReadySeconds"] = p.min_ready_seconds
    if p.provider_ids:
        spec["providerIDList"] = list(p.provider_ids)
    if p.failure_domains:
        spec["failureDomains"] = list(p.failure_domains)
    legacy_conditions = [
        v1beta1_condition("Ready", "True" if all_ready else "False", "WaitingForReplicasReady"),
        v1beta1_condition("BootstrapReady"),
        v1beta1_condition("InfrastructureReady"),
        v1beta1_condition(
            "ReplicasReady", "True" if all_ready else "False", "WaitingForReplicasReady"
        ),
    ]
    paused = [condition("Paused", "False", "NotPaused")]
    status: Obj = {"phase": p.phase, "replicas": current, "observedGeneration": 1}
    if generation == "v1beta2":
        status.update(
            readyReplicas=p.machines_ready if p.with_machines else current,
            availableReplicas=p.machines_available if p.with_machines else current,
            upToDateReplicas=current if p.with_machines else p.desired,
            initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
            conditions=paused,
            deprecated={
                "v1beta1": {
                    "readyReplicas": p.ready_nodes,
                    "availableReplicas": p.ready_nodes,
                    "unavailableReplicas": current - p.ready_nodes,
                    "conditions": legacy_conditions,
                }
            },
        )
    else:
        status.update(
            readyReplicas=p.ready_nodes,
            availableReplicas=p.ready_nodes,
            unavailableReplicas=current - p.ready_nodes,
            bootstrapReady=True,
            infrastructureReady=True,
            conditions=legacy_conditions,
            v1beta2={"conditions": paused},
        )
    meta = _meta(
        "MachinePool", ns, p.name, cluster_name, finalizers=["machinepool.cluster.x-k8s.io"],
        generation=1,
    )  # fmt: skip
    meta["ownerReferences"] = [
        _owner("Cluster", f"{CAPI}/{generation}", ns, cluster_name, controller=False)
    ]
    if p.annotations:
        meta["annotations"] = dict(p.annotations)
    return {
        "apiVersion": f"{CAPI}/{generation}",
        "kind": "MachinePool",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def machine(
    generation: str,
    ns: str,
    cluster_name: str,
    pool: str,
    name: str,
    infra: tuple[str, str, str],
    provider_id: str,
    node: str,
    kubelet: str,
    ready: bool = True,
    ready_reason: str = "",
    ready_message: str = "",
) -> Obj:
    """A MachinePool Machine as core server-side-applies it (name = the infra machine's)."""
    group, version, kind = infra
    when = T0 if ready else RECENT
    ready_cond = condition(
        "Ready",
        "True" if ready else "False",
        None if ready else ready_reason or "NotReady",
        ready_message,
        when,
    )
    current = [
        condition(
            "Available", "True" if ready else "False", None if ready else "NotReady", when=when
        ),
        ready_cond,
        condition("UpToDate", reason="UpToDate"),
        condition("BootstrapConfigReady", reason="DataSecretProvided"),
        condition("InfrastructureReady", reason="Ready"),
        condition(
            "NodeReady",
            "True" if ready else "False",
            "NodeReady" if ready else "NodeNotReady",
            when=when,
        ),
        condition(
            "NodeHealthy",
            "True" if ready else "False",
            "NodeHealthy" if ready else "NodeNotHealthy",
            when=when,
        ),
        condition("Deleting", "False", "NotDeleting"),
        condition("Paused", "False", "NotPaused"),
    ]
    legacy = [
        v1beta1_condition(
            "Ready",
            "True" if ready else "False",
            "NodeConditionsFailed",
            severity="Warning",
            when=when,
        ),
        v1beta1_condition("InfrastructureReady"),
        v1beta1_condition(
            "NodeHealthy",
            "True" if ready else "False",
            "NodeConditionsFailed",
            severity="Warning",
            when=when,
        ),
    ]
    spec: Obj = {
        "clusterName": cluster_name,
        "bootstrap": {"dataSecretName": ""},
        "infrastructureRef": _ref(generation, group, version, kind, name),
        "providerID": provider_id,
        "version": kubelet,
    }
    node_info = system_info(kubelet)  # the Machine controller copies it from the Node
    if generation == "v1beta2":
        status: Obj = {
            "phase": "Running",
            "nodeRef": {"name": node},
            "nodeInfo": node_info,
            "initialization": {
                "infrastructureProvisioned": True,
                "bootstrapDataSecretCreated": True,
            },
            "conditions": current,
            "deprecated": {"v1beta1": {"conditions": legacy}},
            "observedGeneration": 1,
        }
    else:
        spec["infrastructureRef"]["namespace"] = ns
        status = {
            "phase": "Running",
            "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": node},
            "nodeInfo": node_info,
            "infrastructureReady": True,
            "bootstrapReady": True,
            "conditions": legacy,
            "v1beta2": {"conditions": current},
            "observedGeneration": 1,
        }
    labels = {f"{CAPI}/pool-name": pool}
    meta = _meta(
        "Machine", ns, name, cluster_name, labels=labels, finalizers=["machine.cluster.x-k8s.io"]
    )
    meta["ownerReferences"] = [_owner("MachinePool", f"{CAPI}/{generation}", ns, pool)]
    return {
        "apiVersion": f"{CAPI}/{generation}",
        "kind": "Machine",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def infra_machine(
    generation: str,
    ns: str,
    cluster_name: str,
    pool: str,
    pool_kind: tuple[str, str, str],
    name: str,
    kind: str,
    provider_id: str,
    spec: Obj,
    status: Obj,
    labels: dict[str, str] | None = None,
) -> Obj:
    """A provider's per-instance object, owned by its infra pool and (controller) its Machine."""
    group, version, pool_kind_name = pool_kind
    meta = _meta(kind, ns, name, cluster_name, labels={f"{CAPI}/pool-name": pool, **(labels or {})})
    meta["ownerReferences"] = [
        _owner(pool_kind_name, f"{group}/{version}", ns, pool, controller=False),
        _owner("Machine", f"{CAPI}/{generation}", ns, name),
    ]
    return {
        "apiVersion": f"{group}/{version}",
        "kind": kind,
        "metadata": meta,
        "spec": {"providerID": provider_id, **spec},
        "status": status,
    }


def infra_pool(
    generation: str,
    group_version_kind: tuple[str, str, str],
    ns: str,
    cluster_name: str,
    name: str,
    spec: Obj,
    status: Obj,
) -> Obj:
    group, version, kind = group_version_kind
    meta = _meta(kind, ns, name, cluster_name)
    meta["ownerReferences"] = [_owner("MachinePool", f"{CAPI}/{generation}", ns, name)]
    return {
        "apiVersion": f"{group}/{version}",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def kubeadm_config(generation: str, ns: str, cluster_name: str, name: str) -> Obj:
    meta = _meta("KubeadmConfig", ns, name, cluster_name)
    meta["ownerReferences"] = [_owner("MachinePool", f"{CAPI}/{generation}", ns, name)]
    spec = {
        "joinConfiguration": {
            "nodeRegistration": {
                "kubeletExtraArgs": [{"name": "cloud-provider", "value": "external"}]
            }
        }
    }
    if generation == "v1beta2":
        status: Obj = {
            "initialization": {"dataSecretCreated": True},
            "dataSecretName": f"{name}-bootstrap-data",
            "conditions": [
                condition("Ready"),
                condition("DataSecretAvailable", reason="Available"),
            ],
            "deprecated": {
                "v1beta1": {
                    "conditions": [
                        v1beta1_condition("Ready"),
                        v1beta1_condition("DataSecretAvailable"),
                    ]
                }
            },
            "observedGeneration": 1,
        }
    else:
        spec = {
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": {"cloud-provider": "external"}}
            }
        }
        status = {
            "ready": True,
            "dataSecretName": f"{name}-bootstrap-data",
            "conditions": [v1beta1_condition("Ready"), v1beta1_condition("DataSecretAvailable")],
            # CAPI 1.9 and 1.10 already report the new conditions under status.v1beta2.
            "v1beta2": {
                "conditions": [
                    condition("Ready"),
                    condition("DataSecretAvailable", reason="Available"),
                ]
            },
        }
    return {
        "apiVersion": f"{BOOTSTRAP}/{generation}",
        "kind": "KubeadmConfig",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def system_info(kubelet: str) -> Obj:
    return {
        "kubeletVersion": kubelet,
        "kubeProxyVersion": "",
        "operatingSystem": "linux",
        "architecture": "amd64",
        "containerRuntimeVersion": "containerd://2.1.4",
        "osImage": "Ubuntu 24.04.3 LTS",
        "kernelVersion": "6.8.0-1040",
        "machineID": "ec2d3e1f5a7b4c9d8e6f0a1b2c3d4e5f",
        "systemUUID": "ec2d3e1f-5a7b-4c9d-8e6f-0a1b2c3d4e5f",
        "bootID": "5b0c6f0e-3f8a-4f0f-9a43-0d4c2e7b9a11",
    }


def node(
    name: str,
    provider_id: str,
    kubelet: str,
    ns: str,
    cluster_name: str,
    pool: str,
    ready: str = "True",
    since: str = T0,
    machine_name: str | None = None,
    unschedulable: bool = False,
    zone: str | None = None,
) -> Obj:
    """A workload Node after the MachinePool controller matched it (its annotations are on);
    zone: the topology.kubernetes.io/zone label the cloud provider's node controller sets."""
    annotations = {
        f"{CAPI}/cluster-name": cluster_name,
        f"{CAPI}/cluster-namespace": ns,
        f"{CAPI}/owner-kind": "MachinePool",
        f"{CAPI}/owner-name": pool,
    }
    if machine_name:
        annotations[f"{CAPI}/machine"] = machine_name
    reason, message = {
        "True": ("KubeletReady", "kubelet is posting ready status"),
        "False": (
            "KubeletNotReady",
            "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
            "message:Network plugin returns error: cni plugin not initialized",
        ),
        "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status."),
    }[ready]
    beat = since if ready == "Unknown" else HEARTBEAT
    spec: Obj = {"providerID": provider_id}
    if unschedulable:
        spec["unschedulable"] = True
        spec["taints"] = [
            {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": RECENT}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid("Node", "", name),
            "creationTimestamp": since,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                **({"topology.kubernetes.io/zone": zone} if zone else {}),
            },
            "annotations": annotations,
        },
        "spec": spec,
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available", "lastHeartbeatTime": beat, "lastTransitionTime": since},
                {"type": "Ready", "status": ready, "reason": reason, "message": message, "lastHeartbeatTime": beat, "lastTransitionTime": since},
            ],
            "nodeInfo": system_info(kubelet),
        },
    }  # fmt: skip


def zoned(
    *zones: str | None, label: str = "topology.kubernetes.io/zone"
) -> Callable[[list[Obj]], None]:
    """A change putting the Nodes in these zones, in the scenario's Node order: the label the
    cloud provider's node controller sets (None: no zone label at all)."""

    def change(objects: list[Obj]) -> None:
        nodes = [o for o in objects if o["kind"] == "Node"]
        for found, zone in zip(nodes, zones, strict=True):
            labels = found["metadata"]["labels"]
            labels.pop("topology.kubernetes.io/zone", None)
            if zone is not None:
                labels[label] = zone

    return change


# -- scenarios --------------------------------------------------------------------------------


def _suffix(salt: str) -> str:
    """Appended to Node names and providerIDs: unique per test, empty in goldens."""
    return f"-{salt}" if salt else ""


def _token(salt: str) -> str:
    """Inside fixed-width IDs (EC2 and OCI instance IDs): the salt, or eight zeros."""
    return salt or "0" * 8


def aws_asg(generation: str, ns: str, salt: str = "", healthy: bool = False) -> list[Obj]:
    """CAPA AWSMachinePool without MachinePool Machines, stuck ScalingUp: one instance has no Node.

    healthy: the same pool once the third instance joined.
    """
    shape = Shape(
        (INFRA, "v1beta2", "AWSCluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    ids = [
        f"aws:///eu-west-1{z}/i-0{_token(salt)}{n:08x}"
        for z, n in (("a", 0x3A5F10), ("b", 0x3A5F11), ("c", 0x3A5F12))
    ]
    pool = PoolSpec(
        "asg-workers", (INFRA, "v1beta2", "AWSMachinePool"), (BOOTSTRAP, generation, "KubeadmConfig"),
        desired=3, provider_ids=ids, ready_nodes=3 if healthy else 2, phase="Running" if healthy else "ScalingUp",
        failure_domains=("eu-west-1a", "eu-west-1b", "eu-west-1c"),
        annotations=(
            (f"{CAPI}/cluster-api-autoscaler-node-group-min-size", "1"),
            (f"{CAPI}/cluster-api-autoscaler-node-group-max-size", "10"),
        ),
    )  # fmt: skip
    asg = infra_pool(
        generation, pool.infra, ns, "prod", pool.name,
        spec={
            "minSize": 1, "maxSize": 10, "availabilityZones": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
            "awsLaunchTemplate": {"instanceType": "m6i.xlarge", "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io"},
            "providerID": f"aws:///eu-west-1/arn:aws:autoscaling:eu-west-1:123456789012:autoScalingGroup:{pool.name}",
            "providerIDList": ids,
        },
        status={
            "ready": True, "replicas": 3, "launchTemplateID": "lt-0a1b2c3d4e5f67890", "launchTemplateVersion": "4",
            "instances": [{"instanceID": i.rsplit("/", 1)[1]} for i in ids],
            "conditions": [v1beta1_condition("Ready"), v1beta1_condition("ASGReady"), v1beta1_condition("LaunchTemplateReady")],
        },
    )  # fmt: skip
    nodes = [
        node(
            f"ip-10-0-{i}-17.eu-west-1.compute.internal{_suffix(salt)}",
            ids[i],
            "v1.33.4",
            ns,
            "prod",
            pool.name,
            zone=f"eu-west-1{'abc'[i]}",
        )
        for i in range(3 if healthy else 2)
    ]
    return [
        cluster(generation, ns, "prod", shape),
        with_template_metadata(machine_pool(generation, ns, "prod", pool)),
        asg,
        kubeadm_config(generation, ns, "prod", pool.name),
        *nodes,
    ]


def _azure_id(vmss: str, index: int, salt: str, group: str = "prod-rg") -> str:
    sub = "6f1f5d1c-8d0e-4b8e-9a7e-2f3c1e0b7a11"
    return (
        f"azure:///subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Compute/"
        f"virtualMachineScaleSets/{vmss}{_suffix(salt)}/virtualMachines/{index}"
    )


def azure_vmss(generation: str, ns: str, salt: str = "", healthy: bool = False) -> list[Obj]:
    """CAPZ AzureMachinePool with AzureMachinePoolMachines, mid-upgrade: one instance still on the
    old version, one Node NotReady. healthy: the same pool after the upgrade finished."""
    shape = Shape(
        (INFRA, "v1beta1", "AzureCluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    amp = (INFRA, "v1beta1", "AzureMachinePool")
    ampm = (INFRA, "v1beta1", "AzureMachinePoolMachine")
    ids = [_azure_id("vmss-workers", i, salt) for i in range(3)]
    pool = PoolSpec(
        "vmss-workers", amp, (BOOTSTRAP, generation, "KubeadmConfig"), desired=3, provider_ids=ids,
        ready_nodes=3 if healthy else 2, phase="Running" if healthy else "ScalingUp", with_machines=True,
        machines_ready=3 if healthy else 2, machines_available=3 if healthy else 2,
        failure_domains=("1", "2", "3"),
    )  # fmt: skip
    objects = [
        cluster(generation, ns, "prod", shape),
        with_template_metadata(machine_pool(generation, ns, "prod", pool)),
        kubeadm_config(generation, ns, "prod", pool.name),
    ]
    objects.append(
        infra_pool(
            generation, amp, ns, "prod", pool.name,
            spec={
                "location": "westeurope", "orchestrationMode": "Uniform",
                "template": {"vmSize": "Standard_D4s_v5", "osDisk": {"diskSizeGB": 128, "osType": "Linux"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"}},
                "providerIDList": ids,
            },
            status={
                "ready": True, "replicas": 3 if healthy else 2, "provisioningState": "Succeeded" if healthy else "Updating",
                "infrastructureMachineKind": "AzureMachinePoolMachine",
                "image": {"computeGallery": {"gallery": "ClusterAPI-f72ceb4f", "name": "capi-ubun2-2404", "version": "1.33.4"}},
                "conditions": [
                    v1beta1_condition("Ready"), v1beta1_condition("BootstrapSucceeded"), v1beta1_condition("ScaleSetDesiredReplicas"),
                    v1beta1_condition("ScaleSetModelUpdated") if healthy else
                    v1beta1_condition("ScaleSetModelUpdated", "False", "ScaleSetModelOutOfDate", severity="Info", when=RECENT),
                    v1beta1_condition("ScaleSetRunning"),
                ],
            },
        )
    )  # fmt: skip
    states = [
        # (kubelet, node Ready, latest model) per instance
        ("v1.32.9", "True", False),
        ("v1.33.4", "True", True),
        ("v1.33.4", "False", True),
    ]
    if healthy:
        states = [("v1.33.4", "True", True)] * 3
    for i, (kubelet, ready, latest) in enumerate(states):
        name = f"vmss-workers-{i}"
        node_name = f"vmss-workers{_suffix(salt)}-00000{i}"
        ok = ready == "True"
        objects.append(
            machine(
                generation, ns, "prod", pool.name, name, ampm, ids[i], node_name, kubelet, ready=ok,
                ready_reason="NotReady", ready_message="* NodeHealthy: Node is not ready",
            )
        )  # fmt: skip
        objects.append(
            infra_machine(
                generation, ns, "prod", pool.name, amp, name, "AzureMachinePoolMachine", ids[i],
                spec={"instanceID": str(i)},
                status={
                    "ready": True, "version": kubelet, "provisioningState": "Succeeded", "latestModelApplied": latest,
                    "instanceName": node_name, "nodeRef": {"name": node_name},
                    "conditions": [v1beta1_condition("Ready"), v1beta1_condition("BootstrapSucceeded"), v1beta1_condition("VMRunning"),
                                   v1beta1_condition("NodeHealthy", "True" if ok else "False", "NodeConditionsFailed", severity="Warning", when=RECENT)],
                },
                labels={"azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool": pool.name},
            )
        )  # fmt: skip
        objects.append(
            node(
                node_name,
                ids[i],
                kubelet,
                ns,
                "prod",
                pool.name,
                ready,
                since=RECENT if not ok else T0,
                machine_name=name,
                zone=f"westeurope-{i + 1}",
            )
        )
    if not healthy:
        objects += node_events(f"vmss-workers{_suffix(salt)}-000002")
    return objects


def node_events(node_name: str) -> list[Obj]:
    """What the kubelet and the node lifecycle controller record when a Node's kubelet restarts
    and the Node goes NotReady (core/v1 Events, in the namespace "default", as they write them)."""

    def event(reason: str, message: str, component: str, count: int, first: str) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{node_name}.{reason.lower()}", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node_name},
            "type": "Normal",
            "reason": reason,
            "message": message,
            "count": count,
            "firstTimestamp": first,
            "lastTimestamp": RECENT,
            "source": {"component": component, "host": node_name},
        }

    return [
        event("Starting", "Starting kubelet.", "kubelet", 2, T0),
        event(
            "NodeNotReady",
            f"Node {node_name} status is now: NodeNotReady",
            "node-controller",
            1,
            RECENT,
        ),
    ]


def azure_image_drift(generation: str, ns: str, salt: str = "", healthy: bool = False) -> list[Obj]:
    """CAPZ AzureMachinePool upgraded in one of its two steps (CAPZ#5546): the pool wants v1.33.4,
    the VMSS model keeps the v1.32.9 reference image, and a VM added while the providerIDList
    lagged joined with the uninitialized taint; a control-plane and a MachineDeployment Node share
    the workload cluster. healthy: image and version agree, and every VM is listed."""
    shape = Shape(
        (INFRA, "v1beta1", "AzureCluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    amp, ampm = (
        (INFRA, "v1beta1", "AzureMachinePool"),
        (INFRA, "v1beta1", "AzureMachinePoolMachine"),
    )
    kubelet = "v1.33.4" if healthy else "v1.32.9"
    # CAPZ's reference gallery, whose image versions are Kubernetes releases: the field is
    # spec.template.image.computeGallery (exp/api/v1beta1/azuremachinepool_types.go and
    # api/v1beta1/types.go of cluster-api-provider-azure v1.26.0); status.image is what CAPZ
    # put in the VMSS model (azure/scope/machinepool.go SaveVMImageToStatus).
    image = {
        "computeGallery": {
            "gallery": "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019",
            "name": "capi-ubun2-2404",
            "version": kubelet[1:],
        }
    }
    ids = [_azure_id("vmss-batch", i, salt, group="batch-rg") for i in range(2)]
    pool = PoolSpec(
        "vmss-batch", amp, (BOOTSTRAP, generation, "KubeadmConfig"), desired=2, provider_ids=ids, ready_nodes=2,
        with_machines=True, machines_ready=2, machines_available=2,
    )  # fmt: skip
    objects = [
        cluster(generation, ns, "batch", shape),
        machine_pool(generation, ns, "batch", pool),
        kubeadm_config(generation, ns, "batch", pool.name),
        infra_pool(
            generation, amp, ns, "batch", pool.name,
            spec={"location": "westeurope", "orchestrationMode": "Uniform", "providerIDList": ids,
                  "template": {"vmSize": "Standard_D8s_v5", "image": image, "osDisk": {"diskSizeGB": 128, "osType": "Linux"}}},
            status={"ready": True, "replicas": 2, "provisioningState": "Succeeded", "infrastructureMachineKind": "AzureMachinePoolMachine",
                    "image": image, "conditions": [v1beta1_condition("Ready"), v1beta1_condition("ScaleSetModelUpdated")]},
        ),
    ]  # fmt: skip
    for i, pid in enumerate(ids):
        name, node_name = f"vmss-batch-{i}", f"vmss-batch{_suffix(salt)}-00000{i}"
        objects += [
            machine(generation, ns, "batch", pool.name, name, ampm, pid, node_name, kubelet),
            infra_machine(
                generation, ns, "batch", pool.name, amp, name, "AzureMachinePoolMachine", pid,
                spec={"instanceID": str(i)},
                status={"ready": True, "version": kubelet, "provisioningState": "Succeeded", "latestModelApplied": True,
                        "nodeRef": {"name": node_name}, "conditions": [v1beta1_condition("Ready"), v1beta1_condition("NodeHealthy")]},
                labels={"azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool": pool.name},
            ),
            node(node_name, pid, kubelet, ns, "batch", pool.name, machine_name=name),
        ]  # fmt: skip
    plane = node(f"batch-control-plane{_suffix(salt)}-7xk2p", f"azure:///subscriptions/6f1f5d1c-8d0e-4b8e-9a7e-2f3c1e0b7a11/resourceGroups/batch-rg/providers/Microsoft.Compute/virtualMachines/batch-control-plane{_suffix(salt)}-7xk2p", "v1.33.4", ns, "batch", "", machine_name="batch-control-plane-7xk2p")  # fmt: skip
    plane["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = ""
    plane["metadata"]["annotations"][f"{CAPI}/owner-kind"] = "KubeadmControlPlane"
    plane["metadata"]["annotations"][f"{CAPI}/owner-name"] = "batch-control-plane"
    deployment = node(f"batch-md-0{_suffix(salt)}-q8v4d", f"azure:///subscriptions/6f1f5d1c-8d0e-4b8e-9a7e-2f3c1e0b7a11/resourceGroups/batch-rg/providers/Microsoft.Compute/virtualMachines/batch-md-0{_suffix(salt)}-q8v4d", "v1.33.4", ns, "batch", "", machine_name="batch-md-0-5d8f7-q8v4d")  # fmt: skip
    deployment["metadata"]["annotations"][f"{CAPI}/owner-kind"] = "MachineSet"
    deployment["metadata"]["annotations"][f"{CAPI}/owner-name"] = "batch-md-0-5d8f7"
    objects += [plane, deployment]
    if not healthy:
        # Never matched, so Cluster API put none of its annotations on it.
        joined = node(f"vmss-batch{_suffix(salt)}-000002", _azure_id("vmss-batch", 2, salt, group="batch-rg"), kubelet, ns, "batch", pool.name, since="2026-11-29T14:35:00Z")  # fmt: skip
        joined["metadata"]["annotations"] = {}
        joined["spec"]["taints"] = [
            {"key": "node.cluster.x-k8s.io/uninitialized", "effect": "NoSchedule"}
        ]
        objects.append(joined)
    return objects


def oci_instance_pool(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """CAPOCI OCIMachinePool: MachinePool Machines exist, yet deleting one does nothing in the cloud."""
    shape = Shape(
        (INFRA, "v1beta2", "OCICluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    ocimp = (INFRA, "v1beta2", "OCIMachinePool")
    ids = [
        f"oci://ocid1.instance.oc1.eu-frankfurt-1.antheljt{_token(salt)}{n}q4" for n in ("aa", "ab")
    ]
    pool = PoolSpec("oci-workers", ocimp, (BOOTSTRAP, generation, "KubeadmConfig"), desired=2, provider_ids=ids,
                    ready_nodes=2, with_machines=True, machines_ready=2, machines_available=2)  # fmt: skip
    objects = [
        cluster(generation, ns, "prod", shape), machine_pool(generation, ns, "prod", pool), kubeadm_config(generation, ns, "prod", pool.name),
        infra_pool(
            generation, ocimp, ns, "prod", pool.name,
            spec={"instanceConfiguration": {"shape": "VM.Standard.E5.Flex", "shapeConfig": {"ocpus": "2", "memoryInGBs": "16"}}, "providerIDList": ids},
            status={"ready": True, "replicas": 2, "infrastructureMachineKind": "OCIMachinePoolMachine",
                    "conditions": [v1beta1_condition("Ready"), v1beta1_condition("InstancePoolReady"), v1beta1_condition("LaunchTemplateReady")]},
        ),
    ]  # fmt: skip
    for i, pid in enumerate(ids):
        name = f"oci-workers-{i}"
        node_name = f"10.0.10.{20 + i}{_suffix(salt)}"
        objects.append(
            machine(
                generation,
                ns,
                "prod",
                pool.name,
                name,
                (INFRA, "v1beta2", "OCIMachinePoolMachine"),
                pid,
                node_name,
                "v1.33.4",
            )
        )
        objects.append(
            infra_machine(
                generation, ns, "prod", pool.name, ocimp, name, "OCIMachinePoolMachine", pid,
                spec={"ocid": pid.removeprefix("oci://"), "instanceName": f"oci-workers-{i}", "machineType": "SELF_MANAGED_TYPE"},
                status={"ready": True, "conditions": [v1beta1_condition("Ready")]},
            )
        )  # fmt: skip
        objects.append(node(node_name, pid, "v1.33.4", ns, "prod", pool.name, machine_name=name))
    return objects


def _managed(
    generation: str, ns: str, salt: str, shape: Shape, pool: PoolSpec, infra_spec: Obj, infra_status: Obj,
    node_names: list[str], kubelet: str, cordoned: int | None = None, zone: str | None = None,
) -> list[Obj]:  # fmt: skip
    objects = [
        cluster(generation, ns, "prod", shape),
        machine_pool(generation, ns, "prod", pool),
        infra_pool(
            generation,
            pool.infra,
            ns,
            "prod",
            pool.name,
            {**infra_spec, "providerIDList": pool.provider_ids},
            infra_status,
        ),
    ]
    for i, (name, pid) in enumerate(zip(node_names, pool.provider_ids, strict=True)):
        objects.append(
            node(
                f"{name}{_suffix(salt)}",
                pid,
                kubelet,
                ns,
                "prod",
                pool.name,
                unschedulable=i == cordoned,
                zone=zone,
            )
        )
    return objects


def eks_managed(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """CAPA AWSManagedMachinePool (EKS managed node group): no bootstrap config, EKS kubelet builds."""
    shape = Shape(
        (INFRA, "v1beta2", "AWSManagedCluster"), (CONTROLPLANE, "v1beta2", "AWSManagedControlPlane")
    )
    ids = [f"aws:///eu-west-1a/i-0{_token(salt)}{n:08x}" for n in (0x7C01, 0x7C02, 0x7C03)]
    pool = PoolSpec(
        "eks-default", (INFRA, "v1beta2", "AWSManagedMachinePool"), None, desired=3, provider_ids=ids, ready_nodes=3,
        version="v1.33.5",
        annotations=((f"{CAPI}/cluster-api-autoscaler-node-group-min-size", "3"), (f"{CAPI}/cluster-api-autoscaler-node-group-max-size", "12")),
    )  # fmt: skip
    return _managed(
        generation, ns, salt, shape, pool,
        {"eksNodegroupName": "prod_eks-default", "scaling": {"minSize": 3, "maxSize": 12}, "instanceType": "m6i.large", "amiType": "AL2023_x86_64_STANDARD"},
        {"ready": True, "replicas": 3, "conditions": [v1beta1_condition("Ready"), v1beta1_condition("EKSNodegroupReady"), v1beta1_condition("IAMNodegroupRolesReady")]},
        [f"ip-10-0-32-{n}.eu-west-1.compute.internal" for n in (11, 12, 13)], "v1.33.5-eks-3025e55",
        zone="eu-west-1a",
    )  # fmt: skip


def aks_managed(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """CAPZ AzureManagedMachinePool (AKS agent pool) with AKS autoscaling: replicas managed outside CAPI."""
    shape = Shape(
        (INFRA, "v1beta1", "AzureManagedCluster"), (INFRA, "v1beta1", "AzureManagedControlPlane")
    )
    vmss = "aks-pool0-41982762-vmss"
    ids = [_azure_id(vmss, i, salt, group="mc_prod-rg_prod_westeurope") for i in range(3)]
    pool = PoolSpec(
        "aks-pool0", (INFRA, "v1beta1", "AzureManagedMachinePool"), None, desired=3, provider_ids=ids, ready_nodes=3,
        version="v1.33.3", annotations=((f"{CAPI}/replicas-managed-by", "true"),),
    )  # fmt: skip
    objects = _managed(
        generation, ns, salt, shape, pool,
        {"mode": "System", "sku": "Standard_D4s_v5", "name": "pool0", "scaling": {"minSize": 2, "maxSize": 6}, "osDiskSizeGB": 128},
        {"ready": True, "replicas": 3, "conditions": [v1beta1_condition("Ready"), v1beta1_condition("AgentPoolsReady")]},
        [f"aks-pool0-41982762-vmss00000{i}" for i in range(3)], "v1.33.3", cordoned=2,
    )  # fmt: skip
    return [*objects, aso_agent_pool(ns, pool.name, "1.33.3", "1.33.3")]


def aso_agent_pool(ns: str, name: str, orchestrator: str, current: str) -> Obj:
    """The ASO ManagedClustersAgentPool CAPZ makes for an AzureManagedMachinePool (named after
    it: azure/services/agentpools/spec.go ResourceRef), with what AKS reports. Fields as in
    azure-service-operator v2/api/containerservice/v1api20250801/
    managed_clusters_agent_pool_types_gen.go."""
    meta = _meta("ManagedClustersAgentPool", ns, name, "prod")
    meta["ownerReferences"] = [_owner("AzureManagedMachinePool", f"{INFRA}/v1beta1", ns, name)]
    return {
        "apiVersion": "containerservice.azure.com/v1api20250801",
        "kind": "ManagedClustersAgentPool",
        "metadata": meta,
        "spec": {"azureName": "pool0", "owner": {"name": "prod"}, "mode": "System", "count": 3, "vmSize": "Standard_D4s_v5", "orchestratorVersion": orchestrator},
        "status": {
            "orchestratorVersion": orchestrator, "currentOrchestratorVersion": current,
            "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202511.03.0", "provisioningState": "Succeeded",
            "conditions": [{"type": "Ready", "status": "True", "severity": "", "lastTransitionTime": T0, "observedGeneration": 1}],
        },
    }  # fmt: skip


def gke_managed(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """CAPG GCPManagedMachinePool: names its own kind as infrastructureMachineKind, yet no Machines exist."""
    shape = Shape(
        (INFRA, "v1beta1", "GCPManagedCluster"), (INFRA, "v1beta1", "GCPManagedControlPlane")
    )
    names = [f"gke-prod-default-5f2a1c9e-{s}" for s in ("0q1w", "3x7k", "9zp4")]
    ids = [f"gce://prod-project/europe-west4-a/{n}{_suffix(salt)}" for n in names]
    pool = PoolSpec(
        "gke-default", (INFRA, "v1beta1", "GCPManagedMachinePool"), None, desired=3, provider_ids=ids, ready_nodes=3,
        version="v1.32.9", with_machines=True,
    )  # fmt: skip
    return _managed(
        generation, ns, salt, shape, pool,
        {"nodePoolName": "default", "machineType": "e2-standard-4", "scaling": {"minCount": 1, "maxCount": 5}},
        {"ready": True, "replicas": 3, "infrastructureMachineKind": "GCPManagedMachinePool",
         "conditions": [v1beta1_condition("Ready"), v1beta1_condition("GKEMachinePoolReady"),
                        v1beta1_condition("GKEMachinePoolCreating", "False", "GKEMachinePoolCreated", severity="Info"),
                        v1beta1_condition("GKEMachinePoolUpdating", "False", "GKEMachinePoolUpdated", severity="Info")]},
        names, "v1.32.9-gke.1051000",
    )  # fmt: skip


def scaleway_kapsule(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """Scaleway ScalewayManagedMachinePool (Kapsule): a v1beta2-contract provider with metav1 conditions."""
    shape = Shape(
        (INFRA, "v1alpha2", "ScalewayManagedCluster"),
        (INFRA, "v1alpha2", "ScalewayManagedControlPlane"),
    )
    uuids = ["0b1c7a4e-5d1a-4c53-9d6e-1f2a3b4c5d01", "0b1c7a4e-5d1a-4c53-9d6e-1f2a3b4c5d02"]
    ids = [f"scaleway://instance/fr-par-1/{u}{_suffix(salt)}" for u in uuids]
    pool = PoolSpec(
        "kapsule-default", (INFRA, "v1alpha2", "ScalewayManagedMachinePool"), None, desired=2, provider_ids=ids,
        ready_nodes=2, version="v1.33.4",
    )  # fmt: skip
    return _managed(
        generation, ns, salt, shape, pool,
        {"zone": "fr-par-1", "nodeType": "PRO2-S", "scaling": {"autoscaling": False}, "autohealing": True},
        {"ready": True, "initialization": {"provisioned": True}, "replicas": 2,
         "conditions": [condition("Ready"), condition("PoolReady", reason="Ready"), condition("Paused", "False", "NotPaused")]},
        [f"scw-prod-kapsule-default-{u[-4:]}" for u in uuids], "v1.33.4", zone="fr-par-1",
    )  # fmt: skip


def capd(generation: str, ns: str, salt: str = "") -> list[Obj]:
    """CAPD DockerMachinePool with DockerMachines (CAPI's own test provider, v1beta2 contract)."""
    shape = Shape(
        (INFRA, "v1beta2", "DockerCluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    dmp = (INFRA, "v1beta2", "DockerMachinePool")
    names = [f"dev-mp-0-{s}" for s in ("x7q2p", "k9d4m")]
    ids = [f"docker:////dev-{n}{_suffix(salt)}" for n in names]
    pool = PoolSpec("dev-mp-0", dmp, (BOOTSTRAP, generation, "KubeadmConfig"), desired=2, provider_ids=ids,
                    ready_nodes=2, with_machines=True, machines_ready=2, machines_available=2, version="v1.34.0")  # fmt: skip
    objects = [
        cluster(generation, ns, "dev", shape), with_template_metadata(machine_pool(generation, ns, "dev", pool)), kubeadm_config(generation, ns, "dev", pool.name),
        infra_pool(
            generation, dmp, ns, "dev", pool.name, spec={"template": {"customImage": "kindest/node:v1.34.0"}, "providerIDList": ids},
            status={"ready": True, "replicas": 2, "infrastructureMachineKind": "DockerMachine",
                    "conditions": [condition("Ready"), condition("ReplicasReady", reason="Ready"), condition("Paused", "False", "NotPaused")],
                    "deprecated": {"v1beta1": {"conditions": [v1beta1_condition("Ready"), v1beta1_condition("ReplicasReady")]}}},
        ),
    ]  # fmt: skip
    # Made in the order of their names: creation is stamped in whole seconds, and a rollout
    # restart replaces the oldest first (names break ties). Made x7q2p first, two namespaces of
    # the same scenario could order them differently (one second apart, or within one), and a
    # fault matrix cell's request, named in one namespace, never came in the other.
    for name, pid in sorted(zip(names, ids, strict=True)):
        node_name = f"dev-{name}{_suffix(salt)}"
        objects.append(
            machine(
                generation,
                ns,
                "dev",
                pool.name,
                name,
                (INFRA, "v1beta2", "DockerMachine"),
                pid,
                node_name,
                "v1.34.0",
            )
        )
        objects.append(
            infra_machine(
                generation, ns, "dev", pool.name, dmp, name, "DockerMachine", pid,
                spec={"customImage": "kindest/node:v1.34.0"},
                status={"ready": True, "initialization": {"provisioned": True}, "conditions": [condition("Ready"), condition("ContainerProvisioned", reason="Ready")]},
            )
        )  # fmt: skip
        objects.append(node(node_name, pid, "v1.34.0", ns, "dev", pool.name, machine_name=name))
    return objects


def bootstrap_data_secret(config: Obj) -> Obj:
    """The Secret a bootstrap provider writes for its config (key `value`, the userdata)."""
    meta = config["metadata"]
    name = config["status"]["dataSecretName"]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "cluster.x-k8s.io/secret",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "uid": uid("Secret", meta["namespace"], name),
            "creationTimestamp": T0,
            "labels": {f"{CAPI}/cluster-name": meta["labels"][f"{CAPI}/cluster-name"]},
            "ownerReferences": [
                _owner(config["kind"], config["apiVersion"], meta["namespace"], meta["name"])
            ],
        },
        "data": {"value": "I2Nsb3VkLWNvbmZpZwo=", "format": "Y2xvdWQtY29uZmln"},
    }


# The pool template metadata of the scenarios that carry some: a node-role label and a
# node.cluster.x-k8s.io annotation (synced to Nodes through Machines), and a label and an
# annotation outside the synced domains (they stop at the Machines).
TEMPLATE_METADATA = {
    "labels": {"node-role.kubernetes.io/worker": "", "team": "payments"},
    "annotations": {"node.cluster.x-k8s.io/gpu-driver": "550", "example.com/owner": "ops"},
}


def _synced(key: str) -> bool:
    """Cluster API's default Machine-to-Node sync domains, for the keys the fixtures use."""
    return (
        key.startswith("node-role.kubernetes.io/")
        or key.split("/", maxsplit=1)[0] == "node.cluster.x-k8s.io"
    )


def _propagate_metadata(objects: list[Obj]) -> None:
    """The MachinePool controller copies template metadata onto its Machines; the Machine
    controller copies the synced keys onto the Node and records them in tracking annotations."""
    nodes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    for pool in (o for o in objects if o["kind"] == "MachinePool"):
        template = pool["spec"]["template"].get("metadata") or {}
        if not template:
            continue
        for machine in (
            o
            for o in objects
            if o["kind"] == "Machine"
            and o["metadata"]["labels"].get(f"{CAPI}/pool-name") == pool["metadata"]["name"]
        ):
            machine["metadata"]["labels"].update(template.get("labels", {}))
            machine["metadata"].setdefault("annotations", {}).update(
                template.get("annotations", {})
            )
            node = nodes.get(machine["status"]["nodeRef"]["name"])
            if node is None:
                continue
            labels = {k: v for k, v in template.get("labels", {}).items() if _synced(k)}
            annotations = {k: v for k, v in template.get("annotations", {}).items() if _synced(k)}
            node["metadata"]["labels"].update(labels)
            node["metadata"]["annotations"].update(annotations)
            node["metadata"]["annotations"][f"{CAPI}/labels-from-machine"] = ",".join(
                sorted(labels)
            )
            node["metadata"]["annotations"][f"{CAPI}/annotations-from-machine"] = ",".join(
                sorted(annotations)
            )


def as_controllers_left_them(build: Callable[..., list[Obj]]) -> Callable[..., list[Obj]]:
    """What controllers add to a scenario: each MachinePool's status.nodeRefs (the Nodes whose
    providerID is in spec.providerIDList, in list order, with names and uids), template metadata
    on Machines and their Nodes, and each bootstrap config's data Secret."""

    @functools.wraps(build)
    def scenario(generation: str, ns: str, salt: str = "", **variant: Any) -> list[Obj]:
        objects = build(generation, ns, salt, **variant)
        by_pid = {o["spec"]["providerID"]: o for o in objects if o["kind"] == "Node"}
        for pool in (o for o in objects if o["kind"] == "MachinePool"):
            refs = [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": n["metadata"]["name"],
                    "uid": n["metadata"]["uid"],
                }
                for pid in pool["spec"].get("providerIDList", [])
                if (n := by_pid.get(pid))
            ]
            if refs:
                pool["status"]["nodeRefs"] = refs
        _propagate_metadata(objects)
        configs = [o for o in objects if o["kind"] == "KubeadmConfig"]
        return objects + [bootstrap_data_secret(c) for c in configs]

    return scenario


SCENARIOS: dict[str, Callable[..., list[Obj]]] = {
    name: as_controllers_left_them(build)
    for name, build in {
        "aws-asg": aws_asg,
        "azure-vmss": azure_vmss,
        "azure-image-drift": azure_image_drift,
        "oci-instance-pool": oci_instance_pool,
        "eks-managed": eks_managed,
        "aks-managed": aks_managed,
        "gke-managed": gke_managed,
        "scaleway-kapsule": scaleway_kapsule,
        "capd": capd,
    }.items()
}


def _paused_by_the_tool(build: Callable[..., list[Obj]]) -> Callable[..., list[Obj]]:
    """The scenario as `rollout pause` leaves it: both pools annotated, the record on the
    MachinePool (for the fault matrix of rollout resume)."""

    def paused(generation: str, ns: str, salt: str = "") -> list[Obj]:
        objects = build(generation, ns, salt)
        infra = next(o for o in objects if o["kind"] == "DockerMachinePool")
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        infra["metadata"].setdefault("annotations", {})[f"{CAPI}/paused"] = ""
        pool["metadata"].setdefault("annotations", {}).update({
            f"{CAPI}/paused": "",
            "kubectl-machinepool/paused": f"DockerMachinePool/{pool['metadata']['name']},"
            f"MachinePool/{pool['metadata']['name']}",
        })  # fmt: skip
        return objects

    return paused


def _second_pool(
    build: Callable[..., list[Obj]], pool: str, second: str
) -> Callable[..., list[Obj]]:
    """The scenario with a second pool in its Cluster: a copy of every object but the Cluster,
    named (and with uids, providerIDs and Node names) after `second`, for batches of pools."""

    def both(generation: str, ns: str, salt: str = "") -> list[Obj]:
        objects = build(generation, ns, salt)
        copies = [o for o in objects if o["kind"] != "Cluster"]
        text = json.dumps(copies)
        for obj in copies:
            meta = obj["metadata"]
            space = meta.get("namespace", "")
            renamed = uid(obj["kind"], space, meta["name"].replace(pool, second))
            text = text.replace(meta["uid"], renamed)
        return objects + json.loads(text.replace(pool, second))

    return both


def _tracked_by_argo_cd(build: Callable[..., list[Obj]]) -> Callable[..., list[Obj]]:
    """The scenario's pool tracked by Argo CD Application prod-pools in the same namespace,
    which self-heals (support/owner_objects.yaml; the test server needs its CRD first:
    support.gitops)."""

    def tracked(generation: str, ns: str, salt: str = "") -> list[Obj]:
        objects = build(generation, ns, salt)
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        name = pool["metadata"]["name"]
        tracking = f"{ns}_prod-pools:{CAPI}/MachinePool:{ns}/{name}"
        pool["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = tracking
        app = owner_object("Application")
        app["metadata"]["namespace"] = ns
        app["metadata"].pop("finalizers")  # no Argo CD here to remove it
        return [*objects, app]

    return tracked


def _upgraded_by_the_tool(build: Callable[..., list[Obj]]) -> Callable[..., list[Obj]]:
    """The CAPD scenario as `upgrade --version v1.34.0` left it from v1.33.4: its revision
    recorded on the MachinePool (for the fault matrix of rollout undo)."""

    def upgraded(generation: str, ns: str, salt: str = "") -> list[Obj]:
        objects = build(generation, ns, salt)
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        name = pool["metadata"]["name"]
        changes = (
            Change("MachinePool", CAPI, name, VERSION, "v1.33.4", "v1.34.0"),
            Change(
                "DockerMachinePool", INFRA, name, "spec.template.customImage",
                "kindest/node:v1.33.4", "kindest/node:v1.34.0",
            ),
        )  # fmt: skip
        revision = Revision(1, "upgrade --version v1.34.0", T0, "0.1.0", changes)
        pool["metadata"].setdefault("annotations", {})[ANNOTATION] = encode([revision])
        return objects

    return upgraded


# Variants a test loads by name, kept out of SCENARIOS (which every scenario test runs over).
VARIANTS: dict[str, Callable[..., list[Obj]]] = {
    "capd-upgraded": _upgraded_by_the_tool(SCENARIOS["capd"]),
    "capd-paused": _paused_by_the_tool(SCENARIOS["capd"]),
    "capd-argo": _tracked_by_argo_cd(SCENARIOS["capd"]),
    "capd-two-pools": _second_pool(SCENARIOS["capd"], "dev-mp-0", "dev-mp-1"),
}


def core_manager(
    namespace: str,
    image: str = "registry.example/cluster-api/cluster-api-controller:v1.14.2",
    args: tuple[str, ...] = (),
) -> Obj:
    """The core Cluster API controller Deployment, whose image tag and args the tool reads."""
    labels = {"control-plane": "controller-manager"}
    container = {"name": "manager", "image": image, "args": list(args)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "capi-controller-manager",
            "namespace": namespace,
            "labels": {f"{CAPI}/provider": "cluster-api"},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def as_provider(pool_kind: str, machine_kind: str) -> Callable[[list[Obj]], None]:
    """A change turning the CAPD scenario into another provider's pool with MachinePool Machines:
    the same objects under that provider's kind names."""

    def change(objects: list[Obj]) -> None:
        renames = {"DockerMachinePool": pool_kind, "DockerMachine": machine_kind}
        for obj in objects:
            obj["kind"] = renames.get(obj["kind"], obj["kind"])
            spec = obj.get("spec", {})
            ref = spec.get("infrastructureRef") or spec.get("template", {}).get("spec", {}).get(
                "infrastructureRef"
            )
            if ref:
                ref["kind"] = renames.get(ref["kind"], ref["kind"])
            for owner in obj["metadata"].get("ownerReferences", []):
                owner["kind"] = renames.get(owner["kind"], owner["kind"])
            if obj["kind"] == pool_kind:
                obj["status"]["infrastructureMachineKind"] = machine_kind

    return change
