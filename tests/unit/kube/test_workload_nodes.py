"""A workload's Nodes read live become their states as they arrive: the same states describe
would make from the Nodes, a LIST restarted midway included (against a loopback server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import yaml
from support.loopback import QuietHandler, serving

from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.settings import Settings
from kubectl_machinepool.kube.workload import workload_nodes
from kubectl_machinepool.model.states import node_state


def _node(name: str, ready: str) -> dict:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-11-30T10:00:00Z",
            "labels": {"kubernetes.io/hostname": name},
            "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}],
        },
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": ready, "lastTransitionTime": "2026-11-30T10:01:00Z"}
            ],
            "nodeInfo": {"kubeletVersion": "v1.31.2"},
        },
    }


class PagedNodes(QuietHandler):
    """Two pages of Nodes; the second asked for with an expired token, so the LIST restarts
    in one answer, in which node-a has become NotReady."""

    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        self.asked.append(self.path)
        if "continue" in query:
            status = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
            self.reply(410, json.dumps(status).encode())
            return
        if "limit" in query:
            page = {"items": [_node("a", "True")], "metadata": {"continue": "next"}}
        else:
            page = {"items": [_node("a", "False"), _node("b", "True")], "metadata": {}}
        self.reply(200, json.dumps({"kind": "NodeList", **page}).encode())


def test_states_made_as_the_nodes_arrive_are_those_of_the_nodes_kept(tmp_path: Path) -> None:
    handler = type("Handler", (PagedNodes,), {"asked": []})
    with serving(handler) as server:
        port = server.server_address[1]
        config = tmp_path / "workload.kubeconfig"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "w", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                    "users": [{"name": "u", "user": {"token": "t"}}],
                    "contexts": [{"name": "w", "context": {"cluster": "w", "user": "u"}}],
                    "current-context": "w",
                }
            )
        )
        settings = Settings(f"http://127.0.0.1:{port}")
        management = Kube(Connection(settings, "mgmt", "default", settings.host), 5.0)
        got = workload_nodes(management, "ns", "prod", str(config), 5.0)
    nodes = [path for path in handler.asked if path.startswith("/api/v1/nodes")]
    assert len(nodes) == 3  # a page, its expired continuation, the whole list
    assert got.read
    assert got.nodes is None  # only the states are kept
    assert got.states == (node_state(_node("a", "False")), node_state(_node("b", "True")))
    assert [s.ready for s in got.states] == [False, True]  # node-a as read the second time
