"""The objects of the scale benchmark: one pool of N instances in either shape, and bystanders.

Built from the test suite's scenario builders (tests/support/scenarios.py), so every object has
the shape the controllers write; only the Nodes get what a real kubelet adds on top (zone and
instance-type labels, addresses, capacity, images), because at N=5000 their size is what the
reads pay for.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.objects import BOOTSTRAP, INFRA, T0, azure_ids
from support.scenarios import (
    CONTROLPLANE,
    RECENT,
    SCENARIOS,
    PoolSpec,
    Shape,
    as_controllers_left_them,
    cluster,
    core_manager,
    infra_machine,
    infra_pool,
    kubeadm_config,
    machine,
    machine_pool,
    node,
    v1beta1_condition,
    with_template_metadata,
)

Obj = dict[str, Any]
GENERATION = "v1beta2"
CLUSTER = "fleet"
KUBELET = "v1.33.4"
NOT_READY_EVERY = 50  # ~2% of the Nodes are NotReady
ZONES = ("1", "2", "3")


@dataclass(frozen=True)
class FleetShape:
    """One of the two pool shapes, by the names the measurement needs."""

    name: str  # machines | nodes
    pool: str
    pool_kind: str  # the infra pool's kind, as kubectl names it
    machine_kind: str | None  # the infra machine kind (None: no MachinePool Machines)
    bootstrap_kind: str | None
    group: str = INFRA

    def pool_kinds(self) -> tuple[str, ...]:
        """The kinds whose objects change with N (the rest only grows in number)."""
        return ("MachinePool", self.pool_kind)

    def resources(self) -> list[str]:
        """The management collections `kubectl get` reads for this pool, by plural.group."""
        kinds = ["machinepools.cluster.x-k8s.io", f"{self.pool_kind.lower()}s.{self.group}"]
        if self.machine_kind:
            kinds += ["machines.cluster.x-k8s.io", f"{self.machine_kind.lower()}s.{self.group}"]
        return kinds


SHAPES = {
    "machines": FleetShape(
        "machines", "vmss-workers", "AzureMachinePool", "AzureMachinePoolMachine", "KubeadmConfig"
    ),
    "nodes": FleetShape("nodes", "eks-workers", "AWSManagedMachinePool", None, None),
}


def _is_ready(index: int) -> bool:
    return index % NOT_READY_EVERY != NOT_READY_EVERY // 2


def kubelet_node(
    name: str, provider_id: str, ns: str, pool: str, index: int, machine_name: str | None
) -> Obj:
    """The scenario Node plus what a kubelet and the cloud node manager add to it."""
    ready = _is_ready(index)
    since = T0 if ready else RECENT
    obj = node(
        name, provider_id, KUBELET, ns, CLUSTER, pool, "True" if ready else "False", since,
        machine_name=machine_name,
    )  # fmt: skip
    zone = f"westeurope-{ZONES[index % len(ZONES)]}"
    ip = f"10.{1 + index // 65536}.{index // 256 % 256}.{index % 256}"
    obj["metadata"]["labels"].update({
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/instance-type": "Standard_D4s_v5", "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "Standard_D4s_v5",
        "topology.kubernetes.io/region": "westeurope", "topology.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/region": "westeurope",
        "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.azure.com/role": "agent",
        "topology.disk.csi.azure.com/zone": zone,
    })  # fmt: skip
    obj["metadata"]["annotations"].update({
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        "csi.volume.kubernetes.io/nodeid": f'{{"disk.csi.azure.com":"{name}"}}',
    })  # fmt: skip
    obj["spec"].update(
        podCIDR=f"192.168.{index % 256}.0/24", podCIDRs=[f"192.168.{index % 256}.0/24"]
    )
    capacity = {
        "cpu": "4", "ephemeral-storage": "129886128Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
        "memory": "16375264Ki", "pods": "110",
    }  # fmt: skip
    status = obj["status"]
    status["conditions"][1:1] = [
        {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure", "lastHeartbeatTime": since, "lastTransitionTime": since},
        {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available", "lastHeartbeatTime": since, "lastTransitionTime": since},
    ]  # fmt: skip
    status.update(
        addresses=[{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
        capacity=capacity,
        allocatable={**capacity, "cpu": "3860m", "memory": "12880864Ki", "ephemeral-storage": "119703055367"},
        daemonEndpoints={"kubeletEndpoint": {"Port": 10250}},
        images=[
            {"names": [f"mcr.microsoft.com/oss/kubernetes/{image}@sha256:{index:064x}", f"mcr.microsoft.com/oss/kubernetes/{image}:{tag}"], "sizeBytes": size}
            for image, tag, size in (
                ("kube-proxy", KUBELET, 30_512_000), ("azure-cni", "v1.6.21", 98_200_000),
                ("azuredisk-csi", "v1.31.5", 75_300_000), ("coredns", "v1.12.1", 21_900_000),
                ("pause", "3.10", 320_000),
            )
        ],
    )  # fmt: skip
    return obj


def _with_machines(generation: str, ns: str, salt: str = "", n: int = 100) -> list[Obj]:
    """A CAPZ AzureMachinePool of n instances, each a Machine, an AzureMachinePoolMachine and a
    Node; the pool Running at its size."""
    shape = Shape(
        (INFRA, "v1beta1", "AzureCluster"), (CONTROLPLANE, "v1beta2", "KubeadmControlPlane")
    )
    amp, ampm = (
        (INFRA, "v1beta1", "AzureMachinePool"),
        (INFRA, "v1beta1", "AzureMachinePoolMachine"),
    )
    name = SHAPES["machines"].pool
    ids = azure_ids(n, name)
    ready = sum(_is_ready(i) for i in range(n))
    pool = PoolSpec(
        name, amp, (BOOTSTRAP, generation, "KubeadmConfig"), desired=n, provider_ids=ids, ready_nodes=ready,
        with_machines=True, machines_ready=ready, machines_available=ready, failure_domains=ZONES,
    )  # fmt: skip
    objects = [
        cluster(generation, ns, CLUSTER, shape),
        with_template_metadata(machine_pool(generation, ns, CLUSTER, pool)),
        kubeadm_config(generation, ns, CLUSTER, name),
        infra_pool(
            generation, amp, ns, CLUSTER, name,
            spec={"location": "westeurope", "orchestrationMode": "Uniform", "providerIDList": ids,
                  "template": {"vmSize": "Standard_D4s_v5", "osDisk": {"diskSizeGB": 128, "osType": "Linux"}}},
            status={"ready": True, "replicas": n, "provisioningState": "Succeeded",
                    "infrastructureMachineKind": "AzureMachinePoolMachine",
                    "conditions": [v1beta1_condition("Ready"), v1beta1_condition("ScaleSetRunning")]},
        ),
    ]  # fmt: skip
    for i, pid in enumerate(ids):
        instance, node_name = f"{name}-{i}", f"{name}-vmss{i:06x}"
        ok = _is_ready(i)
        objects.append(
            machine(
                generation, ns, CLUSTER, name, instance, ampm, pid, node_name, KUBELET, ready=ok
            )
        )
        objects.append(
            infra_machine(
                generation, ns, CLUSTER, name, amp, instance, "AzureMachinePoolMachine", pid,
                spec={"instanceID": str(i)},
                status={"ready": True, "version": KUBELET, "provisioningState": "Succeeded", "latestModelApplied": True,
                        "instanceName": node_name, "nodeRef": {"name": node_name},
                        "conditions": [v1beta1_condition("Ready"), v1beta1_condition("VMRunning"),
                                       v1beta1_condition("NodeHealthy", "True" if ok else "False", "NodeConditionsFailed", severity="Warning")]},
                labels={"azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool": name},
            )
        )  # fmt: skip
        objects.append(kubelet_node(node_name, pid, ns, name, i, instance))
    return objects


def _nodes_only(generation: str, ns: str, salt: str = "", n: int = 100) -> list[Obj]:
    """A CAPA AWSManagedMachinePool (EKS node group) of n instances: providerIDList and Nodes."""
    shape = Shape(
        (INFRA, "v1beta2", "AWSManagedCluster"), (CONTROLPLANE, "v1beta2", "AWSManagedControlPlane")
    )
    name = SHAPES["nodes"].pool
    ids = [f"aws:///eu-west-1{'abc'[i % 3]}/i-0{0x3A5F10 + i:016x}" for i in range(n)]
    pool = PoolSpec(
        name, (INFRA, "v1beta2", "AWSManagedMachinePool"), None, desired=n, provider_ids=ids,
        ready_nodes=sum(_is_ready(i) for i in range(n)),
    )  # fmt: skip
    objects = [
        cluster(generation, ns, CLUSTER, shape),
        machine_pool(generation, ns, CLUSTER, pool),
        infra_pool(
            generation, pool.infra, ns, CLUSTER, name,
            {"eksNodegroupName": f"{CLUSTER}_{name}", "scaling": {"minSize": 1, "maxSize": n}, "providerIDList": ids},
            {"ready": True, "replicas": n, "conditions": [v1beta1_condition("Ready"), v1beta1_condition("EKSNodegroupReady")]},
        ),
    ]  # fmt: skip
    for i, pid in enumerate(ids):
        host = f"ip-10-{1 + i // 65536}-{i // 256 % 256}-{i % 256}.eu-west-1.compute.internal"
        objects.append(kubelet_node(host, pid, ns, name, i, None))
    return objects


BUILDERS = {
    "machines": as_controllers_left_them(_with_machines),
    "nodes": as_controllers_left_them(_nodes_only),
}
# Pools and Clusters of other teams, in namespaces of their own: what a real management cluster
# also holds. Their Nodes live in other workload clusters, so they are left out.
BYSTANDERS = ("aws-asg", "azure-vmss", "eks-managed", "gke-managed")


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def fleet(shape: str, n: int, ns: str) -> list[Obj]:
    """Every object of one benchmark cluster pair: the pool, its bystanders and the core manager."""
    objects = [namespace(ns), namespace("capi-system"), core_manager("capi-system")]
    objects += BUILDERS[shape](GENERATION, ns, n=n)
    for i, scenario in enumerate(BYSTANDERS):
        other = f"team-{i}"
        objects.append(namespace(other))
        objects += [o for o in SCENARIOS[scenario](GENERATION, other, other) if o["kind"] != "Node"]
    return objects
