"""A management and a workload API server with an audit log each, loaded fast with one fleet.

Loading goes through many threads, each with its own kept-alive TLS connection, as a user the
audit policy leaves out, so the logs hold only what the measured commands asked. Objects are
created in dependency order (Nodes, Clusters; MachinePools; Machines, infra pools; infra
machines) so that owner references and nodeRefs carry the uids the server assigned.
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from scalefleet import CLUSTER, Obj, fleet
from support import crds
from support.controlplane import APIServer, ControlPlane
from support.kinds import Kinds
from support.kubeapi import KubeAPI
from support.management import ManagementCluster

LOADER = "fleet-loader"
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": [LOADER, "system:apiserver"]},
        {"level": "Metadata"},
    ],
}
WORKERS = 12


@dataclass(frozen=True)
class Pair:
    """The two servers of one benchmark cluster, and where their audit logs are."""

    management: APIServer
    workload: APIServer
    namespace: str

    @property
    def kubeconfig(self) -> Path:
        return self.management.admin.kubeconfig

    def audit_logs(self) -> dict[str, Path]:
        return {
            "management": self.management.workdir / "audit.log",
            "workload": self.workload.workdir / "audit.log",
        }


def _audit_args(plane: ControlPlane, name: str) -> tuple[str, ...]:
    policy = plane.workdir / "audit-policy.yaml"
    if not policy.exists():
        policy.write_text(yaml.safe_dump(AUDIT_POLICY))
    return (
        f"--audit-policy-file={policy}",
        f"--audit-log-path={plane.workdir / name / 'audit.log'}",
        # Blocking: each event is written before the request returns, so the log is complete
        # by the time a measured command exits.
        "--audit-log-mode=blocking",
        "--audit-log-maxsize=0",
        "--audit-log-format=json",
    )


class Connections:
    """One kept-alive HTTPS connection per thread and server."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.context = server.ssl_context(server.add_user(LOADER, ("system:masters",)))
        self.local = threading.local()
        self.api = KubeAPI(server.server, self.context, Kinds())

    def request(self, method: str, path: str, body: Obj, content_type: str) -> Obj:
        for attempt in range(3):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(
                    "127.0.0.1", self.server.port, context=self.context, timeout=60
                )
                self.local.conn = conn
            try:
                conn.request(method, path, json.dumps(body), {"Content-Type": content_type})
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status == 429 or resp.status >= 500:
                time.sleep(0.2 * (attempt + 1))  # the server sheds load: try again
                continue
            if resp.status >= 300:
                raise RuntimeError(f"{method} {path}: HTTP {resp.status} {data[:400]!r}")
            return json.loads(data)  # type: ignore[no-any-return]
        raise RuntimeError(f"{method} {path}: server kept refusing")

    def create(self, obj: Obj) -> Obj:
        """POST the object, then its status through the status subresource, like a controller.
        A Node keeps the status it is created with (a kubelet registers it so): one request."""
        keeps_status = obj["kind"] == "Node"
        body = obj if keeps_status else {k: v for k, v in obj.items() if k != "status"}
        created = self.request("POST", self.api.path_of(obj), body, "application/json")
        if obj.get("status") and not keeps_status:
            path = self.api.path_of(obj, obj["metadata"]["name"]) + "/status"
            self.request("PATCH", path, {"status": obj["status"]}, "application/merge-patch+json")
        return created

    def replace(self, obj: Obj) -> None:
        """Bring an existing object's spec and status to these (merge patches)."""
        path = self.api.path_of(obj, obj["metadata"]["name"])
        merge = "application/merge-patch+json"
        self.request("PATCH", path, {"spec": obj["spec"]}, merge)
        if obj.get("status"):
            self.request("PATCH", path + "/status", {"status": obj["status"]}, merge)


def _depth(obj: Obj, by_uid: dict[str, Obj], memo: dict[str, int]) -> int:
    """How many objects must exist before this one: its owners and the Nodes it refers to."""
    key = obj["metadata"].get("uid") or id(obj)
    if key not in memo:
        deps = [r.get("uid") for r in obj["metadata"].get("ownerReferences", [])]
        deps += [r.get("uid") for r in (obj.get("status") or {}).get("nodeRefs", [])]
        found = [by_uid[d] for d in deps if d in by_uid]
        memo[key] = 1 + max((_depth(o, by_uid, memo) for o in found), default=-1)
    return memo[key]


def _levels(objects: list[Obj]) -> list[list[Obj]]:
    by_uid = {o["metadata"]["uid"]: o for o in objects if o["metadata"].get("uid")}
    memo: dict[str, int] = {}
    levels: dict[int, list[Obj]] = {}
    for obj in objects:
        # Namespaces before everything in them.
        level = -1 if obj["kind"] == "Namespace" else _depth(obj, by_uid, memo)
        levels.setdefault(level, []).append(obj)
    return [levels[k] for k in sorted(levels)]


def _with_real_uids(obj: Obj, real: dict[str, str]) -> Obj:
    """A copy with fixture uids swapped for the server's (owner references and nodeRefs only:
    nothing else in these objects holds a uid)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "creationTimestamp")}
    if "ownerReferences" in meta:
        meta["ownerReferences"] = [
            {**r, "uid": real.get(r["uid"], r["uid"])} for r in meta["ownerReferences"]
        ]
    out = {**obj, "metadata": meta}
    status = obj.get("status") or {}
    if status.get("nodeRefs"):
        refs = [{**r, "uid": real.get(r.get("uid", ""), r.get("uid"))} for r in status["nodeRefs"]]
        out["status"] = {**status, "nodeRefs": refs}
    return out


def _run_level(objects: list[Obj], route: dict[bool, Connections], real: dict[str, str]) -> None:
    jobs: queue.SimpleQueue[Obj | None] = queue.SimpleQueue()
    for obj in objects:
        jobs.put(obj)
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work() -> None:
        while (obj := jobs.get()) is not None and not errors:
            try:
                created = route[obj["kind"] == "Node"].create(_with_real_uids(obj, real))
            except BaseException as err:
                errors.append(err)
                return
            if fixture := obj["metadata"].get("uid"):
                with lock:
                    real[fixture] = created["metadata"]["uid"]

    threads = [threading.Thread(target=work, daemon=True) for _ in range(WORKERS)]
    for thread in threads:
        jobs.put(None)
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


class Fleet:
    """One pool on a server pair, grown in place: from N=100 to 1000 only the 900 new instances
    are created, and the pool-level objects (the MachinePool and its infra pool, whose
    providerIDList, replicas and nodeRefs follow N) are patched."""

    def __init__(self, pair: Pair, shape: str, pool_kinds: tuple[str, ...]) -> None:
        self.pair, self.shape, self.pool_kinds = pair, shape, pool_kinds
        self.route = {False: Connections(pair.management), True: Connections(pair.workload)}
        self.real: dict[str, str] = {}  # fixture uid -> the server's
        self.created: set[tuple[str, str, str]] = set()
        self.n = 0

    def grow_to(self, n: int) -> float:
        """Seconds it took to bring the pool to n instances."""
        if n < self.n:
            raise ValueError(f"the pool only grows: {self.n} -> {n}")
        start = time.perf_counter()
        objects = fleet(self.shape, n, self.pair.namespace)
        new = [o for o in objects if _key(o) not in self.created]
        for level in _levels(new):
            _run_level(level, self.route, self.real)
        for obj in objects:
            if obj["kind"] in self.pool_kinds and _key(obj) in self.created:
                self.route[False].replace(_with_real_uids(obj, self.real))
        if not self.created:
            _workload_secret(self.pair)
        self.created.update(_key(o) for o in new)
        self.n = n
        return time.perf_counter() - start


def _key(obj: Obj) -> tuple[str, str, str]:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _workload_secret(pair: Pair) -> None:
    """The `<cluster>-kubeconfig` Secret CAPI writes, pointing at the workload server: the test
    suite's builder, given the workload server as the one the kubeconfig names."""
    api = KubeAPI(pair.management.server, pair.management.ssl_context(), Kinds())
    ManagementCluster("v1beta2", pair.workload, api).workload_kubeconfig_secret(
        pair.namespace, CLUSTER
    )


@contextmanager
def fleet_servers(
    shape: str, pool_kinds: tuple[str, ...], workload_args: tuple[str, ...] = ()
) -> Iterator[Fleet]:
    """A fresh etcd and server pair, with CRDs, for one pool shape (empty until grown);
    workload_args: more flags of the workload server's."""
    plane = ControlPlane()
    try:
        management = plane.server("management", _audit_args(plane, "management"))
        api = KubeAPI(management.server, management.ssl_context(), Kinds())
        # CRDs go in while the workload server starts; not the other way round: a server
        # started from a thread would die with the thread (PR_SET_PDEATHSIG).
        with ThreadPoolExecutor(1) as installer:
            installed = installer.submit(
                crds.install, api, crds.capi_crds("v1beta2") + crds.provider_crds()
            )
            workload = plane.server("workload", (*_audit_args(plane, "workload"), *workload_args))
            installed.result()
        yield Fleet(Pair(management, workload, f"fleet-{shape}"), shape, pool_kinds)
    finally:
        plane.stop()
