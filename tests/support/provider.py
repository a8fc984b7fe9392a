"""A test infrastructure provider and kubelet, playing what the real controllers cannot run here.

The Cluster API manager drives Clusters, MachinePools and Machines; nothing runs the provider's
side without a cloud or Docker. `TestProvider` does, for one namespace, the way the providers'
controllers do (CAPZ's AzureMachinePool and CAPA's AWSMachinePool reconcilers): it provisions the infra cluster and control plane,
keeps a cloud-side set of instances for each infra pool sized to the owner MachinePool's
`spec.replicas`, writes the infra pool's `spec.providerIDList` and status, creates one infra
machine per instance when its personality has MachinePool Machines, and registers a Node per
instance through the Cluster's `<cluster>-kubeconfig` Secret, with every condition a kubelet
reports. It also stands in for the kubelet of those Nodes: pods bound to them run and become
Ready, and an evicted pod goes once its deletion is requested.

Like the real providers (`annotations.IsPaused(cluster, obj)`), it leaves an infra pool alone
while its Cluster has `spec.paused` or the pool carries the `cluster.x-k8s.io/paused` annotation:
no instance created, replaced or removed, no infra machine or status written. Its kubelets keep
posting, as real ones do.

Misbehaviour is asked for by instance name, `never_join` (no Node), `not_ready` (Node
NotReady) and `vanished` (a stale providerID: the instance and its Node gone, still listed), or
for the whole provider: a kubelet without the pressure conditions, an infra pool
that reports only one contract's readiness field.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import shutil
import ssl
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .kinds import Kinds
from .kubeapi import APIError, KubeAPI
from .pki import write_private

CAPI = "cluster.x-k8s.io"
INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta1"
INFRA_API_AWS = "infrastructure.cluster.x-k8s.io/v1beta2"
CONTROLPLANE_API = "controlplane.cluster.x-k8s.io/v1beta2"
FINALIZER = "test-provider.kubectl-machinepool.invalid/instance"
PAUSED_ANNOTATION = f"{CAPI}/paused"
CLUSTER_NAME_LABEL = f"{CAPI}/cluster-name"
KUBELET_VERSION = "v1.36.3"
Obj = dict[str, Any]


@dataclass(frozen=True)
class Personality:
    """How a provider shapes its pools: kinds, providerIDs, and whether it has MPM Machines."""

    name: str
    pool_api: str
    pool_kind: str
    cluster_kind: str
    machine_kind: str | None

    def provider_id(self, namespace: str, pool: str, index: int) -> str:
        """Unique across the live cluster: every scenario's Nodes share one workload cluster."""
        if self.name == "azure":
            return (
                "azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                f"{namespace}/providers/Microsoft.Compute/virtualMachineScaleSets/{pool}/"
                f"virtualMachines/{index}"
            )
        if self.name == "docker":  # a container per instance, named as its Node
            return f"docker:////{namespace}-{pool}-{index}"
        salt = int(namespace.removeprefix("t-"), 16)
        return f"aws:///us-east-1a/i-{salt:08x}{index:09x}"


# CAPZ-like: AzureMachinePoolMachines, the delete-machine annotation chooses the scale-in victim.
AZURE = Personality(
    "azure", INFRA_API, "AzureMachinePool", "AzureCluster", "AzureMachinePoolMachine"
)
# CAPA-like without its MachinePoolMachines gate: providerIDList only, the ASG picks the victim.
AWS = Personality("aws", INFRA_API_AWS, "AWSMachinePool", "AWSCluster", None)
# CAPD-like (v1.14's DockerMachinePool): DockerMachines, a container per instance, rolled when
# its image (the kind image of the version, or spec.template.customImage) is not the pool's.
DOCKER = Personality("docker", INFRA_API_AWS, "DockerMachinePool", "DockerCluster", "DockerMachine")


@dataclass
class Instance:
    name: str  # also the Node's and the infra machine's name
    index: int
    provider_id: str
    # The Kubernetes version of the model it was created from: what its kubelet runs.
    version: str = KUBELET_VERSION
    # The image of that model (an AzureMachinePool's spec.template.image), when the pool names one.
    image: str | None = None
    node_uid: str | None = None


@dataclass
class PoolState:
    instances: dict[str, Instance] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=itertools.count)
    # Every model (version, image) the pool was rolled to, in order: a change of either rolls it.
    models: list[tuple[str, str | None]] = field(default_factory=list)


class TestProvider:
    """Reconciles one namespace every `interval` seconds in a background thread."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        api: KubeAPI,
        namespace: str,
        personality: Personality,
        capi_version: str = "v1beta2",
        interval: float = 0.3,
    ) -> None:
        self.api = api
        self.capi = f"{CAPI}/{capi_version}"
        self.namespace = namespace
        self.personality = personality
        self.interval = interval
        self.pools: dict[str, PoolState] = {}
        self.never_join: set[str] = set()
        # Instances terminated behind the provider's back: providerID still listed, no Node.
        self.vanished: set[str] = set()
        self.not_ready: set[str] = set()
        # Instances a rolling update replaced without Machines: their Nodes are deleted.
        self.terminated: set[str] = set()
        # A kubelet that posts only Ready (no MemoryPressure/DiskPressure/PIDPressure).
        self.pressure_conditions = True
        # Which readiness the infra pool reports: both, or only one contract's field.
        self.pool_ready_fields: tuple[str, ...] = ("ready", "provisioned")
        self.errors: list[str] = []
        # The infra pools the last pass left alone because reconciliation is paused, and how
        # many passes have ended: a test waits on these, not on the clock, to see it held.
        self.held: set[str] = set()
        self.passes = 0
        self._workload: dict[str, KubeAPI] = {}
        self._tmp = Path(tempfile.mkdtemp(prefix="kmp-provider-"))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._loop, name=f"provider-{namespace}", daemon=True
        )

    # --- life cycle -----------------------------------------------------------------------------

    def __enter__(self) -> TestProvider:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        shutil.rmtree(self._tmp, ignore_errors=True)  # the workload credentials

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                with self._lock:
                    self.reconcile()
            except Exception:  # keep playing; the test reads `errors` when something hangs
                self.errors.append(traceback.format_exc(limit=3))
                del self.errors[:-20]
            self._stop.wait(self.interval)

    @contextlib.contextmanager
    def paused(self) -> Any:
        """Hold the provider still while a test changes its misbehaviour or reads its state (the
        test's own hold, between two passes; Cluster API's pause is `held`)."""
        with self._lock:
            yield self

    # --- paths ----------------------------------------------------------------------------------

    def _list(self, api_version: str, plural: str) -> list[Obj]:
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        return self.api.request("GET", f"{base}/namespaces/{self.namespace}/{plural}")["items"]  # type: ignore[no-any-return]

    def _plural(self, kind: str) -> str:
        return self.api.kinds.lookup("", kind).plural

    def _patch(self, obj: Obj, body: Obj, subresource: str = "") -> Obj:
        path = self.api.path_of(obj, obj["metadata"]["name"]) + subresource
        return self.api.request("PATCH", path, body, "application/merge-patch+json")  # type: ignore[no-any-return]

    # --- one pass -------------------------------------------------------------------------------

    def reconcile(self) -> None:
        self._provision_clusters()
        self._provision_control_planes()
        clusters = self._list(self.capi, "clusters")
        held: set[str] = set()
        for pool in self._list(self.personality.pool_api, self._plural(self.personality.pool_kind)):
            if self._paused(pool, clusters):
                held.add(pool["metadata"]["name"])
                continue
            self._reconcile_pool(pool)
        self.held = held
        # The kubelets are no controller: they keep posting whatever is paused.
        for cluster in clusters:
            workload = self.workload(cluster["metadata"]["name"])
            if workload is not None:
                self._kubelet(workload)
        self.passes += 1

    def _paused(self, pool: Obj, clusters: list[Obj]) -> bool:
        """annotations.IsPaused(cluster, pool): the providers' reconcilers return at once, before
        any deletion, finalizer or status work. The Cluster is the one the pool's cluster-name
        label names (util.GetClusterFromMetadata), else the owner MachinePool's clusterName."""
        meta = pool["metadata"]
        if PAUSED_ANNOTATION in (meta.get("annotations") or {}):
            return True
        name = (meta.get("labels") or {}).get(CLUSTER_NAME_LABEL)
        if name is None:
            owner = self._owner_pool(pool)
            name = ((owner or {}).get("spec") or {}).get("clusterName")
        return any(
            c["metadata"]["name"] == name and (c.get("spec") or {}).get("paused") is True
            for c in clusters
        )

    def _provision_clusters(self) -> None:
        kind = self.personality.cluster_kind
        api_version = self.personality.pool_api
        for infra in self._list(api_version, self._plural(kind)):
            self._finalize_if_deleting(infra)
            status = infra.get("status") or {}
            if not status.get("ready"):
                self._patch(
                    infra,
                    {"status": {"ready": True, "initialization": {"provisioned": True}}},
                    "/status",
                )
            if not (infra.get("spec") or {}).get("controlPlaneEndpoint"):
                endpoint = {"host": "127.0.0.1", "port": 6443}
                self._patch(infra, {"spec": {"controlPlaneEndpoint": endpoint}})

    def _provision_control_planes(self) -> None:
        for plane in self._list(CONTROLPLANE_API, "kubeadmcontrolplanes"):
            self._finalize_if_deleting(plane)
            status = plane.get("status") or {}
            if not status.get("externalManagedControlPlane"):
                self._patch(
                    plane,
                    {
                        "status": {
                            "initialization": {"controlPlaneInitialized": True},
                            # No control-plane Machines here: without this the Machine
                            # controller skips drain and Node deletion (isDeleteNodeAllowed).
                            "externalManagedControlPlane": True,
                            "ready": True,
                            "initialized": True,
                            "version": (plane.get("spec") or {}).get("version"),
                            "replicas": 1,
                            "readyReplicas": 1,
                            "availableReplicas": 1,
                            "upToDateReplicas": 1,
                        }
                    },
                    "/status",
                )

    def _finalize_if_deleting(self, obj: Obj) -> bool:
        meta = obj["metadata"]
        if not meta.get("deletionTimestamp"):
            if FINALIZER not in (meta.get("finalizers") or []):
                self._patch(
                    obj, {"metadata": {"finalizers": [*(meta.get("finalizers") or []), FINALIZER]}}
                )
            return False
        kept = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        if kept != (meta.get("finalizers") or []):
            self._patch(obj, {"metadata": {"finalizers": kept}})
        return True

    def _with_owner(self, pool: Obj) -> tuple[Obj, Obj] | None:
        """The pool read again after its owner MachinePool, and the owner; None when not
        adopted yet, gone, or paused meanwhile. Read in this order, a pause written before the
        owner's version is never missed while the version is seen (the listing may be older
        than both), as a controller's cache holds both at one moment."""
        owner = self._owner_pool(pool)
        if owner is None:
            return None
        try:
            again = self.api.request("GET", self.api.path_of(pool, pool["metadata"]["name"]))
        except APIError as err:
            if err.status == 404:
                return None
            raise
        return None if self._paused(again, []) else (again, owner)

    def _owner_pool(self, pool: Obj) -> Obj | None:
        for ref in pool["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "MachinePool":
                try:
                    return self.api.request(  # type: ignore[no-any-return]
                        "GET",
                        f"/apis/{self.capi}/namespaces/{self.namespace}/machinepools/{ref['name']}",
                    )
                except APIError as err:
                    if err.status == 404:
                        return None
                    raise
        return None

    def _reconcile_pool(self, pool: Obj) -> None:
        name = pool["metadata"]["name"]
        state = self.pools.setdefault(name, PoolState())
        if pool["metadata"].get("deletionTimestamp"):
            # The cloud deletes the whole group with it.
            self._release_machines(pool)
            state.instances.clear()
            self._finalize_if_deleting(pool)
            return
        self._finalize_if_deleting(pool)
        found = self._with_owner(pool)
        if found is None:
            return
        pool, owner = found
        self._infra_machines_deleted(pool, state)
        wanted = int((owner.get("spec") or {}).get("replicas") or 0)
        target, image = _model(owner, pool, state)
        # A new model rolls like CAPZ's default strategy (maxSurge 1, maxUnavailable 0): one
        # new instance beside the old ones, and an old one goes only once it has joined.
        old = [i for i in state.instances.values() if (i.version, i.image) != (target, image)]
        surge = 1 if old else 0
        while len(state.instances) < wanted + surge:
            index = next(state.counter)
            instance_name = f"{name}-{index}"
            state.instances[instance_name] = Instance(
                instance_name,
                index,
                self.personality.provider_id(self.namespace, name, index),
                target,
                image=image,
            )
        excess = len(state.instances) - wanted
        if excess > 0 and old:
            fresh = [i for i in state.instances.values() if (i.version, i.image) == (target, image)]
            if all(self._joined(i) for i in fresh):
                self._scale_in(pool, state, excess, only={i.name for i in old})
        elif excess > 0:
            self._scale_in(pool, state, excess)
        ids = [i.provider_id for i in state.instances.values()]
        if (pool.get("spec") or {}).get("providerIDList") != ids:
            self._patch(pool, {"spec": {"providerIDList": ids}})
        status: Obj = {"replicas": len(ids)}
        if "ready" in self.pool_ready_fields:
            status["ready"] = True
        if "provisioned" in self.pool_ready_fields:
            status["initialization"] = {"provisioned": True}
        if self.personality.machine_kind:
            status["infrastructureMachineKind"] = self.personality.machine_kind
            self._ensure_machines(pool, state, (target, image))
        current = pool.get("status") or {}
        if any(current.get(k) != v for k, v in status.items()):
            self._patch(pool, {"status": status}, "/status")

    # --- scale in -------------------------------------------------------------------------------

    def _machines_by_infra(self, pool: Obj) -> dict[str, Obj]:
        cluster = pool["metadata"]["labels"].get(f"{CAPI}/cluster-name", "")
        machines = self._list(self.capi, "machines")
        return {
            m["spec"]["infrastructureRef"]["name"]: m
            for m in machines
            if m["spec"].get("clusterName") == cluster
        }

    def _joined(self, instance: Instance) -> bool:
        return (
            instance.node_uid is not None
            and instance.name not in self.never_join
            and instance.name not in self.not_ready
        )

    def _scale_in(
        self, pool: Obj, state: PoolState, count: int, only: set[str] | None = None
    ) -> None:
        """Like CAPZ: Machines annotated delete-machine first, then the oldest instances.
        Without MachinePool Machines (the ASG), the newest instances go, undrained. only: the
        instances that may go (a rolling update's old ones, oldest first)."""
        names = [n for n in state.instances if only is None or n in only]
        if not self.personality.machine_kind:
            for instance_name in names[-count:] if only is None else names[:count]:
                del state.instances[instance_name]
                if only is not None:  # replaced: the cloud node controller deletes its Node
                    self.terminated.add(instance_name)
            return
        machines = self._machines_by_infra(pool)
        annotated = [
            n
            for n in names
            if f"{CAPI}/delete-machine"
            in ((machines.get(n) or {}).get("metadata", {}).get("annotations") or {})
        ]
        victims = (annotated + [n for n in names if n not in annotated])[:count]
        for instance_name in victims:
            machine = machines.get(instance_name)
            if machine is None:
                # No Machine yet (the MachinePool controller makes it a moment later, on a busy
                # machine seconds later): like CAPZ, the infra machine of a VM gone from the
                # scale set goes too, or a Machine would be made for it and never go.
                del state.instances[instance_name]
                for infra in self._infra_machines(pool):
                    if infra["metadata"]["name"] == instance_name:
                        with contextlib.suppress(APIError):
                            self.api.request("DELETE", self.api.path_of(infra, instance_name))
                continue
            # The owner Machine goes first: the Machine controller drains, then deletes the
            # infra machine, whose deletion removes the instance (_infra_machines_deleted).
            if not machine["metadata"].get("deletionTimestamp"):
                with contextlib.suppress(APIError):
                    self.api.request(
                        "DELETE", self.api.path_of(machine, machine["metadata"]["name"])
                    )

    def _release_machines(self, pool: Obj) -> None:
        """The group is gone in the cloud: its infra machines let go of their instances."""
        if not self.personality.machine_kind:
            return
        for infra in self._infra_machines(pool):
            meta = infra["metadata"]
            if FINALIZER in (meta.get("finalizers") or []):
                kept = [f for f in meta["finalizers"] if f != FINALIZER]
                self._patch(infra, {"metadata": {"finalizers": kept}})

    # --- infra machines -------------------------------------------------------------------------

    def _infra_machines(self, pool: Obj) -> list[Obj]:
        assert self.personality.machine_kind
        return [
            m
            for m in self._list(pool["apiVersion"], self._plural(self.personality.machine_kind))
            if any(
                r.get("uid") == pool["metadata"]["uid"]
                for r in m["metadata"].get("ownerReferences") or []
            )
        ]

    def _infra_machines_deleted(self, pool: Obj, state: PoolState) -> None:
        """An infra machine being deleted takes its instance with it, then lets go."""
        if not self.personality.machine_kind:
            return
        for infra in self._infra_machines(pool):
            if infra["metadata"].get("deletionTimestamp"):
                state.instances.pop(infra["metadata"]["name"], None)
                self._finalize_if_deleting(infra)

    def _ensure_machines(
        self, pool: Obj, state: PoolState, current: tuple[str, str | None]
    ) -> None:
        assert self.personality.machine_kind
        existing = {m["metadata"]["name"]: m for m in self._infra_machines(pool)}
        labels = {
            f"{CAPI}/cluster-name": pool["metadata"]["labels"].get(f"{CAPI}/cluster-name", ""),
            f"{CAPI}/pool-name": self._owner_name(pool),
        }
        for instance in state.instances.values():
            latest = (instance.version, instance.image) == current
            model = {"version": instance.version, "latestModelApplied": latest}
            if instance.name in existing:
                status = existing[instance.name].get("status") or {}
                if any(status.get(k) != v for k, v in model.items()):
                    self._patch(existing[instance.name], {"status": model}, "/status")
                continue
            machine = {
                "apiVersion": pool["apiVersion"],
                "kind": self.personality.machine_kind,
                "metadata": {
                    "name": instance.name,
                    "namespace": self.namespace,
                    "labels": labels,
                    "finalizers": [FINALIZER],
                    "ownerReferences": [
                        {
                            "apiVersion": pool["apiVersion"],
                            "kind": pool["kind"],
                            "name": pool["metadata"]["name"],
                            "uid": pool["metadata"]["uid"],
                        }
                    ],
                },
                "spec": {"providerID": instance.provider_id},
                "status": {
                    "ready": True,
                    "initialization": {"provisioned": True},
                    "provisioningState": "Succeeded",
                    **model,
                },
            }
            self.api.create(machine)

    def _owner_name(self, pool: Obj) -> str:
        for ref in pool["metadata"].get("ownerReferences") or []:
            if ref.get("kind") == "MachinePool":
                return str(ref["name"])
        return ""

    # --- the workload cluster and its kubelets --------------------------------------------------

    def workload(self, cluster: str) -> KubeAPI | None:
        """The workload cluster's API, from the `<cluster>-kubeconfig` Secret as CAPI reads it."""
        if cluster in self._workload:
            return self._workload[cluster]
        try:
            secret = self.api.request(
                "GET", f"/api/v1/namespaces/{self.namespace}/secrets/{cluster}-kubeconfig"
            )
        except APIError as err:
            if err.status == 404:
                return None
            raise
        config = yaml.safe_load(base64.b64decode(secret["data"]["value"]))
        entry = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        base = self._tmp / cluster
        base.mkdir(exist_ok=True)
        ca = write_private(base / "ca.crt", base64.b64decode(entry["certificate-authority-data"]))
        cert = write_private(base / "tls.crt", base64.b64decode(user["client-certificate-data"]))
        key = write_private(base / "tls.key", base64.b64decode(user["client-key-data"]))
        context = ssl.create_default_context(cafile=str(ca))
        context.load_cert_chain(str(cert), str(key))
        api = KubeAPI(entry["server"], context, Kinds())
        self._workload[cluster] = api
        return api

    def _kubelet(self, workload: KubeAPI) -> None:
        nodes = {
            n["metadata"]["name"]: n
            for n in workload.request("GET", "/api/v1/nodes")["items"]
            if n["metadata"]["name"].startswith(self.namespace + "-")
        }
        for gone in self.terminated:
            if f"{self.namespace}-{gone}" in nodes:
                with contextlib.suppress(APIError):
                    workload.request("DELETE", f"/api/v1/nodes/{self.namespace}-{gone}")
        for state in self.pools.values():
            for instance in state.instances.values():
                node_name = f"{self.namespace}-{instance.name}"
                if instance.name in self.never_join:
                    continue
                node = nodes.get(node_name)
                if instance.name in self.vanished:
                    # Gone in the cloud, so its Node goes (the cloud node controller's job);
                    # the group still lists it.
                    if node is not None:
                        workload.request("DELETE", f"/api/v1/nodes/{node_name}")
                    continue
                if node is None:
                    node = self._register(workload, node_name, instance)
                instance.node_uid = node["metadata"]["uid"]
                ready = instance.name not in self.not_ready
                self._post_status(workload, node, ready, instance.version)
        self._run_pods(workload, set(nodes))

    def _register(self, workload: KubeAPI, node_name: str, instance: Instance) -> Obj:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": node_name,
                "labels": {
                    "kubernetes.io/hostname": node_name,
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                },
            },
            "spec": {"providerID": instance.provider_id},
        }
        return workload.request("POST", "/api/v1/nodes", node)  # type: ignore[no-any-return]

    def _post_status(self, workload: KubeAPI, node: Obj, ready: bool, version: str) -> None:
        current = node.get("status") or {}
        conditions = {c["type"]: c["status"] for c in current.get("conditions") or []}
        wanted = {"Ready": "True" if ready else "False"}
        if self.pressure_conditions:
            wanted.update(MemoryPressure="False", DiskPressure="False", PIDPressure="False")
        running = (current.get("nodeInfo") or {}).get("kubeletVersion")
        if conditions == wanted and running == version:
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        reasons = {
            "Ready": "KubeletReady" if ready else "KubeletNotReady",
            "MemoryPressure": "KubeletHasSufficientMemory",
            "DiskPressure": "KubeletHasNoDiskPressure",
            "PIDPressure": "KubeletHasSufficientPID",
        }
        status = {
            "conditions": [
                {
                    "type": kind,
                    "status": value,
                    "reason": reasons[kind],
                    "message": "kubelet is posting ready status"
                    if kind == "Ready" and ready
                    else ("container runtime is down" if kind == "Ready" else "ok"),
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
                for kind, value in wanted.items()
            ],
            "nodeInfo": {
                "kubeletVersion": version,
                "kubeProxyVersion": version,
                "operatingSystem": "linux",
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.1.0",
                "kernelVersion": "6.8.0",
                "osImage": "Ubuntu 24.04 LTS",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
            "addresses": [{"type": "Hostname", "address": node["metadata"]["name"]}],
        }
        workload.request(
            "PATCH",
            f"/api/v1/nodes/{node['metadata']['name']}/status",
            {"status": status},
            "application/merge-patch+json",
        )

    def _run_pods(self, workload: KubeAPI, nodes: set[str]) -> None:
        pods = workload.request("GET", f"/api/v1/namespaces/{self.namespace}/pods")["items"]
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node not in nodes:
                continue
            path = f"/api/v1/namespaces/{self.namespace}/pods/{pod['metadata']['name']}"
            if pod["metadata"].get("deletionTimestamp"):
                # The containers stopped: the kubelet confirms the deletion.
                with contextlib.suppress(APIError):
                    workload.request("DELETE", path, {"gracePeriodSeconds": 0})
                continue
            if (pod.get("status") or {}).get("phase") != "Running":
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                ready = {"status": "True", "lastTransitionTime": now}
                workload.request(
                    "PATCH",
                    f"{path}/status",
                    {
                        "status": {
                            "phase": "Running",
                            "conditions": [
                                {"type": t, **ready}
                                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                            ],
                            "startTime": now,
                        }
                    },
                    "application/merge-patch+json",
                )


def _model(owner: Obj, pool: Obj, state: PoolState) -> tuple[str, str | None]:
    """What the pool's instances should run: the MachinePool's version and the infra pool's
    image; each new one is recorded in state.models."""
    target = ((owner.get("spec") or {}).get("template") or {}).get("spec", {}).get("version")
    model = (target or KUBELET_VERSION, _image(pool))
    if not state.models or state.models[-1] != model:
        state.models.append(model)
    return model


def _image(pool: Obj) -> str | None:
    """The image version an AzureMachinePool names (spec.template.image.computeGallery), or the
    custom image a DockerMachinePool names, if any: part of the model the provider rolls
    instances to."""
    template = (pool.get("spec") or {}).get("template") or {}
    if pool.get("kind") == "DockerMachinePool":
        return template.get("customImage")
    gallery = (template.get("image") or {}).get("computeGallery") or {}
    return gallery.get("version")
