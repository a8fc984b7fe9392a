"""What a namespace holds, object by object, for tests that must prove what a run changed.

A snapshot lists every namespaced kind the API server serves (discovered once) and keeps each
object's content without the fields every write bumps (resourceVersion, managedFields,
generation), so "unchanged" means the same content, not only the same resourceVersion.
Scenarios loaded here reach their workload cluster through a fault proxy too: every request the
plugin makes to the test API server then passes the proxy, which counts it.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from typing import Any

from .controlplane import User
from .faultproxy import FaultProxy
from .kinds import Kinds
from .kubeapi import APIError, KubeAPI
from .management import ManagementCluster, create_scenario
from .scenarios import SCENARIOS, VARIANTS
from .waiting import polls

IGNORED_METADATA = ("resourceVersion", "managedFields", "generation")


class FastKubeAPI(KubeAPI):
    """KubeAPI over one kept-alive connection: setup and snapshots make thousands of requests."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext, kinds: Kinds) -> None:
        super().__init__(f"https://{host}:{port}", context, kinds)
        self._host, self._port = host, port
        self._conn: http.client.HTTPSConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _exchange(
        self, method: str, path: str, data: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        # Reads may be tried again on a new connection: after the server closed an idle one,
        # or after a timeout (a loaded box can stall a request; a write is never sent twice).
        attempts = 3 if method == "GET" else 2
        for attempt in range(1, attempts + 1):
            if self._conn is None:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=30, context=self.context
                )
            try:
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                return response.status, response.read()
            except (
                http.client.RemoteDisconnected,
                ConnectionResetError,
                BrokenPipeError,
                ssl.SSLEOFError,  # TLS's word for the same: the server closed the idle connection
            ):
                self.close()
                if attempt == attempts:
                    raise
            except (TimeoutError, OSError, http.client.HTTPException):
                self.close()  # a connection mid-request cannot carry another one
                if method != "GET" or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        status, raw = self._exchange(method, path, data, headers)
        if not 200 <= status < 300:
            raise APIError(status, raw.decode(errors="replace"))
        return json.loads(raw) if raw else None


@dataclass(frozen=True, order=True)
class ObjectKey:
    kind: str
    group: str
    namespace: str
    name: str

    @property
    def display(self) -> str:
        """How the plugin names an object: "Machine ns/name" (a Node: "Node name")."""
        return (
            f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"Node {self.name}"
        )


@dataclass(frozen=True)
class Collection:
    group: str
    version: str
    plural: str
    kind: str

    def path(self, namespace: str) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/namespaces/{namespace}/{self.plural}"


def _listable(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        r
        for r in resources
        if r.get("namespaced") and "/" not in r["name"] and "list" in r.get("verbs", [])
    ]


def namespaced_collections(api: KubeAPI) -> list[Collection]:
    """Every namespaced kind the server lists, each once: a group's preferred version first,
    then kinds only other versions serve (the Azure kinds are v1beta1 only)."""
    found: dict[tuple[str, str], Collection] = {}
    for r in _listable(api.request("GET", "/api/v1")["resources"]):
        found[("", r["name"])] = Collection("", "v1", r["name"], r["kind"])
    for group in api.request("GET", "/apis")["groups"]:
        preferred = group["preferredVersion"]["version"]
        versions = sorted((v["version"] for v in group["versions"]), key=lambda v: v != preferred)
        for version in versions:
            for r in _listable(api.request("GET", f"/apis/{group['name']}/{version}")["resources"]):
                found.setdefault(
                    (group["name"], r["name"]),
                    Collection(group["name"], version, r["name"], r["kind"]),
                )
    return sorted(found.values(), key=lambda c: (c.group, c.plural))


def normalized(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what the server moves on every write. status.observedGeneration
    goes too: no command writes status, and observe() keeps it at the generation. The rest is
    shared with `obj`, not copied: neither is changed afterwards."""
    content = dict(obj)
    if isinstance(obj.get("metadata"), dict):
        content["metadata"] = {
            k: v for k, v in obj["metadata"].items() if k not in IGNORED_METADATA
        }
    if isinstance(obj.get("status"), dict):
        content["status"] = {k: v for k, v in obj["status"].items() if k != "observedGeneration"}
    return content


Snapshot = dict[ObjectKey, dict[str, Any]]


def _list(api: KubeAPI, path: str) -> dict[str, Any]:
    # A CRD nobody listed yet answers 429 while its watch cache starts.
    for _ in polls(0.1):
        try:
            return api.request("GET", path)  # type: ignore[no-any-return]
        except APIError as err:
            if err.status != 429:
                raise
    return api.request("GET", path)  # type: ignore[no-any-return]


def listing(
    api: KubeAPI, collections: list[Collection], namespace: str, nodes: tuple[str, ...] = ()
) -> Snapshot:
    """Every object in the namespace, by kind and name, as the server holds it; and the
    scenario's Nodes (cluster-scoped, in the workload cluster, which is this same server)."""
    objects: Snapshot = {}
    for collection in collections:
        for item in _list(api, collection.path(namespace))["items"]:
            key = ObjectKey(collection.kind, collection.group, namespace, item["metadata"]["name"])
            objects[key] = item
    for name in nodes:
        try:
            objects[ObjectKey("Node", "", "", name)] = api.request("GET", f"/api/v1/nodes/{name}")
        except APIError as err:
            if err.status != 404:
                raise
    return objects


def snapshot(
    api: KubeAPI, collections: list[Collection], namespace: str, nodes: tuple[str, ...] = ()
) -> Snapshot:
    """listing(), each object normalized."""
    return {
        key: normalized(obj) for key, obj in listing(api, collections, namespace, nodes).items()
    }


def changes(
    before: Snapshot, after: Snapshot
) -> dict[ObjectKey, tuple[dict[str, Any] | None, dict[str, Any] | None]]:
    """Objects whose content differs (None: absent on that side)."""
    return {
        key: (before.get(key), after.get(key))
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    }


@dataclass(frozen=True)
class ThroughProxy:
    """Stands in for the APIServer in ManagementCluster.workload_kubeconfig_secret, so the
    `<cluster>-kubeconfig` Secret a scenario gets sends the workload reads through the proxy."""

    admin: User
    proxy: FaultProxy

    def kubeconfig_dict(self, user: User, context: str | None = None) -> dict[str, Any]:
        return self.proxy.kubeconfig_dict(user, context or "fault-proxy")


@dataclass(frozen=True)
class Loaded:
    namespace: str
    salt: str
    nodes: tuple[str, ...]
    objects: Snapshot
    # The kinds the namespace held objects of when it was made.
    present: tuple[Collection, ...]

    def listing(self, api: KubeAPI, collections: list[Collection], *, created: bool) -> Snapshot:
        """The namespace now. An object of a kind it did not hold can only come from a create
        request: unless one was sent (`created`), listing the kinds it held sees every object."""
        return listing(
            api, collections if created else list(self.present), self.namespace, self.nodes
        )

    def snapshot(self, api: KubeAPI, collections: list[Collection], *, created: bool) -> Snapshot:
        """listing(), each object normalized."""
        return {
            k: normalized(o) for k, o in self.listing(api, collections, created=created).items()
        }


def load_through_proxy(
    api: KubeAPI,
    generation: str,
    proxy: FaultProxy,
    admin: User,
    scenario: str,
    collections: list[Collection],
) -> Loaded:
    """A fresh namespace holding the scenario, its workload Secret pointing at the proxy."""
    cluster = ManagementCluster(generation, ThroughProxy(admin, proxy), api)  # type: ignore[arg-type]
    namespace = cluster.new_namespace()
    salt = namespace.removeprefix("t-")
    objects = {**SCENARIOS, **VARIANTS}[scenario](generation, namespace, salt)
    create_scenario(cluster, objects)
    nodes = tuple(o["metadata"]["name"] for o in objects if o["kind"] == "Node")
    held = snapshot(api, collections, namespace, nodes)
    kinds = {(k.group, k.kind) for k in held}
    present = tuple(c for c in collections if (c.group, c.kind) in kinds)
    return Loaded(namespace, salt, nodes, held, present)


def merge_patch(current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns current into wanted."""
    patch: dict[str, Any] = {}
    for key in current.keys() | wanted.keys():
        if key not in wanted:
            patch[key] = None
        elif key not in current:
            patch[key] = wanted[key]
        elif isinstance(current[key], dict) and isinstance(wanted[key], dict):
            inner = merge_patch(current[key], wanted[key])
            if inner:
                patch[key] = inner
        elif current[key] != wanted[key]:
            patch[key] = wanted[key]
    return patch


def put_back(
    api: KubeAPI,
    collections: list[Collection],
    changed: dict[ObjectKey, tuple[dict[str, Any] | None, dict[str, Any] | None]],
) -> Snapshot | None:
    """Write changed objects back to what they held, where a patch can: annotations, labels,
    spec; the server's answers, each object as it now holds it. None (nothing sent) when one
    cannot be: deleted, deleting, created, status changed. The caller still compares the
    answers with what the objects held before trusting the namespace again."""
    patches = []
    by_kind = {(c.group, c.kind): c for c in collections}
    for key, (before, after) in changed.items():
        collection = by_kind.get((key.group, key.kind))
        if before is None or after is None or collection is None or not key.namespace:
            return None
        patch = merge_patch(after, before)
        if not set(patch) <= {"metadata", "spec"} or not set(patch.get("metadata", {})) <= {
            "annotations",
            "labels",
        }:
            return None
        patches.append((key, f"{collection.path(key.namespace)}/{key.name}", patch))
    return {
        key: api.request("PATCH", path, patch, "application/merge-patch+json")
        for key, path, patch in patches
    }


def observe(api: KubeAPI, loaded: Loaded) -> None:
    """Set each object's status.observedGeneration to its generation, as a controller would
    once it saw the spec: every scenario is loaded at rest, and a spec written (even when
    written back) is a new generation the next run would find still rolling out."""
    present = list(loaded.present)
    observe_held(api, present, listing(api, present, loaded.namespace))


def observe_held(api: KubeAPI, collections: list[Collection], held: Snapshot) -> None:
    """observe() over objects as the server holds them now, already read."""
    by_kind = {(c.group, c.kind): c for c in collections}
    for key, item in held.items():
        collection = by_kind.get((key.group, key.kind))
        generation = item["metadata"].get("generation")
        status = item.get("status")
        if (
            collection is None
            or not isinstance(status, dict)
            or status.get("observedGeneration") in (None, generation)
        ):
            continue
        path = f"{collection.path(key.namespace)}/{key.name}/status"
        observed = {"status": {"observedGeneration": generation}}
        api.request("PATCH", path, observed, "application/merge-patch+json")


def delete_nodes(api: KubeAPI, loaded: Loaded) -> None:
    """Drop the Nodes of a namespace no run reads again: every run lists all Nodes of the
    (shared) workload cluster, and thousands of stale ones would only cost time."""
    for name in loaded.nodes:
        try:
            api.request("DELETE", f"/api/v1/nodes/{name}")
        except APIError as err:
            if err.status != 404:
                raise
