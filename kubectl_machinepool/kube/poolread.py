"""One MachinePool by name: one GET, no LIST of anything (rollout history's read, and the
revision numbers completion offers). The newest Cluster API version is asked first, as
machine_pools() lists it; only a 404 asks discovery whether that version is served at all."""

from __future__ import annotations

import re

from kubectl_machinepool.base.errors import NotFoundError, pools_not_found
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.kube.client import Kube

# What the API server allows a MachinePool to be named (a DNS-1123 subdomain): any other name
# is one no pool has, and never a path of its own ("..", "a?b").
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", re.A)


def read_pool(kube: Kube, namespace: str, name: str) -> RawObject:
    """The MachinePool, or NotFoundError in kubectl's words."""
    if not _NAME.fullmatch(name) or not _NAME.fullmatch(namespace):
        raise pools_not_found([name], namespace)
    guess = kube.likely_capi_resource("MachinePool")
    try:
        return kube.request("GET", f"{guess.path(namespace)}/{name}")
    except NotFoundError:
        if kube.capi_version() == guess.version:
            raise pools_not_found([name], namespace) from None
    served = kube.capi_resource("MachinePool")
    try:
        return kube.request("GET", f"{served.path(namespace)}/{name}")
    except NotFoundError:
        raise pools_not_found([name], namespace) from None
