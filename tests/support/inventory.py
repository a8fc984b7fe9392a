"""clusterctl's inventory as `clusterctl init` leaves it: the Provider CRD, one Provider object per
provider and the providers' controller Deployments, all labelled as clusterctl labels them
(cmd/clusterctl/client/repository/components.go InventoryObject, api/v1alpha3/labels.go)."""

from __future__ import annotations

import time
from typing import Any

from .crds import CRD_PATH
from .kubeapi import APIError, KubeAPI

Obj = dict[str, Any]

GROUP = "clusterctl.cluster.x-k8s.io"
PREFIXES = {
    "CoreProvider": "",
    "BootstrapProvider": "bootstrap-",
    "ControlPlaneProvider": "control-plane-",
    "InfrastructureProvider": "infrastructure-",
}


def manifest_label(name: str, type_: str) -> str:
    return PREFIXES[type_] + name


def _labels(label: str) -> dict[str, str]:
    return {GROUP: "", "cluster.x-k8s.io/provider": label}


def provider(name: str, type_: str, version: str, namespace: str) -> Obj:
    """A Provider object: its fields at the top level, named by the provider's label."""
    label = manifest_label(name, type_)
    return {
        "apiVersion": f"{GROUP}/v1alpha3",
        "kind": "Provider",
        "metadata": {
            "name": label,
            "namespace": namespace,
            "labels": {**_labels(label), f"{GROUP}/core": "inventory"},
        },
        "providerName": name,
        "type": type_,
        "version": version,
    }


def controller(
    label: str, name: str, namespace: str, image: str, args: tuple[str, ...] = ()
) -> Obj:
    """A provider's controller Deployment, with its kube-rbac-proxy-less manager container."""
    selector = {"cluster.x-k8s.io/provider": label, "control-plane": "controller-manager"}
    container = {"name": "manager", "image": image, "command": ["/manager"], "args": list(args)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": _labels(label)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": selector}, "spec": {"containers": [container]}},
        },
    }


def _field(description: str) -> Obj:
    return {"type": "string", "description": description}


# The schema of cmd/clusterctl/config/crd/bases/clusterctl.cluster.x-k8s.io_providers.yaml, its
# descriptions shortened: the test CRD set (Cluster API's config/crd/bases) does not hold it.
CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"providers.{GROUP}"},
    "spec": {
        "group": GROUP,
        "names": {
            "categories": ["cluster-api"],
            "kind": "Provider",
            "listKind": "ProviderList",
            "plural": "providers",
            "singular": "provider",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha3",
                "served": True,
                "storage": True,
                "subresources": {},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "providerName": _field("the name of the provider"),
                            "type": _field("the type of the provider"),
                            "version": _field("the component version"),
                            "watchedNamespace": _field("deprecated"),
                        },
                    }
                },
            }
        ],
    },
}


def remove_inventory_crd(api: KubeAPI) -> None:
    """Delete the Provider CRD (and so every Provider object) and wait until its API is gone."""
    try:
        api.request("DELETE", f"{CRD_PATH}/{CRD['metadata']['name']}")
    except APIError as err:
        if err.status != 404:
            raise
    deadline = time.monotonic() + 60
    while True:
        try:
            api.request("GET", f"/apis/{GROUP}/v1alpha3/providers")
        except APIError as err:
            if err.status == 404:
                return
            raise
        if time.monotonic() > deadline:
            raise TimeoutError(f"{CRD['metadata']['name']} still served")
        time.sleep(0.2)


def create_providers(api: KubeAPI, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        namespace = obj["metadata"]["namespace"]
        api.request("POST", f"/apis/{GROUP}/v1alpha3/namespaces/{namespace}/providers", obj)
