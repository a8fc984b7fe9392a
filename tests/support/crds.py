"""The CRDs a test management cluster serves.

Cluster API's own CRDs come from the Cluster API Go module (fetched by tests/testbin/build.sh) and
are cut to a single served version: the API server has no conversion webhook here, and with two
served versions and `None` conversion it would hand out v1beta2 data labelled v1beta1.

Provider CRDs are our own minimal schemas (any spec/status accepted) with the upstream group,
versions, kind, plural, status subresource and contract labels from provider_kinds.yaml.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from .controlplane import binaries_dir, pinned_versions
from .kinds import provider_kinds
from .kubeapi import APIError, KubeAPI

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def capi_crd_dir(generation: str) -> Path:
    versions = pinned_versions()
    capi = versions["CAPI_VERSION"] if generation == "v1beta2" else versions["CAPI_V1BETA1_VERSION"]
    return binaries_dir() / "crds" / f"capi-{capi}"


def single_version(crd: dict[str, Any], version: str) -> dict[str, Any]:
    """Serve and store only `version`; drop conversion and status; add the contract label."""
    kept = [dict(v) for v in crd["spec"]["versions"] if v["name"] == version]
    if not kept:
        raise ValueError(f"CRD {crd['metadata']['name']} has no {version}")
    for entry in kept:
        entry.update(served=True, storage=True)
        entry.pop("deprecated", None)
        entry.pop("deprecationWarning", None)
    spec = {k: v for k, v in crd["spec"].items() if k != "conversion"}
    spec["versions"] = kept
    meta = {k: v for k, v in crd["metadata"].items() if k != "creationTimestamp"}
    meta["labels"] = {**meta.get("labels", {}), f"cluster.x-k8s.io/{version}": version}
    return {"apiVersion": crd["apiVersion"], "kind": crd["kind"], "metadata": meta, "spec": spec}


# What the API servers without controllers serve. A live cluster (support.live) serves every core
# CRD: the manager's caches wait for all of them.
SEEDED_KINDS = (
    "clusters",
    "machines",
    "machinepools",
    "machinedeployments",
    "machinesets",
    "machinehealthchecks",
)


def capi_crds(
    generation: str, plurals: tuple[str, ...] | None = SEEDED_KINDS
) -> list[dict[str, Any]]:
    """The generation's CRDs cut to it; `plurals=None` means every CRD the release ships, each
    cut to its storage version (v1.10's ExtensionConfig has no v1beta1)."""
    crds = []
    for path in sorted(capi_crd_dir(generation).glob("*.yaml")):
        group_plural = path.stem.split("_", 1)
        if plurals is not None and (
            group_plural[0] != "cluster.x-k8s.io" or group_plural[1] not in plurals
        ):
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                crds.append(single_version(doc, generation if plurals else _storage(doc)))
    return crds


def _storage(crd: dict[str, Any]) -> str:
    return next(str(v["name"]) for v in crd["spec"]["versions"] if v.get("storage"))


_OPEN_OBJECT = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def provider_crd(entry: dict[str, Any]) -> dict[str, Any]:
    versions = []
    for version in entry["versions"]:
        served_version: dict[str, Any] = {
            "name": version,
            "served": True,
            "storage": version == entry["storage"],
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": _OPEN_OBJECT, "status": _OPEN_OBJECT},
                }
            },
            "subresources": {"status": {}},
        }
        if entry.get("scale"):
            served_version["subresources"]["scale"] = {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
            }
        versions.append(served_version)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{entry['plural']}.{entry['group']}",
            "labels": dict(entry["contract"]),
        },
        "spec": {
            "group": entry["group"],
            "names": {
                "kind": entry["kind"],
                "listKind": f"{entry['kind']}List",
                "plural": entry["plural"],
                "singular": entry["kind"].lower(),
                "shortNames": list(entry.get("shortNames") or []),
            },
            "scope": "Namespaced" if entry.get("namespaced", True) else "Cluster",
            "versions": versions,
        },
    }


def provider_crds() -> list[dict[str, Any]]:
    return [provider_crd(entry) for entry in provider_kinds()]


def install(api: KubeAPI, crds: list[dict[str, Any]], timeout: float = 60) -> None:
    """Create CRDs, then wait until each is Established and in discovery (as envtest does)."""
    for crd in crds:
        try:
            api.request("POST", CRD_PATH, crd)
        except APIError as err:
            if err.status != 409:
                raise
    deadline = time.monotonic() + timeout
    pending = {crd["metadata"]["name"]: crd for crd in crds}
    while pending:
        for name, crd in list(pending.items()):
            if _served(api, name, crd):
                del pending[name]
        if pending and time.monotonic() > deadline:
            raise TimeoutError(f"CRDs not served after {timeout}s: {sorted(pending)}")
        if pending:
            time.sleep(0.1)


def _served(api: KubeAPI, name: str, crd: dict[str, Any]) -> bool:
    current = api.request("GET", f"{CRD_PATH}/{name}")
    # Right after creation the status can hold conditions: null.
    conditions = {
        c["type"]: c["status"] for c in (current.get("status") or {}).get("conditions") or []
    }
    if conditions.get("Established") != "True":
        return False
    spec = crd["spec"]
    for version in spec["versions"]:
        try:
            resources = api.request("GET", f"/apis/{spec['group']}/{version['name']}")["resources"]
        except APIError:
            return False
        if spec["names"]["plural"] not in {r["name"] for r in resources}:
            return False
    return True
