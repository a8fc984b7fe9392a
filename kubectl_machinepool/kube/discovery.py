"""API discovery: which version of a kind the server serves, and under what plural, asked of
the kind's CRD or of API discovery, as Cluster API resolves unversioned references."""

from __future__ import annotations

from typing import Any, Protocol

from kubectl_machinepool.base.apiversion import (
    CAPI_GROUP,
    contract_versions,
    crd_plural,
    newest,
    version_priority,
)
from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import dig, items, mapping, text
from kubectl_machinepool.kube.resource import Resource

# Cluster API's own kinds have fixed plurals: no CRD is read for them.
CAPI_PLURALS = {
    "Cluster": "clusters",
    "MachinePool": "machinepools",
    "Machine": "machines",
    "MachineHealthCheck": "machinehealthchecks",
}


class Server(Protocol):
    """What discovery asks: an API server (client.Kube) and how to name it in an error."""

    @property
    def where(self) -> str: ...
    def request(self, method: str, path: str) -> dict[str, Any]: ...


def served_capi_version(server: Server) -> str:
    """v1beta2 (CAPI 1.11+) when the server serves it, else v1beta1."""
    try:
        group = server.request("GET", f"/apis/{CAPI_GROUP}")
    except NotFoundError:
        raise NotFoundError(
            f"Cluster API is not installed on {server.where}: "
            f"the {CAPI_GROUP} API group is not served",
            hint="MachinePools live on the management cluster; check --context",
        ) from None
    served = [v.get("version") for v in items(group.get("versions"))]
    for version in ("v1beta2", "v1beta1"):
        if version in served:
            return version
    raise NotFoundError(
        f"{server.where} serves {CAPI_GROUP} only in {', '.join(map(str, served))}",
        hint="supported: Cluster API v1beta1 (up to 1.10) and v1beta2 (1.11 and later)",
    )


def from_crd(server: Server, group: str, kind: str, preferred: str | None) -> Resource | None:
    """The served version and plural the kind's CRD names (the newest by its contract label)."""
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_plural(kind)}.{group}"
    try:
        crd = server.request("GET", path)
    except MachinePoolError:
        return None  # no CRD access, no such CRD, or a failing server: ask discovery
    spec = mapping(crd.get("spec"))
    served = [text(v.get("name")) or "" for v in items(spec.get("versions")) if v.get("served")]
    labels = mapping(dig(crd, "metadata", "labels"))
    by_contract = [v for v in contract_versions(labels) if v in served]
    version = preferred if preferred in served else newest(by_contract) or newest(served)
    if version is None:
        return None
    return Resource(
        group,
        version,
        kind,
        text(dig(spec, "names", "plural")) or crd_plural(kind),
        spec.get("scope") != "Cluster",
    )


def from_discovery(server: Server, group: str, kind: str, preferred: str | None) -> Resource | None:
    """The same from API discovery, for a user who may not read CRDs."""
    try:
        api_group = server.request("GET", f"/apis/{group}")
    except NotFoundError:
        return None
    versions = [text(v.get("version")) or "" for v in items(api_group.get("versions"))]
    versions.sort(key=lambda v: (v == preferred, version_priority(v)), reverse=True)
    for version in versions:
        listed = server.request("GET", f"/apis/{group}/{version}").get("resources")
        for res in items(listed):
            name = text(res.get("name")) or ""
            if res.get("kind") == kind and name and "/" not in name:
                return Resource(group, version, kind, name, bool(res.get("namespaced")))
    return None
