"""API discovery: which version of a kind the server serves, and under what plural, asked of
the kind's CRD or of API discovery, as Cluster API resolves unversioned references."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from kubectl_machinepool.base.apiversion import (
    CAPI_GROUP,
    contract_versions,
    crd_plural,
    newest,
    version_priority,
)
from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, text
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


class Lister(Server, Protocol):
    """A server whose MachinePools are listed while finding the Cluster API version."""

    def list(
        self, resource: Resource, namespace: str | None, selector: str | None = None
    ) -> list[RawObject]: ...


class ServedKinds:
    """What one API server serves, found once per run and kept: the Cluster API version, and
    each kind's version and plural. A followed view reads again on each change, on the same
    connections (client.Kube.kept): none of it is asked again."""

    def __init__(self, server: Lister) -> None:
        self._server = server
        self._resources: dict[tuple[str, str], Resource] = {}
        self._capi_version: str | None = None
        self._lock = threading.Lock()

    def capi_version(self) -> str:
        """v1beta2 (CAPI 1.11+) when served, else v1beta1."""
        if self._capi_version is None:
            self._capi_version = served_capi_version(self._server)
        return self._capi_version

    def machine_pools(self, namespace: str | None, selector: str | None) -> list[RawObject]:
        """Every MachinePool in scope. On a server that serves v1beta2 (CAPI 1.11 and later)
        the LIST shows it, so the discovery round trip is made only when that LIST finds no
        such resource (a v1beta1-only server, or no Cluster API at all)."""
        if self._capi_version is None:
            try:
                found = self._server.list(self.likely("MachinePool"), namespace, selector)
            except NotFoundError:
                pass
            else:
                self._capi_version = "v1beta2"
                return found
        return self._server.list(self.capi("MachinePool"), namespace, selector)

    def likely(self, kind: str) -> Resource:
        """One of Cluster API's own kinds before any read found the version: the newest, the
        one machine_pools() tries first (or the version found, once it is known)."""
        return Resource(CAPI_GROUP, self._capi_version or "v1beta2", kind, CAPI_PLURALS[kind])

    def capi(self, kind: str) -> Resource:
        """One of Cluster API's own kinds, in the version served. Their plurals are fixed, so
        no CRD is read: on a busy server that GET held the Machine LIST back ~40 ms."""
        return Resource(CAPI_GROUP, self.capi_version(), kind, CAPI_PLURALS[kind])

    def resource(self, group: str, kind: str, preferred: str | None) -> Resource:
        """group+kind resolved to a served version and plural, as Cluster API does: v1beta2
        references carry no version, so from the CRD's contract label; without permission to
        read CRDs, from API discovery."""
        key = (group, kind)
        with self._lock:
            known = self._resources.get(key)
        if known is not None:
            return known
        found = from_crd(self._server, group, kind, preferred) or from_discovery(
            self._server, group, kind, preferred
        )
        if found is None:
            where = self._server.where
            raise NotFoundError(f"no API on {where} serves kind {kind} in group {group}")
        with self._lock:
            return self._resources.setdefault(key, found)


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
