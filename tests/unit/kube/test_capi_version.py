"""Which Cluster API version a run reads: the MachinePool LIST in v1beta2 shows a CAPI 1.11+
server; only when it finds no such resource is the API group asked (against a loopback server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import ClassVar

import pytest
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import NotFoundError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.settings import Settings

GROUP = "/apis/cluster.x-k8s.io"
NOT_FOUND = {"kind": "Status", "code": 404, "reason": "NotFound", "message": "not found"}


def pool(version: str) -> dict[str, object]:
    return {"apiVersion": f"cluster.x-k8s.io/{version}", "metadata": {"name": f"mp-{version}"}}


class Server(QuietHandler):
    """Serves MachinePools in the versions given, and the group's discovery document."""

    served: ClassVar[tuple[str, ...]] = ()
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        self.asked.append(path)
        if path == GROUP and self.served:
            versions = [
                {"groupVersion": f"cluster.x-k8s.io/{v}", "version": v} for v in self.served
            ]
            self.reply(200, json.dumps({"kind": "APIGroup", "versions": versions}).encode())
            return
        for version in self.served:
            if path == f"{GROUP}/{version}/namespaces/ns/machinepools":
                body = {"kind": "MachinePoolList", "metadata": {}, "items": [pool(version)]}
                self.reply(200, json.dumps(body).encode())
                return
        self.reply(404, json.dumps(NOT_FOUND).encode())


@pytest.fixture
def kube_serving() -> Iterator[tuple[type[Server], str]]:
    handler = type("Handler", (Server,), {"asked": []})
    with serving(handler) as server:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"


def kube(server: str) -> Kube:
    settings = Settings(server)
    return Kube(Connection(settings, "mgmt", "ns", server), 5.0)


@pytest.mark.parametrize(
    ("served", "read", "asked"),
    [
        (("v1beta1", "v1beta2"), "v1beta2", ["v1beta2"]),
        (("v1beta1",), "v1beta1", ["v1beta2", "group", "v1beta1"]),
    ],
    ids=["capi-1.11+", "capi-1.10"],
)
def test_the_first_list_shows_the_version_and_discovery_follows_only_a_404(
    kube_serving, served: tuple[str, ...], read: str, asked: list[str]
) -> None:
    handler, server = kube_serving
    handler.served = served
    found = kube(server).machine_pools("ns")
    assert [p["apiVersion"] for p in found] == [f"cluster.x-k8s.io/{read}"]
    said = {f"{GROUP}/{v}/namespaces/ns/machinepools": v for v in ("v1beta1", "v1beta2")}
    assert [said.get(p, "group") for p in handler.asked] == asked


def test_no_cluster_api_is_said_as_before(kube_serving) -> None:
    handler, server = kube_serving
    with pytest.raises(NotFoundError, match="Cluster API is not installed"):
        kube(server).machine_pools("ns")
    assert handler.asked == [f"{GROUP}/v1beta2/namespaces/ns/machinepools", GROUP]
