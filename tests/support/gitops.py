"""GitOps owners in the test cluster: Argo CD's Application and Flux's Kustomization CRDs as their
Go modules ship them (tests/testbin/build.sh copies them into the test binaries' cache), and
pools applied the way Argo CD and kustomize-controller apply them: a server-side apply under
their field manager, with their tracking annotation or labels."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import crds
from .controlplane import binaries_dir, pinned_versions
from .management import ManagementCluster

CAPI = "cluster.x-k8s.io"
APPLY_PATCH = "application/apply-patch+yaml"
ARGO_MANAGER = "argocd-controller"
FLUX_MANAGER = "kustomize-controller"
# The servers the CRDs were installed on, by port: once per run each.
_installed: set[int] = set()


def crd_dir() -> Path:
    versions = pinned_versions()
    name = f"gitops-{versions['ARGOCD_VERSION']}-{versions['KUSTOMIZE_CONTROLLER_VERSION']}"
    return binaries_dir() / "crds" / name


def install_gitops_crds(mgmt: ManagementCluster) -> None:
    """The Application and Kustomization CRDs on this server; missing files skip the test, or
    fail it under CI=true (tests/run then has just built them)."""
    files = [crd_dir() / "applications.yaml", crd_dir() / "kustomizations.yaml"]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        message = f"GitOps CRDs missing ({', '.join(missing)}); run tests/testbin/build.sh"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    if mgmt.server.port in _installed:
        return
    found = [
        _open_status(doc)
        for path in files
        for doc in yaml.safe_load_all(path.read_text())
        if doc and doc.get("kind") == "CustomResourceDefinition"
    ]
    crds.install(mgmt.api, found)
    _installed.add(mgmt.server.port)


def _open_status(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD with its status (and an Application's operation) left open: the tests write
    spec and metadata, whose schemas stay as shipped. Argo CD's status schema alone is 136 KB,
    and with it the two CRDs took 9.6 s to be served, 2.4 s without."""
    for version in crd["spec"]["versions"]:
        properties = version["schema"]["openAPIV3Schema"]["properties"]
        for name in ("status", "operation"):
            if name in properties:
                properties[name] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return crd


def server_side_apply(
    mgmt: ManagementCluster, path: str, body: dict[str, Any], manager: str
) -> dict[str, Any]:
    """PATCH as a server-side apply with force, as Argo CD's and Flux's syncs send it."""
    query = f"?fieldManager={manager}&force=true"
    return mgmt.api.request("PATCH", path + query, body, APPLY_PATCH)


def pool_path(mgmt: ManagementCluster, namespace: str, name: str) -> str:
    return f"/apis/{CAPI}/{mgmt.generation}/namespaces/{namespace}/machinepools/{name}"


def applied_pool(
    mgmt: ManagementCluster, pool: dict[str, Any], manager: str, **metadata: Any
) -> dict[str, Any]:
    """The fields a GitOps sync applies of a pool (its size and version, and the metadata
    given), applied under its manager: managedFields then name it for those fields."""
    meta = pool["metadata"]
    body = {
        "apiVersion": pool["apiVersion"],
        "kind": "MachinePool",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], **metadata},
        "spec": {
            "clusterName": pool["spec"]["clusterName"],
            "replicas": pool["spec"]["replicas"],
            "template": {"spec": {"version": pool["spec"]["template"]["spec"]["version"]}},
        },
    }
    return server_side_apply(mgmt, pool_path(mgmt, meta["namespace"], meta["name"]), body, manager)


def managers_of(obj: dict[str, Any], *path: str) -> set[str]:
    """The field managers whose managedFields own the field at path."""
    found = set()
    for entry in obj["metadata"].get("managedFields") or []:
        fields = entry.get("fieldsV1") or {}
        for key in path:
            fields = fields.get(f"f:{key}") if isinstance(fields, dict) else None
        if isinstance(fields, dict):
            found.add(entry["manager"])
    return found
