"""The only module that imports the Kubernetes client: transport and API discovery.

It speaks raw JSON over the client's REST layer (no typed models, which cost seconds to import
and reject unknown fields), lists in chunks, and translates every transport or API failure into a
MachinePoolError. What to read is fetch.py's business; both return plain data.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from kubectl_machinepool.apiversion import contract_versions, crd_plural, newest, version_priority
from kubectl_machinepool.errors import (
    ClusterAccessError,
    ConflictError,
    MachinePoolError,
    NotFoundError,
    UnreachableError,
)
from kubectl_machinepool.connection import Connection, load_connection
from kubectl_machinepool.options import AccessOptions
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject

LIST_CHUNK = 500
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"


class Kube:
    """A connection to one API server plus a per-run cache of API discovery."""

    def __init__(self, connection: Connection, request_timeout: float | None) -> None:
        from kubernetes.client.api_client import ApiClient

        connection.configuration.retries = False  # fail fast and say why, like kubectl
        if not connection.configuration.verify_ssl:
            # The user chose insecure-skip-tls-verify; kubectl does not nag about it either.
            import urllib3

            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        self.connection = connection
        self._client = ApiClient(connection.configuration)
        self._timeout = request_timeout
        self._resources: dict[tuple[str, str], Resource] = {}

    @classmethod
    def connect(cls, access: AccessOptions) -> Kube:
        return cls(load_connection(access.kubeconfig, access.context), access.request_timeout)

    def __enter__(self) -> Kube:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()
        for fd in self.connection.held_files:
            os.close(fd)

    @property
    def where(self) -> str:
        ctx = self.connection.context
        return f"context {ctx!r} ({self.connection.server})" if ctx else self.connection.server

    # -- transport ---------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        accept: str = "application/json",
        *,
        body: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        import urllib3
        from kubernetes.client.exceptions import ApiException

        url_path = path + ("?" + urlencode(query) if query else "")
        header_params = {"Accept": accept}
        if body is not None:
            header_params["Content-Type"] = content_type
        try:
            _, url, plain_headers, _, _ = self._client.param_serialize(
                method, url_path, header_params=header_params, auth_settings=["BearerToken"]
            )
            headers = urllib3.HTTPHeaderDict(plain_headers)
            for name, value in self.connection.headers:  # repeated Impersonate-Group is allowed
                headers.add(name, value)
            response = self._client.call_api(
                method, url, headers, body, _request_timeout=self._timeout
            )
            status, data = response.status, response.read()
        except urllib3.exceptions.NewConnectionError as err:
            # Caught first: urllib3 derives it from its timeout errors.
            raise self._unreachable(err) from err
        except urllib3.exceptions.TimeoutError as err:
            raise UnreachableError(
                f"the API server of {self.where} did not answer within the request timeout",
                hint="raise --request-timeout, or check that the server is reachable",
            ) from err
        except (urllib3.exceptions.HTTPError, ApiException, OSError) as err:
            raise self._unreachable(err) from err
        if 200 <= status < 300:
            return self._document(data, path)
        raise self._api_error(method, path, status, data)

    def _document(self, body: bytes, path: str) -> dict[str, Any]:
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            # A login page or proxy answering in place of the API server, typically.
            raise ClusterAccessError(
                f"the server of {self.where} did not answer {path} like a Kubernetes API server",
                hint="check the server address and any proxy in between",
            )
        return document

    def _unreachable(self, err: BaseException) -> UnreachableError:
        return UnreachableError(
            f"cannot reach the API server of {self.where}: {_reason(err)}",
            hint="check --context and --kubeconfig, and that the cluster is up",
        )

    def _api_error(self, method: str, path: str, status: int, body: bytes) -> MachinePoolError:
        try:
            message = json.loads(body).get("message") or ""
        except (ValueError, AttributeError):
            message = ""
        message = message or f"{method} {path} returned HTTP {status}"
        if status == 401:
            return ClusterAccessError(
                f"the API server of {self.where} rejected the credentials (401 Unauthorized)",
                hint="log in again or refresh the credentials of this context",
            )
        if status == 403:
            return ClusterAccessError(message, hint="ask an administrator for RBAC access to it")
        if status == 404:
            return NotFoundError(message)
        if status == 409:
            return ConflictError(
                message, hint="it changed since it was read: run the command again"
            )
        return MachinePoolError(f"{message} (HTTP {status})")

    def list(
        self,
        resource: Resource,
        namespace: str | None,
        selector: str | None = None,
        *,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> list[RawObject]:
        """Every object of a kind in a namespace (or all), in chunks, with TypeMeta filled in.

        metadata_only asks the server for PartialObjectMetadata: names and labels without the
        data, which is all a check for Secrets needs and all it should see.
        """
        items: list[RawObject] = []
        query: dict[str, str] = {"limit": str(LIST_CHUNK)}
        if selector:
            query["labelSelector"] = selector
        if field_selector:
            query["fieldSelector"] = field_selector
        accept = METADATA_ONLY if metadata_only else "application/json"
        while True:
            page = self.request("GET", resource.path(namespace), query, accept)
            for item in page.get("items") or []:
                if not isinstance(item, dict):
                    continue
                # List items come without TypeMeta; keep them shaped like `kubectl get -o yaml`.
                if metadata_only:
                    item.update(apiVersion=resource.api_version, kind=resource.kind)
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", resource.kind)
                items.append(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def allowed(self, attributes: dict[str, str]) -> bool:
        """Whether the server lets this user do it (SelfSubjectAccessReview resourceAttributes)."""
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        answer = self.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review
        )
        return (answer.get("status") or {}).get("allowed") is True

    # -- discovery ---------------------------------------------------------------------------

    def capi_version(self) -> str:
        """The Cluster API version to read: v1beta2 (CAPI 1.11+) when served, else v1beta1."""
        try:
            group = self.request("GET", f"/apis/{CAPI_GROUP}")
        except NotFoundError:
            raise NotFoundError(
                f"Cluster API is not installed on {self.where}: "
                f"the {CAPI_GROUP} API group is not served",
                hint="MachinePools live on the management cluster; check --context",
            ) from None
        served = [v.get("version") for v in group.get("versions") or []]
        for version in ("v1beta2", "v1beta1"):
            if version in served:
                return version
        raise NotFoundError(
            f"{self.where} serves {CAPI_GROUP} only in {', '.join(map(str, served))}",
            hint="supported: Cluster API v1beta1 (up to 1.10) and v1beta2 (1.11 and later)",
        )

    def resource(self, group: str, kind: str, preferred: str | None = None) -> Resource:
        """Resolve group+kind to a served version and plural, as Cluster API does, cached per run.

        v1beta2 references carry no version: read it from the CRD's contract label; without
        permission to read CRDs, fall back to API discovery.
        """
        key = (group, kind)
        if key not in self._resources:
            found = self._from_crd(group, kind, preferred) or self._from_discovery(
                group, kind, preferred
            )
            if found is None:
                raise NotFoundError(f"no API on {self.where} serves kind {kind} in group {group}")
            self._resources[key] = found
        return self._resources[key]

    def _from_crd(self, group: str, kind: str, preferred: str | None) -> Resource | None:
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_plural(kind)}.{group}"
        try:
            crd = self.request("GET", path)
        except (NotFoundError, ClusterAccessError):
            return None
        spec = crd.get("spec") or {}
        served = [v["name"] for v in spec.get("versions") or [] if v.get("served")]
        labels = (crd.get("metadata") or {}).get("labels") or {}
        by_contract = [v for v in contract_versions(labels) if v in served]
        version = preferred if preferred in served else newest(by_contract) or newest(served)
        if version is None:
            return None
        names = spec.get("names") or {}
        return Resource(
            group,
            version,
            kind,
            names.get("plural", crd_plural(kind)),
            spec.get("scope") != "Cluster",
        )

    def _from_discovery(self, group: str, kind: str, preferred: str | None) -> Resource | None:
        try:
            api_group = self.request("GET", f"/apis/{group}")
        except NotFoundError:
            return None
        versions = [v["version"] for v in api_group.get("versions") or []]
        versions.sort(key=lambda v: (v == preferred, version_priority(v)), reverse=True)
        for version in versions:
            for res in self.request("GET", f"/apis/{group}/{version}").get("resources") or []:
                if res.get("kind") == kind and "/" not in res.get("name", ""):
                    return Resource(group, version, kind, res["name"], bool(res.get("namespaced")))
        return None


def _reason(err: BaseException) -> str:
    """The useful last part of a urllib3/ssl error, on one line."""
    text = str(getattr(err, "reason", None) or err).strip().splitlines()[-1]
    return text.rsplit("] ", 1)[-1] if "[Errno" in text else text
