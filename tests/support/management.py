"""A test management cluster: an API server serving one Cluster API generation's CRDs."""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import crds
from .controlplane import APIServer, ControlPlane, User, binaries_dir
from .kinds import Kinds
from .kubeapi import APIError, KubeAPI


@dataclass
class ManagementCluster:
    """A test management cluster: an API server with CAPI and provider CRDs of one generation."""

    generation: str
    server: APIServer
    api: KubeAPI
    namespaces: list[str] = field(default_factory=list)

    @property
    def kubeconfig(self) -> Path:
        return self.server.admin.kubeconfig

    def new_namespace(self) -> str:
        name = f"t-{secrets.token_hex(4)}"
        self.api.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        self.namespaces.append(name)
        return name

    def create(self, objects: list[dict[str, Any]]) -> None:
        self.api.create_all(objects)

    def api_as(self, user: User) -> KubeAPI:
        return KubeAPI(self.server.server, self.server.ssl_context(user), self.api.kinds)

    def workload_kubeconfig_secret(self, namespace: str, cluster: str) -> dict[str, Any]:
        """The `<cluster>-kubeconfig` Secret CAPI writes, pointing at this same API server."""
        kubeconfig = yaml.safe_dump(
            self.server.kubeconfig_dict(self.server.admin, f"{cluster}-admin@{cluster}")
        )
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "cluster.x-k8s.io/secret",
            "metadata": {
                "name": f"{cluster}-kubeconfig",
                "namespace": namespace,
                "labels": {"cluster.x-k8s.io/cluster-name": cluster},
            },
            "data": {"value": base64.b64encode(kubeconfig.encode()).decode()},
        }
        self.api.create(secret)
        return secret

    def grant(self, user: str, namespace: str | None, rules: list[dict[str, Any]]) -> None:
        """Give a user exactly these RBAC rules, in a namespace or (None) cluster-wide."""
        name = f"{user}-{secrets.token_hex(3)}"
        scope = {"namespace": namespace} if namespace else {}
        role_kind = "Role" if namespace else "ClusterRole"
        self.api.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": role_kind,
                "metadata": {"name": name, **scope},
                "rules": rules,
            }
        )
        self.api.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": f"{role_kind}Binding",
                "metadata": {"name": name, **scope},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": role_kind,
                    "name": name,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                ],
            }
        )


_clusters: dict[str, ManagementCluster] = {}


def management_cluster(control_plane: ControlPlane, generation: str) -> ManagementCluster:
    if generation not in _clusters:
        server = control_plane.server(generation)
        api = KubeAPI(server.server, server.ssl_context(), Kinds())
        crds.install(api, crds.capi_crds(generation) + crds.provider_crds())
        _clusters[generation] = ManagementCluster(generation, server, api)
    return _clusters[generation]


def create_scenario(cluster: ManagementCluster, objects: list[dict[str, Any]]) -> None:
    """Create a scenario's objects as controllers would have left them.

    Nodes go first, so references to them can be given real uids; status is written through the
    status subresource; every fixture uid (owner references, nodeRefs) is replaced by the uid the
    server assigned; each Cluster gets a `<cluster>-kubeconfig` Secret for its Nodes.
    """
    real_uids: dict[str, str] = {}
    ordered = sorted(objects, key=lambda o: o["kind"] != "Node")
    for fixture in ordered:
        text = json.dumps(fixture)
        for old, new in real_uids.items():
            text = text.replace(old, new)
        obj = json.loads(text)
        meta = obj["metadata"]
        fixture_uid = meta.pop("uid", None)
        meta.pop("creationTimestamp", None)
        created = cluster.api.create(obj)
        if fixture_uid:
            real_uids[fixture_uid] = created["metadata"]["uid"]
        if obj["kind"] == "Cluster":
            cluster.workload_kubeconfig_secret(meta["namespace"], meta["name"])


def delete_nodes(cluster: ManagementCluster, objects: list[dict[str, Any]]) -> None:
    """Delete a scenario's Nodes. The test server is every Cluster's "workload cluster", and a
    Node Cluster API never matched carries no annotation naming its Cluster: left behind, it
    would be a Node outside the pools of every later Cluster on the server."""
    for obj in objects:
        if obj["kind"] == "Node":
            with contextlib.suppress(APIError):
                cluster.api.request("DELETE", f"/api/v1/nodes/{obj['metadata']['name']}")


def kubectl_dump(
    cluster: ManagementCluster, namespace: str, objects: list[dict[str, Any]], directory: Path
) -> list[str]:
    """`kubectl get -o yaml` of every kind in the scenario, as an operator would save it."""
    kinds = Kinds()
    resources = sorted(
        {
            ".".join(
                p
                for p in (
                    kinds.lookup(o["apiVersion"], o["kind"]).plural,
                    o["apiVersion"].rpartition("/")[0],
                )
                if p
            )
            for o in objects
            if o["kind"] != "Node"
            and not (o["kind"] == "Event" and o["involvedObject"]["kind"] == "Node")
        }
    )
    base = [
        str(binaries_dir() / "kubectl"),
        "--kubeconfig",
        str(cluster.kubeconfig),
        "get",
        "-o",
        "yaml",
    ]
    files = []
    for name, args in (
        ("management", ["-n", namespace, ",".join(resources)]),
        ("nodes", ["nodes"]),
        # The workload's Node Events live in "default" (or wherever their reporter put them).
        ("node-events", ["events", "-A", "--field-selector", "involvedObject.kind=Node"]),
    ):
        out = subprocess.run([*base, *args], capture_output=True, text=True, check=True, timeout=60)
        path = directory / f"{name}.yaml"
        path.write_text(out.stdout)
        files += ["-f", str(path)]
    return files
