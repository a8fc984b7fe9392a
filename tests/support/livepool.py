"""One Cluster with one MachinePool on the live cluster, and the waits a scenario needs.

The objects are what a user applies (no status, no uids): the controllers and the test provider
write everything else. Each pool gets its own namespace, and its Nodes carry the namespace in
their names, so scenarios sharing the live cluster never see each other's objects.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .kubeapi import APIError
from .live import LiveCluster
from .provider import CAPI, CONTROLPLANE_API, Personality, TestProvider
from .run import start_plugin

Obj = dict[str, Any]
WAIT = 90.0  # controllers requeue within 20-30 s; two rounds and a margin
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


# CAPZ's reference gallery image, pinned in the AzureMachinePool (upgrade derives its version).
GALLERY = {
    "template": {
        "image": {
            "computeGallery": {
                "gallery": "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019",
                "name": "capi-ubun2-2404",
                "version": "1.36.3",
            }
        }
    }
}


def _ref(generation: str, api_version: str, kind: str, name: str) -> Obj:
    if generation == "v1beta2":
        return {"apiGroup": api_version.split("/", maxsplit=1)[0], "kind": kind, "name": name}
    return {"apiVersion": api_version, "kind": kind, "name": name}


def pool_objects(
    personality: Personality,
    namespace: str,
    replicas: int,
    labels: dict[str, str] | None = None,
    generation: str = "v1beta2",
    cluster: str = "work",
    pool: str = "pool",
) -> list[Obj]:
    infra = personality.pool_api
    capi = f"{CAPI}/{generation}"
    return [
        {
            "apiVersion": infra,
            "kind": personality.cluster_kind,
            "metadata": {"name": cluster, "namespace": namespace},
            "spec": {},
        },
        {
            "apiVersion": CONTROLPLANE_API,
            "kind": "KubeadmControlPlane",
            "metadata": {"name": f"{cluster}-control-plane", "namespace": namespace},
            "spec": {"version": "v1.36.3", "replicas": 1},
        },
        {
            "apiVersion": capi,
            "kind": "Cluster",
            "metadata": {"name": cluster, "namespace": namespace},
            "spec": {
                "infrastructureRef": _ref(generation, infra, personality.cluster_kind, cluster),
                "controlPlaneRef": _ref(
                    generation,
                    CONTROLPLANE_API.replace("/v1beta2", f"/{generation}"),
                    "KubeadmControlPlane",
                    f"{cluster}-control-plane",
                ),
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{pool}-bootstrap", "namespace": namespace},
            "data": {"value": "IyEvYmluL3NoCg=="},
        },
        {
            "apiVersion": infra,
            "kind": personality.pool_kind,
            "metadata": {"name": pool, "namespace": namespace},
            "spec": {},
        },
        {
            "apiVersion": capi,
            "kind": "MachinePool",
            "metadata": {"name": pool, "namespace": namespace},
            "spec": {
                "clusterName": cluster,
                "replicas": replicas,
                "template": {
                    "metadata": {"labels": dict(labels or {})},
                    "spec": {
                        "clusterName": cluster,
                        "version": "v1.36.3",
                        "bootstrap": {"dataSecretName": f"{pool}-bootstrap"},
                        "infrastructureRef": _ref(generation, infra, personality.pool_kind, pool),
                    },
                },
            },
        },
    ]


def legacy_status(mp: Obj) -> Obj:
    """The Node-based counters: top level in v1beta1, status.deprecated.v1beta1 in v1beta2."""
    status = mp.get("status") or {}
    if mp["apiVersion"].endswith("/v1beta1"):
        return status
    return (status.get("deprecated") or {}).get("v1beta1") or {}


@dataclass
class LivePool:
    live: LiveCluster
    namespace: str
    provider: TestProvider
    cluster: str = "work"
    name: str = "pool"

    @property
    def api(self) -> Any:
        return self.live.api

    def path(self, plural: str, name: str | None = None, group: str = CAPI) -> str:
        version = "v1" if group == "" else (self.live.generation if group == CAPI else None)
        if version is None:
            version = self.provider.personality.pool_api.split("/")[1]
        base = "/api/v1" if group == "" else f"/apis/{group}/{version}"
        path = f"{base}/namespaces/{self.namespace}/{plural}"
        return f"{path}/{name}" if name else path

    def machine_pool(self) -> Obj:
        return self.api.request("GET", self.path("machinepools", self.name))  # type: ignore[no-any-return]

    def machines(self) -> list[Obj]:
        return self.api.request("GET", self.path("machines"))["items"]  # type: ignore[no-any-return]

    def nodes(self) -> list[Obj]:
        return [
            n
            for n in self.api.request("GET", "/api/v1/nodes")["items"]
            if n["metadata"]["name"].startswith(self.namespace + "-")
        ]

    def node_name(self, instance: str) -> str:
        return f"{self.namespace}-{instance}"

    def plugin_args(self, command: str, *extra: str) -> list[str]:
        """`command POOL -n NS --kubeconfig ADMIN extra...`, as the plugin is run on this pool."""
        kubeconfig = str(self.live.server.admin.kubeconfig)
        return [
            *command.split(),
            self.name,
            "-n",
            self.namespace,
            "--kubeconfig",
            kubeconfig,
            *extra,
        ]

    def run_plugin(self, home: Path, command: str, *extra: str) -> tuple[int, str, str]:
        """The installed plugin run to its end on this pool: exit code, stdout, stderr."""
        plugin = start_plugin(self.plugin_args(command, *extra), home)
        try:
            out, err = plugin.communicate(timeout=240)
        finally:
            plugin.kill()
        return plugin.returncode, out, err

    def control_plane_to(self, version: str) -> None:
        """The control plane goes first, as the skew policy wants (support.provider plays no
        control-plane Machines: its status says what it runs)."""
        path = f"/apis/{CONTROLPLANE_API}/namespaces/{self.namespace}/kubeadmcontrolplanes/"
        path += f"{self.cluster}-control-plane"
        self.patch(path, {"spec": {"version": version}})
        self.patch(path + "/status", {"status": {"version": version}})

    def at_rest(self, home: Path) -> None:
        """Until rollout status says the pool's rollout is done: upgrade refuses a pool still
        rolling (the provider has just written its providerIDList, say, not yet observed)."""

        def done() -> bool:
            _, out, _ = self.run_plugin(home, "rollout status", "-w=false", "-o", "json")
            return bool(json.loads(out)["pools"][0]["state"] == "done")

        self.wait("the pool at rest", done)

    def instances(self) -> dict[str, str]:
        """The provider's instances of the pool, by name, with the version each runs."""
        with self.provider.paused() as provider:
            return {i.name: i.version for i in provider.pools["pool"].instances.values()}

    def held_for(self, passes: int) -> None:
        """Until the provider has ended `passes` more passes, each leaving the pool alone
        (paused): a test waits on its passes, not on the clock, to see it held."""
        provider = self.provider
        self.wait("the provider holding the pool", lambda: "pool" in provider.held)
        first = provider.passes

        def held() -> bool:
            assert "pool" in provider.held, "the provider went on with the pool"
            return provider.passes >= first + passes

        self.wait(f"{passes} passes of the provider", held)

    def patch(self, path: str, body: Obj) -> Obj:
        return self.api.request("PATCH", path, body, "application/merge-patch+json")  # type: ignore[no-any-return]

    def wait(self, what: str, check: Callable[[], Any], timeout: float = WAIT) -> Any:
        """Poll `check` until it returns something truthy; on timeout say what the controllers
        and the provider were doing."""
        deadline = time.monotonic() + timeout
        while True:
            self.live.check_alive()
            try:
                found = check()
            except APIError as err:
                if err.status != 404:
                    raise
                found = None
            if found:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{what}: not after {timeout}s\nprovider errors: {self.provider.errors[-3:]}\n"
                    f"MachinePool status: {self.machine_pool().get('status')}\n"
                    f"Machines: {self._machine_lines()}\n"
                    f"provider's instances: {self.instances() if 'pool' in self.provider.pools else {}}\n"
                    f"manager log tail:\n{self.live.log()[-3000:]}"
                )
            time.sleep(0.5)

    def _machine_lines(self) -> list[str]:
        """Each Machine as a timeout's message needs it: its infra machine, node, deletion."""
        return [
            f"{m['metadata']['name']} infra={m['spec'].get('infrastructureRef', {}).get('name')} "
            f"node={((m.get('status') or {}).get('nodeRef') or {}).get('name')} "
            f"deleting={bool(m['metadata'].get('deletionTimestamp'))}"
            for m in self.machines()
        ]

    def _without_orphans(self, machines: list[Obj]) -> list[Obj]:
        """The Machines but those v1.14's scale-in race leaves, which are deleted: the
        MachinePool controller's apply to a Machine deleted meanwhile creates it again, for an
        infra machine already gone, and core never deletes it. The suite does as MP1601 tells
        an operator, so that a test about something else cannot wait on it forever. `machines`
        were listed first, so each infra machine of theirs that still exists is listed below."""
        kind = self.provider.personality.machine_kind
        if not kind:
            return machines
        group = self.provider.personality.pool_api.split("/")[0]
        plural = self.api.kinds.lookup("", kind).plural
        infra = {
            m["metadata"]["name"]
            for m in self.api.request("GET", self.path(plural, group=group))["items"]
        }
        kept = []
        for machine in machines:
            if machine["spec"]["infrastructureRef"]["name"] in infra or machine["metadata"].get(
                "deletionTimestamp"
            ):
                kept.append(machine)
                continue
            with contextlib.suppress(APIError):
                self.api.request("DELETE", self.path("machines", machine["metadata"]["name"]))
        return kept

    def _machines_ready(self, replicas: int) -> bool:
        """The MachinePool can say Running before the Machine controller has set each Machine's
        nodeRef and taken control of its infra machine; a scenario acts only after both."""
        machines = [
            m
            for m in self._without_orphans(self.machines())
            if not m["metadata"].get("deletionTimestamp")
        ]
        ready = [
            m
            for m in machines
            if (m.get("status") or {}).get("nodeRef")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (m.get("status") or {}).get("conditions") or []
            )
        ]
        return len(ready) == replicas == len(machines)

    def wait_left_with(self, instances: set[str], timeout: float = WAIT) -> Obj:
        """Until exactly these instances have Machines, then Running with just their Nodes."""
        self.wait(
            f"Machines {sorted(instances)}",
            lambda: (
                {m["metadata"]["name"] for m in self._without_orphans(self.machines())} == instances
            ),
            timeout,
        )
        pool = self.wait_running(len(instances))
        nodes = {n["metadata"]["name"] for n in self.nodes()}
        assert nodes == {self.node_name(i) for i in instances}, nodes
        return pool

    def phase(self) -> str | None:
        return (self.machine_pool().get("status") or {}).get("phase")

    def wait_running(self, replicas: int) -> Obj:
        def running() -> Obj | None:
            pool = self.machine_pool()
            status = pool.get("status") or {}
            ready = legacy_status(pool).get("readyReplicas")
            refs = status.get("nodeRefs") or []
            if status.get("phase") != "Running" or ready != replicas or len(refs) != replicas:
                return None
            if self.provider.personality.machine_kind and not self._machines_ready(replicas):
                return None
            return pool

        return self.wait(f"MachinePool Running with {replicas} ready", running)  # type: ignore[no-any-return]


@contextmanager
def live_pool(
    live: LiveCluster,
    personality: Personality,
    replicas: int,
    labels: dict[str, str] | None = None,
    setup: Callable[[TestProvider], None] | None = None,
    infra_spec: Obj | None = None,
) -> Iterator[LivePool]:
    namespace = live.mgmt.new_namespace()
    provider = TestProvider(live.api, namespace, personality, live.generation)
    if setup is not None:
        setup(provider)
    for obj in pool_objects(personality, namespace, replicas, labels, live.generation):
        if obj["kind"] == personality.pool_kind:
            obj["spec"] = dict(infra_spec or {})
        live.api.create(obj)
    live.mgmt.workload_kubeconfig_secret(namespace, "work")
    try:
        with provider:
            yield LivePool(live, namespace, provider)
    finally:
        # Nodes are cluster-wide: the next scenario should not list this one's.
        for node in live.api.request("GET", "/api/v1/nodes")["items"]:
            if node["metadata"]["name"].startswith(namespace + "-"):
                live.api.request("DELETE", f"/api/v1/nodes/{node['metadata']['name']}")


def budgeted_pods(pool: LivePool) -> None:
    """On pool-0: one pod whose budget allows nothing, one whose budget allows one eviction
    (its twin runs on pool-1)."""
    for name, node in (("blocked", "pool-0"), ("free", "pool-0"), ("free-twin", "pool-1")):
        app = name.removesuffix("-twin")
        pool.api.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": pool.namespace, "labels": {"app": app}},
                "spec": {
                    "nodeName": pool.node_name(node),
                    "containers": [{"name": "app", "image": "example.invalid/app:1"}],
                },
            }
        )
    for app in ("blocked", "free"):
        pool.api.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": app, "namespace": pool.namespace},
                "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": 1},
            }
        )
    budgets = f"/apis/policy/v1/namespaces/{pool.namespace}/poddisruptionbudgets"
    pool.wait(
        "budgets computed by the disruption controller",
        lambda: (
            {
                b["metadata"]["name"]: (b.get("status") or {}).get("disruptionsAllowed")
                for b in pool.api.request("GET", budgets)["items"]
            }
            == {"blocked": 0, "free": 1}
        ),
    )
