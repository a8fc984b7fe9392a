"""Kube.watch against the real API server: events, restarts, 410 Gone, and following a deletion.

Each watch gets a timeout, so a watch that never delivers ends the generator (and fails the
test) instead of hanging it. A small window makes the server end each watch after a second
(timeoutSeconds), so restarts happen many times within one test.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.controlplane import ControlPlane
from support.faultproxy import Fault, FaultProxy, Injection, Seen
from support.management import ManagementCluster, create_scenario
from support.scenarios import SCENARIOS

from kubectl_machinepool.app.deleting import DeleteMachine, execute, plan_for
from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.deletefollow import follow
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.model.changes import LISTED
from kubectl_machinepool.plans.deletetarget import Wanted

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps")
EVENTS = Resource("", "v1", "Event", "events")
# Long enough for a loaded machine, short enough that a broken watch fails the test soon.
WATCH_TIMEOUT = 30.0
MERGE = "application/merge-patch+json"


def connect(kubeconfig: Path) -> Kube:
    return Kube.connect(AccessOptions(kubeconfig=str(kubeconfig)))


def configmap(namespace: str, name: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "1"}}


def names(event: tuple[str, dict[str, Any]]) -> tuple[str, list[str]]:
    kind, obj = event
    if kind == LISTED:
        return kind, sorted(i["metadata"]["name"] for i in obj["items"])
    return kind, [obj["metadata"]["name"]]


@pytest.fixture
def proxy(v1beta2: ManagementCluster, tmp_path: Path) -> Iterator[FaultProxy]:
    with FaultProxy.for_apiserver(v1beta2.server, v1beta2.server.admin, tmp_path / "proxy") as p:
        yield p


@pytest.fixture
def through(proxy: FaultProxy, v1beta2: ManagementCluster, tmp_path: Path) -> Path:
    """A kubeconfig that reaches the API server through the proxy."""
    return proxy.write_kubeconfig(tmp_path / "proxy.kubeconfig", v1beta2.server.admin)


def watches(proxy: FaultProxy, namespace: str) -> list[Seen]:
    return [s for s in proxy.log if "watch" in s.params and f"/namespaces/{namespace}/" in s.path]


def test_events_for_create_update_delete(v1beta2: ManagementCluster) -> None:
    namespace = v1beta2.new_namespace()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    v1beta2.api.request("POST", base, configmap(namespace, "before"))
    with connect(v1beta2.kubeconfig) as kube:
        events = kube.watch(CONFIGMAPS, namespace, timeout=WATCH_TIMEOUT)
        assert names(next(events)) == (LISTED, ["before"])
        v1beta2.api.request("POST", base, configmap(namespace, "one"))
        assert names(next(events)) == ("ADDED", ["one"])
        v1beta2.api.request("PATCH", f"{base}/one", {"data": {"a": "2"}}, MERGE)
        kind, obj = next(events)
        assert (kind, obj["data"]) == ("MODIFIED", {"a": "2"})
        v1beta2.api.request("DELETE", f"{base}/one")
        assert names(next(events)) == ("DELETED", ["one"])
        events.close()


def test_one_name_only(v1beta2: ManagementCluster) -> None:
    namespace = v1beta2.new_namespace()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    with connect(v1beta2.kubeconfig) as kube:
        events = kube.watch(CONFIGMAPS, namespace, name="wanted", timeout=WATCH_TIMEOUT)
        assert names(next(events)) == (LISTED, [])
        v1beta2.api.request("POST", base, configmap(namespace, "other"))
        v1beta2.api.request("POST", base, configmap(namespace, "wanted"))
        assert names(next(events)) == ("ADDED", ["wanted"])
        events.close()


def test_a_watch_the_server_ends_resumes_where_it_was(
    v1beta2: ManagementCluster, proxy: FaultProxy, through: Path
) -> None:
    """The server ends each watch after its timeoutSeconds: the next one starts at the last
    resourceVersion seen (an event's, or a bookmark's if the server sent one), so nothing
    comes twice and nothing is missed, and the objects are not listed again."""
    namespace = v1beta2.new_namespace()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    with connect(through) as kube:
        events = kube.watch(CONFIGMAPS, namespace, timeout=WATCH_TIMEOUT, window=1)
        assert names(next(events)) == (LISTED, [])
        v1beta2.api.request("POST", base, configmap(namespace, "one"))
        assert names(next(events)) == ("ADDED", ["one"])
        time.sleep(1.5)  # the server has ended the watch meanwhile
        v1beta2.api.request("POST", base, configmap(namespace, "two"))
        assert names(next(events)) == ("ADDED", ["two"])
        events.close()
    opened = watches(proxy, namespace)
    assert len(opened) >= 2
    first_rv = opened[0].params["resourceVersion"]
    assert all(s.params["resourceVersion"] != first_rv for s in opened[1:])  # it moved on
    assert all(s.params["allowWatchBookmarks"] == ["true"] for s in opened)
    assert len([s for s in proxy.log if s.path == base and "watch" not in s.params]) == 1


def test_a_dropped_watch_is_opened_again_from_the_last_event(
    v1beta2: ManagementCluster, proxy: FaultProxy, through: Path
) -> None:
    """The connection is reset after the server sent an event in it: the client never got
    the event, so the next watch starts before it and it still arrives, once."""
    namespace = v1beta2.new_namespace()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    with connect(through) as kube:
        events = kube.watch(CONFIGMAPS, namespace, timeout=WATCH_TIMEOUT, window=1)
        assert names(next(events)) == (LISTED, [])
        proxy.arm(Injection(Fault.RESET_AFTER, match=lambda seen: "watch" in seen.params))
        v1beta2.api.request("POST", base, configmap(namespace, "one"))
        assert names(next(events)) == ("ADDED", ["one"])
        v1beta2.api.request("POST", base, configmap(namespace, "two"))
        assert names(next(events)) == ("ADDED", ["two"])
        events.close()
    fired = proxy.fired
    assert fired is not None
    assert "watch" in fired.params
    opened = watches(proxy, namespace)
    assert opened[1].params["resourceVersion"] == opened[0].params["resourceVersion"]


def compact_etcd(etcd_url: str) -> None:
    """What the API server does every few minutes, now: etcd forgets every revision but the
    newest, so a watch from an older resourceVersion can only get 410 Gone."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{etcd_url}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # loopback etcd only
            return dict(json.loads(answer.read()))

    key = base64.b64encode(b"/kmp-test-probe").decode()
    revision = post("/v3/kv/range", {"key": key})["header"]["revision"]
    post("/v3/kv/compaction", {"revision": revision, "physical": True})


def event(namespace: str, name: str) -> dict[str, Any]:
    about = {"kind": "ConfigMap", "name": "any", "namespace": namespace}
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta, "involvedObject": about,
            "reason": "Test", "message": name, "type": "Normal"}  # fmt: skip


def test_a_compacted_resource_version_relists(
    v1beta2: ManagementCluster, control_plane: ControlPlane
) -> None:
    """410 Gone on the real server: Events have no watch cache, so their watch is etcd's, and
    etcd has compacted away the resourceVersion the watch resumes from. The watch lists
    again and hands over the current state (missing the deletion it could not see), then
    goes on from the new list."""
    namespace = v1beta2.new_namespace()
    base = f"/api/v1/namespaces/{namespace}/events"
    old = v1beta2.api.request("POST", base, event(namespace, "old"))
    v1beta2.api.request("POST", base, event(namespace, "there"))
    v1beta2.api.request("DELETE", f"{base}/old")
    assert control_plane._etcd is not None
    compact_etcd(control_plane._etcd.url)
    stale = old["metadata"]["resourceVersion"]
    with connect(v1beta2.kubeconfig) as kube:
        events = kube.watch(EVENTS, namespace, resource_version=stale, timeout=WATCH_TIMEOUT)
        kind, listed = next(events)
        assert names((kind, listed)) == (LISTED, ["there"])
        assert listed["items"][0]["kind"] == "Event"  # TypeMeta filled in, as lists do
        v1beta2.api.request("POST", base, event(namespace, "next"))
        assert names(next(events)) == ("ADDED", ["next"])
        events.close()


def test_api_errors_are_machinepool_errors(v1beta2: ManagementCluster) -> None:
    nothing = Resource("example.com", "v1", "Nothing", "nothings")
    with connect(v1beta2.kubeconfig) as kube:
        with pytest.raises(NotFoundError):
            next(kube.watch(nothing, "default", resource_version="0", timeout=5))
        with pytest.raises(MachinePoolError):
            next(kube.watch(nothing, "default", timeout=5))


def test_follow_reports_the_machine_gone_across_restarts(
    v1beta2: ManagementCluster, proxy: FaultProxy, through: Path
) -> None:
    """The follow loop over watches the server ends every second: the Machine's stage while
    it is deleting, and its end once the finalizer goes."""
    namespace = v1beta2.new_namespace()
    salt = namespace.removeprefix("t-")
    create_scenario(v1beta2, SCENARIOS["capd"]("v1beta2", namespace, salt))
    path = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/machines/dev-mp-0-x7q2p"
    lines: list[str] = []
    with connect(through) as kube:
        asked = DeleteMachine(Wanted("dev-mp-0-x7q2p"), namespace=namespace)
        plan = plan_for(kube, asked, warn=lines.append)
        assert not plan.refusals, plan.refusals
        execute(kube, plan, dry_run=False, warn=lines.append)

        def the_machine_controller() -> None:
            time.sleep(1.5)
            draining = {
                "type": "Deleting", "status": "True", "reason": "DrainingNode",
                "message": "Drain not completed yet", "lastTransitionTime": "2026-11-29T15:00:00Z",
            }  # fmt: skip
            v1beta2.api.request(
                "PATCH", f"{path}/status", {"status": {"conditions": [draining]}}, MERGE
            )
            time.sleep(2.5)
            v1beta2.api.request("PATCH", path, {"metadata": {"finalizers": None}}, MERGE)

        controller = threading.Thread(target=the_machine_controller, daemon=True)
        controller.start()
        try:
            follow(
                kube,
                None,
                plan,
                timeout=WATCH_TIMEOUT,
                report=lines.append,
                warn=lines.append,
                window=1,
            )
        finally:
            controller.join()
    stage = f"Machine {namespace}/dev-mp-0-x7q2p: DrainingNode: Drain not completed yet"
    assert [line for line in lines if line.startswith("Machine ")] == [stage]
    assert len(watches(proxy, namespace)) >= 3
