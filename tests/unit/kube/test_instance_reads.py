"""The per-instance reads of describe, against a loopback server: the infra machine kind is read
beside its infra pools, read again when the infra pools turn out to be served in another
version, and the states made as the instances arrived are those of the objects kept."""

from __future__ import annotations

import json
from typing import ClassVar
from urllib.parse import urlsplit

from support.loopback import QuietHandler, serving

from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.fetch import read_description
from kubectl_machinepool.kube.settings import Settings
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import machine_state, object_state

INFRA = "infrastructure.cluster.x-k8s.io"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
NS = "/namespaces/team"
POOL_LABELS = {"cluster.x-k8s.io/pool-name": "workers", "cluster.x-k8s.io/cluster-name": "prod"}


def _meta(name: str, **more: object) -> dict:
    return {"name": name, "namespace": "team", "uid": f"uid-{name}", **more}


def _crd(kind: str, versions: list[str]) -> dict:
    return {
        "metadata": {"name": f"{kind.lower()}s.{INFRA}"},
        "spec": {
            "group": INFRA,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": f"{kind.lower()}s"},
            "versions": [{"name": v, "served": True} for v in versions],
        },
    }


def _instance(version: str) -> dict:
    return {
        "metadata": _meta(f"workers-{version}", labels=POOL_LABELS),
        "spec": {
            "providerID": "azure:///subscriptions/s/virtualMachineScaleSets/w/virtualMachines/0"
        },
        "status": {"ready": True},
    }


ANSWERS: dict[str, object] = {
    f"/apis/cluster.x-k8s.io/v1beta2{NS}/machinepools": [
        {
            "metadata": _meta("workers"),
            "spec": {
                "clusterName": "prod",
                "template": {
                    "spec": {
                        "clusterName": "prod",
                        "infrastructureRef": {
                            "apiGroup": INFRA,
                            "kind": "AzureMachinePool",
                            "name": "workers",
                        },
                    }
                },
            },
        }
    ],
    f"/apis/cluster.x-k8s.io/v1beta2{NS}/clusters": [],
    f"/apis/cluster.x-k8s.io/v1beta2{NS}/machines": [
        {
            "metadata": _meta("workers-m0", labels=POOL_LABELS),
            "spec": {
                "clusterName": "prod",
                "infrastructureRef": {"kind": "AzureMachinePoolMachine", "name": "workers-v1beta1"},
            },
            "status": {"phase": "Running"},
        }
    ],
    # The machine kind's CRD serves a newer version than the infra pool's: read first in the
    # newer one, it must be read again in the infra pool's own.
    f"{CRDS}azuremachinepools.{INFRA}": _crd("AzureMachinePool", ["v1beta1"]),
    f"{CRDS}azuremachinepoolmachines.{INFRA}": _crd(
        "AzureMachinePoolMachine", ["v1beta1", "v1beta2"]
    ),
    f"/apis/{INFRA}/v1beta1{NS}/azuremachinepools": [
        {
            "metadata": _meta("workers"),
            "status": {"ready": True, "infrastructureMachineKind": "AzureMachinePoolMachine"},
        }
    ],
    f"/apis/{INFRA}/v1beta2{NS}/azuremachinepoolmachines": [_instance("v1beta2")],
    f"/apis/{INFRA}/v1beta1{NS}/azuremachinepoolmachines": [_instance("v1beta1")],
}


class Server(QuietHandler):
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.asked.append(path)
        answer = ANSWERS.get(path)
        if answer is None:
            status = {"kind": "Status", "code": 404, "reason": "NotFound", "message": "no"}
            self.reply(404, json.dumps(status).encode())
        elif isinstance(answer, list):
            self.reply(200, json.dumps({"items": answer, "metadata": {}}).encode())
        else:
            self.reply(200, json.dumps(answer).encode())


def _described() -> tuple[Snapshot, list[str]]:
    handler = type("Handler", (Server,), {"asked": []})
    with serving(handler) as server:
        settings = Settings(f"http://127.0.0.1:{server.server_address[1]}")
        with Kube(Connection(settings, "mgmt", "team", settings.host), 5.0) as kube:
            selection = Selection(namespace="team", names=("workers",))
            snapshot = read_description(kube, "team", selection, None, 5.0)
    return snapshot, handler.asked


def test_the_machine_kind_is_read_again_in_the_version_of_its_infra_pools() -> None:
    snapshot, asked = _described()
    kept = list(snapshot.of_kind(INFRA, "AzureMachinePoolMachine"))
    assert [o["apiVersion"] for o in kept] == [f"{INFRA}/v1beta1"]
    assert [o["metadata"]["name"] for o in kept] == ["workers-v1beta1"]
    lists = [p for p in asked if p.endswith("/azuremachinepoolmachines")]
    assert sorted(lists) == [
        f"/apis/{INFRA}/v1beta1{NS}/azuremachinepoolmachines",
        f"/apis/{INFRA}/v1beta2{NS}/azuremachinepoolmachines",
    ]


def test_states_made_while_reading_are_those_of_the_objects_kept() -> None:
    snapshot, _ = _described()
    (machine,) = snapshot.of_kind("cluster.x-k8s.io", "Machine")
    (infra_machine,) = snapshot.of_kind(INFRA, "AzureMachinePoolMachine")
    made = snapshot.made_of(machine, machine_state)
    assert made is snapshot.made_of(machine, machine_state)  # made once, while reading
    assert made == machine_state(machine)
    assert snapshot.made_of(infra_machine, object_state) == object_state(infra_machine)
    # Only kept objects have entries: the instance read in the other version is gone.
    assert {id(obj) for obj, _ in snapshot.made.values()} == {id(machine), id(infra_machine)}
    # An equal object that is not the one read gets its own state, made now.
    copy = json.loads(json.dumps(machine))
    assert snapshot.made_of(copy, machine_state) is not made
    assert snapshot.made_of(copy, machine_state) == made
