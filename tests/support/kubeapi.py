"""A deliberately small HTTP client for test setup, independent of the code under test.

Tests seed objects with it the way a controller would: create the object, then write its status
through the status subresource (create ignores .status).
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from .kinds import Kinds


class APIError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body

    def __reduce__(self) -> tuple[type[APIError], tuple[int, str]]:
        # Raised in the fault matrix's worker processes: it must cross back whole.
        return (APIError, (self.status, self.body))


@dataclass
class KubeAPI:
    server: str
    context: ssl.SSLContext
    kinds: Kinds

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=30) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            with err:
                body = err.read().decode(errors="replace")
            raise APIError(err.code, body) from None
        return json.loads(raw) if raw else None

    def path_of(self, obj: dict[str, Any], name: str | None = None) -> str:
        api_version, kind = obj["apiVersion"], obj["kind"]
        info = self.kinds.lookup(api_version, kind)
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        namespace = obj.get("metadata", {}).get("namespace")
        if info.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        path = f"{base}/{info.plural}"
        return f"{path}/{name}" if name else path

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create the object and, when it carries one, write its status like a controller would."""
        body = {k: v for k, v in obj.items() if k != "status"}
        created = self.request("POST", self.path_of(obj), body)
        if obj.get("status"):
            return self.set_status(obj)
        return created  # type: ignore[no-any-return]

    def set_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        path = self.path_of(obj, obj["metadata"]["name"]) + "/status"
        patch = {"status": obj["status"]}
        return self.request("PATCH", path, patch, "application/merge-patch+json")  # type: ignore[no-any-return]

    def get(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self.request("GET", self.path_of(obj, obj["metadata"]["name"]))  # type: ignore[no-any-return]

    def create_all(self, objects: list[dict[str, Any]]) -> None:
        for obj in objects:
            self.create(obj)

    def wait_for(self, path: str, check: Any, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = self.request("GET", path)
                if check(found):
                    return found
            except APIError as err:
                if err.status != 404 or time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} did not become ready in {timeout}s")
            time.sleep(0.1)
