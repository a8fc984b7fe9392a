"""Our own client's boundary faked for unit tests of the app layer: Kube.request and Kube.watch
answered from objects in memory, by the API server each Kube's connection names.

Only those two methods are replaced (monkeypatched on the class): kubeconfigs are loaded, the
workload kubeconfig Secret decoded, lists walked and kinds resolved from their CRDs as in a real
run, and no byte of HTTP is sent (transport.py has tests of its own). The answers follow the API
server's rules the code relies on: merge patches, the scale subresource, preconditions (uid,
resourceVersion), a new resourceVersion per change, PartialObjectMetadata lists, and errors
made by the plugin's own apierrors.py from the status and message the server would send.

Faults are those of our boundary: an API error answered, or a reply lost (timeout, connection
reset) before or after the server applied the request; `during` runs while a request is in
flight (a test sends itself a signal there). Watches give their objects, then the events a test
puts in, until it ends them.
"""

from __future__ import annotations

import base64
import copy
import itertools
import json
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.apierrors import Retry, api_error, transport_errors
from kubectl_machinepool.kube.client import METADATA_ONLY, Kube
from kubectl_machinepool.kube.connection import connection_from_dict
from kubectl_machinepool.model.changes import LISTED

from .crds import provider_crds
from .kinds import Kinds
from .objects import CAPI
from .scenarios import SCENARIOS

Obj = dict[str, Any]
Key = tuple[str, str, str, str]
MANAGEMENT = "https://management.example:6443"
WORKLOAD = "https://prod-workload.example:6443"
# The credentials of the workload kubeconfig Secret scenario() adds.
WORKLOAD_TOKEN = "w0rkl0ad-t0ken"
CRD_PREFIX = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
# Groups every server serves, whatever CRDs it has.
BUILT_IN = {("", "v1"), ("apps", "v1"), ("policy", "v1")}
END = object()  # put into a watch: the server ends that watch


def kubeconfig(server: str, token: str, context: str = "test") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server}}],
        "users": [{"name": f"{context}-admin", "user": {"token": token}}],
        "contexts": [
            {"name": context, "context": {"cluster": context, "user": f"{context}-admin"}}
        ],
        "current-context": context,
    }


def kubeconfig_secret(namespace: str, cluster: str, server: str, token: str) -> Obj:
    """The `<cluster>-kubeconfig` Secret Cluster API writes: where the workload server is."""
    value = yaml.safe_dump(kubeconfig(server, token, cluster)).encode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "cluster.x-k8s.io/secret",
        "metadata": {
            "name": f"{cluster}-kubeconfig",
            "namespace": namespace,
            "uid": f"uid-{cluster}-kubeconfig",
            "labels": {f"{CAPI}/cluster-name": cluster},
        },
        "data": {"value": base64.b64encode(value).decode()},
    }


def transport_failure(where: str, error: OSError) -> MachinePoolError:
    """What Kube.request raises for a write whose connection failed this way (a timeout, a
    reset): made by the plugin's own translation."""
    try:
        with transport_errors(where):
            raise error
    except Retry as retry:
        return retry.error
    except MachinePoolError as err:
        return err
    raise AssertionError(f"{error!r} was not translated")


@dataclass(frozen=True)
class Asked:
    method: str
    path: str
    query: dict[str, str]
    accept: str
    body: Obj | None

    @property
    def plural(self) -> str:
        return _Path.of(self.path).plural


@dataclass
class Fault:
    """The nth request `matches` picks fails with `error`; `applied`: after the server acted."""

    matches: Callable[[Asked], bool]
    error: MachinePoolError
    applied: bool = False
    nth: int = 1
    seen: int = 0


@dataclass(frozen=True)
class _Path:
    group: str
    version: str
    namespace: str | None
    plural: str
    name: str | None
    subresource: str

    @classmethod
    def of(cls, path: str) -> _Path:
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            group, version, rest = parts[1], parts[2] if len(parts) > 2 else "", parts[3:]
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        rest += ["", "", ""]
        return cls(group, version, namespace, rest[0], rest[1] or None, rest[2])

    @property
    def resource(self) -> str:
        """How the API server's messages name the resource: machinepools.cluster.x-k8s.io."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _labels_match(selector: str, labels: dict[str, str]) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key.rstrip("=")) != value:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def _fields_match(selector: str, obj: Obj) -> bool:
    for term in filter(None, selector.split(",")):
        path, value = term.split("=", 1)
        found: Any = obj
        for key in path.split("."):
            found = found.get(key) if isinstance(found, dict) else None
        if str(found or "") != value:
            return False
    return True


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


class FakeServer:
    """One API server: its objects, what it was asked, and the faults it is to show."""

    def __init__(
        self, server: str, objects: Iterable[Obj] = (), *, capi: str | None = "v1beta2"
    ) -> None:
        """capi: the Cluster API version served (None: Cluster API is not installed)."""
        self.server = server
        # As Kube.where names it; the Kube asking sets it (fake_api).
        self.where = f"context 'test' ({server})"
        self.capi = capi
        self.kinds = Kinds()
        self.crds = {c["metadata"]["name"]: c for c in provider_crds()}
        self._versions = itertools.count(2000)
        self._lock = threading.RLock()
        self.objects: dict[Key, Obj] = {}
        self.asked: list[Asked] = []
        self.faults: list[Fault] = []
        # Kinds (plurals) this user may not list or get: the RBAC message kubectl would print.
        self.forbidden: set[str] = set()
        # Called with each request while it is in flight: before it is applied, and after.
        self.during: Callable[[Asked], None] | None = None
        self.landed: Callable[[Asked], None] | None = None
        self._watches: dict[str, queue.Queue[Any]] = {}
        self.watch_calls: list[str] = []
        self.open_watches = 0
        self._closed = threading.Condition(self._lock)
        for obj in objects:
            self.add(obj)

    # -- the store -------------------------------------------------------------------------

    def _key(self, obj: Obj) -> Key:
        group = str(obj["apiVersion"]).rpartition("/")[0]
        plural = self.kinds.lookup(obj["apiVersion"], obj["kind"]).plural
        meta = obj["metadata"]
        return (group, plural, meta.get("namespace", ""), meta["name"])

    def add(self, obj: Obj) -> Obj:
        stored = copy.deepcopy(obj)
        meta = stored["metadata"]
        meta.setdefault("uid", f"uid-{stored['kind']}-{meta['name']}".lower())
        meta["resourceVersion"] = str(next(self._versions))
        meta.setdefault("generation", 1)
        with self._lock:
            self.objects[self._key(stored)] = stored
        return stored

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        with self._lock:
            for (_, _, ns, n), obj in self.objects.items():
                if obj["kind"] == kind and (ns, n) == (namespace, name):
                    return copy.deepcopy(obj)
        return None

    def of_kind(self, kind: str) -> list[Obj]:
        with self._lock:
            return [copy.deepcopy(o) for o in self.objects.values() if o["kind"] == kind]

    def writes(self) -> list[Asked]:
        return [a for a in self.asked if a.method in ("PATCH", "PUT", "DELETE", "POST")]

    def fail(
        self,
        matches: Callable[[Asked], bool],
        error: MachinePoolError,
        *,
        applied: bool = False,
        nth: int = 1,
    ) -> None:
        self.faults.append(Fault(matches, error, applied, nth))

    def lost_reply(self, error: OSError | None = None) -> MachinePoolError:
        return transport_failure(self.where, error or TimeoutError("timed out"))

    # -- requests --------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        accept: str = "application/json",
        *,
        body: Obj | None = None,
        items: Callable[[], Callable[[Any], None]] | None = None,
        **_options: Any,
    ) -> Obj:
        """Kube.request's contract: the answer, or the MachinePoolError Kube would raise."""
        asked = Asked(method, path, dict(query or {}), accept, copy.deepcopy(body))
        with self._lock:
            self.asked.append(asked)
            fault = self._fault(asked)
        if fault is not None and not fault.applied:
            raise fault.error
        if self.during is not None:
            self.during(asked)
        with self._lock:
            answer = self._answer(asked)
        if self.landed is not None:
            self.landed(asked)
        if fault is not None:
            raise fault.error
        if items is not None and "items" in answer:
            sink = items()
            for item in answer.pop("items"):
                sink(item)
        return answer

    def _fault(self, asked: Asked) -> Fault | None:
        for fault in self.faults:
            if fault.matches(asked):
                fault.seen += 1
                if fault.seen == fault.nth:
                    return fault
        return None

    def _error(self, asked: Asked, status: int, message: str) -> MachinePoolError:
        data = json.dumps({"kind": "Status", "code": status, "message": message}).encode()
        return api_error(self.where, asked.method, asked.path, status, data)

    def _served(self, where: _Path) -> bool:
        if (where.group, where.version) in BUILT_IN:
            return True
        if where.group == CAPI:
            return where.version == self.capi
        return any(
            c["spec"]["group"] == where.group
            and c["spec"]["names"]["plural"] == where.plural
            and any(v["name"] == where.version for v in c["spec"]["versions"])
            for c in self.crds.values()
        )

    def _answer(self, asked: Asked) -> Obj:
        if asked.path == ACCESS_REVIEWS:
            return {"status": {"allowed": True}}
        if asked.path.startswith(CRD_PREFIX):
            crd = self.crds.get(asked.path.removeprefix(CRD_PREFIX))
            if crd is None:
                raise self._error(asked, 404, "customresourcedefinitions not found")
            return copy.deepcopy(crd)
        if asked.path == f"/apis/{CAPI}" and self.capi is not None:
            return {"kind": "APIGroup", "versions": [{"version": self.capi}]}
        where = _Path.of(asked.path)
        if not where.plural or not self._served(where):
            raise self._error(asked, 404, "the server could not find the requested resource")
        if where.plural in self.forbidden:
            verb = "list" if where.name is None else asked.method.lower()
            scope = (
                f' in the namespace "{where.namespace}"'
                if where.namespace
                else " at the cluster scope"
            )
            raise self._error(
                asked,
                403,
                f"{where.plural}{'.' + where.group if where.group else ''} is forbidden: User "
                f'"reader" cannot {verb} resource "{where.plural}" in API group "{where.group}"'
                + scope,
            )
        if where.name is None:
            return self._list(asked, where)
        key = (where.group, where.plural, where.namespace or "", where.name)
        stored = self.objects.get(key)
        if stored is None:
            raise self._error(asked, 404, f'{where.resource} "{where.name}" not found')
        if asked.method == "GET":
            return self._as_served(stored, where)
        return self._write(asked, where, key, stored)

    def _as_served(self, obj: Obj, where: _Path) -> Obj:
        """The object in the version asked for (the server converts)."""
        served = copy.deepcopy(obj)
        served["apiVersion"] = f"{where.group}/{where.version}" if where.group else where.version
        return served

    def _list(self, asked: Asked, where: _Path) -> Obj:
        found = []
        for (group, plural, ns, _), obj in sorted(self.objects.items()):
            if (group, plural) != (where.group, where.plural):
                continue
            if where.namespace is not None and ns != where.namespace:
                continue
            labels = obj["metadata"].get("labels") or {}
            if not _labels_match(asked.query.get("labelSelector", ""), labels):
                continue
            if not _fields_match(asked.query.get("fieldSelector", ""), obj):
                continue
            served = self._as_served(obj, where)
            if asked.accept == METADATA_ONLY:
                served = {"metadata": served["metadata"]}
            found.append(served)
        version = str(next(self._versions))
        return {"kind": "List", "metadata": {"resourceVersion": version}, "items": found}

    def _conflict(self, asked: Asked, where: _Path, why: str) -> MachinePoolError:
        message = f'Operation cannot be fulfilled on {where.resource} "{where.name}": {why}'
        return self._error(asked, 409, message)

    def _check(self, asked: Asked, where: _Path, stored: Obj, uid: Any, version: Any) -> None:
        meta = stored["metadata"]
        if uid is not None and uid != meta["uid"]:
            raise self._conflict(asked, where, "Precondition failed: UID mismatch")
        if version is not None and version != meta["resourceVersion"]:
            raise self._conflict(
                asked,
                where,
                "the object has been modified; please apply your changes to the latest "
                "version and try again",
            )

    def _write(self, asked: Asked, where: _Path, key: Key, stored: Obj) -> Obj:
        body = asked.body or {}
        dry = asked.query.get("dryRun") == "All" or body.get("dryRun") == ["All"]
        if asked.method == "DELETE":
            pre = body.get("preconditions") or {}
            self._check(asked, where, stored, pre.get("uid"), pre.get("resourceVersion"))
            if dry:
                return self._as_served(stored, where)
            changed = copy.deepcopy(stored)
            if changed["metadata"].get("finalizers"):
                changed["metadata"]["deletionTimestamp"] = "2026-11-29T15:00:00Z"
                return self._store(key, changed, where)
            del self.objects[key]
            return {"kind": "Status", "status": "Success"}
        meta = body.get("metadata") or {}
        self._check(asked, where, stored, meta.get("uid"), meta.get("resourceVersion"))
        if where.subresource == "scale":
            changed = copy.deepcopy(stored)
            changed["spec"]["replicas"] = body["spec"]["replicas"]
        elif asked.method == "PUT":
            changed = copy.deepcopy(body)
            changed["metadata"] = {**stored["metadata"], **meta}
        else:
            patch = copy.deepcopy(body)
            patch.get("metadata", {}).pop("resourceVersion", None)
            changed = _merge(stored, patch)
        if dry:
            return self._as_served(changed, where)
        answer = self._store(key, changed, where)
        if where.subresource == "scale":
            scaled = answer["metadata"]
            return {
                "apiVersion": "autoscaling/v1",
                "kind": "Scale",
                "metadata": {k: scaled[k] for k in ("name", "namespace", "uid", "resourceVersion")},
                "spec": {"replicas": answer["spec"]["replicas"]},
            }
        return answer

    def _store(self, key: Key, changed: Obj, where: _Path) -> Obj:
        before = self.objects[key]
        meta = changed["metadata"]
        for empty in [
            k for k in ("annotations", "labels", "finalizers") if k in meta and not meta[k]
        ]:
            del meta[empty]  # as the server leaves them: omitted, not empty
        if changed.get("spec") != before.get("spec"):
            changed["metadata"]["generation"] = before["metadata"].get("generation", 1) + 1
        changed["metadata"]["resourceVersion"] = str(next(self._versions))
        self.objects[key] = changed
        return self._as_served(changed, where)

    # -- watches ---------------------------------------------------------------------------

    def events(self, plural: str) -> queue.Queue[Any]:
        with self._lock:
            return self._watches.setdefault(plural, queue.Queue())

    def send(self, plural: str, event: str, obj: Obj) -> None:
        """An event on every watch of the kind (the next one, if it is not open yet)."""
        self.events(plural).put((event, obj))

    def watch(self, resource: Any, namespace: str | None, **options: Any) -> Iterator[Any]:
        """Kube.watch: LISTED with the objects, then what the test sends, until END."""
        health = options.get("health")
        events = self.events(resource.plural)
        with self._lock:
            self.watch_calls.append(resource.plural)
            self.open_watches += 1
        try:
            path = resource.path(namespace)
            listed = self._list(Asked("GET", path, {}, "application/json", None), _Path.of(path))
            if health is not None:
                health.heard()
            yield LISTED, listed
            while (event := events.get()) is not END:
                if isinstance(event, MachinePoolError):
                    raise event
                if health is not None:
                    health.heard()
                yield event
        finally:
            with self._lock:
                self.open_watches -= 1
                self._closed.notify_all()

    def end_watches(self, timeout: float = 10) -> bool:
        """End every open watch; whether all were closed within timeout (a bound, not a
        measurement: a watch thread ends as soon as it is woken)."""
        with self._lock:
            queues = list(self._watches.values())
        for events in queues:
            events.put(END)
        with self._closed:
            return self._closed.wait_for(lambda: self.open_watches == 0, timeout)


@dataclass
class FakeAPI:
    """The API servers a test's Kubes reach, by server URL; an unknown server is unreachable."""

    servers: dict[str, FakeServer] = field(default_factory=dict)

    def serve(self, server: FakeServer) -> FakeServer:
        self.servers[server.server] = server
        return server

    def server_of(self, kube: Kube) -> FakeServer:
        found = self.servers.get(kube.connection.server)
        if found is None:
            raise transport_failure(kube.where, ConnectionRefusedError(111, "Connection refused"))
        found.where = kube.where
        return found

    def kube(self, server: str = MANAGEMENT, timeout: float | None = None) -> Kube:
        """A real Kube whose requests go to the fake server."""
        connection = connection_from_dict(kubeconfig(server, "management-token"), "test")
        return Kube(connection, timeout)

    def scenario(
        self, name: str, namespace: str, generation: str = "v1beta2"
    ) -> tuple[FakeServer, FakeServer]:
        """A support.scenarios management cluster (with the kubeconfig Secret of its Cluster)
        and its workload cluster, which holds the Nodes."""
        objects = SCENARIOS[name](generation, namespace)
        cluster = next(o for o in objects if o["kind"] == "Cluster")["metadata"]["name"]
        secret = kubeconfig_secret(namespace, cluster, WORKLOAD, WORKLOAD_TOKEN)
        management = [o for o in objects if o["kind"] != "Node"] + [secret]
        return (
            self.serve(FakeServer(MANAGEMENT, management, capi=generation)),
            self.serve(FakeServer(WORKLOAD, [o for o in objects if o["kind"] == "Node"])),
        )

    def access(self, directory: Path, server: str = MANAGEMENT, **options: Any) -> AccessOptions:
        """Flags naming a kubeconfig file for the server, as a user passes them."""
        path = directory / "kubeconfig"
        path.write_text(yaml.safe_dump(kubeconfig(server, "management-token")))
        return AccessOptions(kubeconfig=str(path), **options)


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """Every Kube of the test answered by FakeServers; their watches ended afterwards."""
    api = FakeAPI()

    def request(kube: Kube, *args: Any, **kwargs: Any) -> Obj:
        return api.server_of(kube).request(*args, **kwargs)

    def watch(kube: Kube, *args: Any, **kwargs: Any) -> Iterator[Any]:
        return api.server_of(kube).watch(*args, **kwargs)

    monkeypatch.setattr(Kube, "request", request)
    monkeypatch.setattr(Kube, "watch", watch)
    yield api
    for server in api.servers.values():
        assert server.end_watches(), f"a watch of {server.server} was left open"
