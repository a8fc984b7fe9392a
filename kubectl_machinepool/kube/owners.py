"""The objects that apply pools from outside, read by name beside a write plan's other reads: the
Argo CD Application, Flux Kustomization or HelmRelease the pools' signals name (model/ownership.py),
for the plan to say whether it reverts the write (plans/ownerstate.py).

One GET each, side by side (kube/parallel.py), at most MAX_OWNERS, each within the request timeout
(OWNER_TIMEOUT without one); none is fatal. What cannot be read (RBAC, no such object, its CRD not
installed because Argo CD runs in another cluster, a name that is no object name) is kept with
why, and the plan calls that owner's state unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from urllib.parse import quote

from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.parallel import Pending
from kubectl_machinepool.kube.reads import Reads
from kubectl_machinepool.model.ownership import OwnerRef, appliers
from kubectl_machinepool.plans.ownerstate import located

# Owner objects read for one plan: a pool names one or two; more come only from hostile labels.
MAX_OWNERS = 16
# A GET of one object, when --request-timeout sets no bound on a whole request.
OWNER_TIMEOUT = 30.0
# A namespace or object name as the API server allows one (a DNS subdomain): anything else in a
# label or annotation never reaches a request path.
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
# The API server's answer for a path it serves no resource at: the kind is not installed.
_NO_RESOURCE = "the server could not find the requested resource"


@record
class OwnerRead:
    ref: OwnerRef
    obj: RawObject | None
    why: str = ""

    @property
    def unread(self) -> tuple[str, str, str, str, str]:
        """As Snapshot.unread_objects holds it."""
        ref = self.ref
        return (ref.group, ref.kind, ref.namespace, ref.name, self.why)


def owner_refs(objects: Iterable[RawObject]) -> list[OwnerRef]:
    """The owner objects the objects' GitOps appliers name, each once, where to read them. The
    topology's Cluster is not one: the plans read Clusters anyway."""
    found: dict[OwnerRef, None] = {}
    for obj in objects:
        for applier in appliers(obj):
            if applier.gitops and applier.ref is not None and applier.ref.kind != "Cluster":
                ref = located(applier.ref)
                if ref.namespace:
                    found.setdefault(ref)
    return list(found)


def read_owner(kube: Kube, ref: OwnerRef) -> OwnerRead:
    if not (_NAME.fullmatch(ref.namespace) and _NAME.fullmatch(ref.name)):
        return OwnerRead(ref, None, "its name or namespace is no Kubernetes object name")
    path = "/apis/{}/{}/namespaces/{}/{}/{}".format(
        *(quote(part, safe="") for part in (ref.group, ref.version, ref.namespace, ref.plural)),
        quote(ref.name, safe=""),
    )
    timeout = OWNER_TIMEOUT if kube.timeout is None else None
    try:
        obj = kube.request("GET", path, timeout=timeout)
    except NotFoundError as err:
        why = f"no such {ref.kind}"
        if _NO_RESOURCE in err.message:
            why = f"this cluster serves no {ref.kind} kind ({ref.plural}.{ref.group})"
        return OwnerRead(ref, None, why)
    except MachinePoolError as err:
        return OwnerRead(ref, None, err.message)
    if text(obj.get("kind")) != ref.kind or text(dig(obj, "metadata", "name")) != ref.name:
        return OwnerRead(ref, None, f"the answer is no {ref.kind} {ref.name}")
    return OwnerRead(ref, obj)


class OwnerReads:
    """The owner reads of one plan: started for the objects given, each owner once, up to
    MAX_OWNERS in all; taken once every read ends."""

    def __init__(self, reads: Reads, objects: Iterable[RawObject]) -> None:
        self._reads = reads
        self._refs: list[OwnerRef] = []
        self._pending: list[Pending[OwnerRead]] = []
        self.unread: list[tuple[str, str, str, str, str]] = []
        self.start(objects)

    def start(self, objects: Iterable[RawObject]) -> None:
        fresh = [r for r in owner_refs(objects) if r not in self._refs]
        fresh = fresh[: MAX_OWNERS - len(self._refs)]
        self._refs += fresh
        kube = self._reads.kube
        self._pending += [self._reads.spawn(partial(read_owner, kube, ref)) for ref in fresh]

    def taken(self) -> list[RawObject]:
        """The objects read; why each other could not be is kept in unread."""
        done = [pending.result() for pending in self._pending]
        self.unread = [read.unread for read in done if read.obj is None]
        return [read.obj for read in done if read.obj is not None]
