"""What any write command sends: requests with preconditions, and how to tell they took effect.

A write addresses an object by the uid and resourceVersion its plan was made from, so a plan
made from objects that changed since fails with 409 instead of touching something the user did
not see. After a lost reply the object is read again, and these functions decide from what it
holds whether the write took effect. Commands build their writes; writing.py sends them.
"""

from __future__ import annotations

from typing import Any

from kubectl_machinepool.base.apiversion import group_of, version_of
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, dig, integer, mapping, text
from kubectl_machinepool.base.records import record

MERGE_PATCH = "application/merge-patch+json"
# Every PATCH and PUT names the tool, so managedFields (`kubectl get --show-managed-fields`) and a
# GitOps owner's diff say who made the change. A DELETE records no field manager.
FIELD_MANAGER = "kubectl-machinepool"
Key = tuple[str, str, str]


@record
class ObjectRef:
    """An object a write addresses, with the uid and resourceVersion the plan was made from."""

    group: str
    version: str
    kind: str
    plural: str
    namespace: str
    name: str
    uid: str
    resource_version: str

    @property
    def display(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def key(self) -> Key:
        """What identifies the object within a batch: its plural, namespace and name."""
        return (self.plural, self.namespace, self.name)

    @property
    def kubectl_name(self) -> str:
        """`machine.cluster.x-k8s.io/NAME`, the way kubectl names what it changed."""
        return f"{self.kind.lower()}.{self.group}/{self.name}"

    def path(self, subresource: str = "") -> str:
        base = f"/apis/{self.group}/{self.version}/namespaces/{self.namespace}/{self.plural}"
        return f"{base}/{self.name}" + (f"/{subresource}" if subresource else "")


@record
class Write:
    """One request of the plan. Preconditions (uid, resourceVersion) are added when it is sent,
    from the object as the plan saw it or as the previous write left it."""

    verb: str  # the RBAC verb: patch, update, delete
    target: ObjectRef
    summary: str
    body: dict[str, Any] | None = None
    subresource: str = ""
    # What to send to take this write back if a later one fails.
    undo: dict[str, Any] | None = None
    undo_summary: str = ""
    # Why a write without undo cannot be taken back, when that is not plain from its verb.
    kept_because: str = ""
    # How kubectl would report it: "annotated", "scaled", "deleted".
    done: str = ""

    @property
    def method(self) -> str:
        return {"patch": "PATCH", "update": "PUT", "delete": "DELETE"}[self.verb]

    @property
    def resource(self) -> str:
        """The resource as RBAC names it, e.g. machinepools/scale."""
        return self.target.plural + (f"/{self.subresource}" if self.subresource else "")

    @property
    def access(self) -> Access:
        t = self.target
        return Access(self.verb, t.group, t.plural, self.subresource, t.namespace, t.name)


@record
class Access:
    """What a SelfSubjectAccessReview asks about one write."""

    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str

    @property
    def attributes(self) -> dict[str, str]:
        """As SelfSubjectAccessReview's resourceAttributes."""
        fields = {
            "verb": self.verb,
            "group": self.group,
            "resource": self.resource,
            "subresource": self.subresource,
            "namespace": self.namespace,
            "name": self.name,
        }
        return {k: v for k, v in fields.items() if v}


@record
class Batch:
    """The writes of one confirmed plan and the objects, as the plan saw them, they address."""

    writes: tuple[Write, ...]
    planned: tuple[RawObject, ...]
    # How the user checks the state when a failure leaves it changed or unknown.
    check_hint: str
    # What the command changed before this batch and keeps whatever befalls it (a restart's
    # record and the instances it replaced): every report of the batch names it as left.
    earlier: tuple[str, ...] = ()


def object_ref(raw: RawObject, plural: str) -> ObjectRef:
    """The object as a write addresses it, with the uid and resourceVersion read."""
    meta = mapping(raw.get("metadata"))
    api_version = text(raw.get("apiVersion")) or ""
    return ObjectRef(
        group_of(api_version),
        version_of(api_version),
        text(raw.get("kind")) or "",
        plural,
        text(meta.get("namespace")) or "",
        text(meta.get("name")) or "",
        text(meta.get("uid")) or "",
        text(meta.get("resourceVersion")) or "",
    )


def definite(err: MachinePoolError) -> bool:
    """The server answered and refused: the write did not happen."""
    return err.status is not None and 400 <= err.status < 500


def identity(obj: RawObject) -> RawObject:
    """What a write relies on: everything but status and the bookkeeping that changes with it.
    spec.providerIDList is bookkeeping too: the provider writes the infra pool's and the
    MachinePool controller copies it, as instances come and go, between any two writes."""
    kept = {k: v for k, v in obj.items() if k not in ("status", "spec")}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        kept["spec"] = {k: v for k, v in spec.items() if k != "providerIDList"}
    elif "spec" in obj:
        kept["spec"] = spec
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k not in ("resourceVersion", "managedFields", "generation")
    }
    return {**kept, "metadata": meta}


def changed_fields(before: RawObject, now: RawObject) -> str:
    before, now = identity(before), identity(now)
    changed = []
    for part in ("metadata", "spec"):
        old, new = before.get(part) or {}, now.get(part) or {}
        changed += [
            f"{part}.{k}" for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)
        ]
    return ", ".join(changed) or "its content"


def _same(expected: Any, actual: Any) -> bool:
    if expected == actual:
        return True
    # The server writes a v1beta1 duration back normalised ("300s" comes back as "5m0s").
    if isinstance(expected, str) and isinstance(actual, str):
        try:
            return parse_duration(expected, "") == parse_duration(actual, "")
        except MachinePoolError:
            return False
    return False


def reflected(patch: dict[str, Any], obj: Any) -> bool:
    """Whether a merge patch's every leaf is what the object holds (null: the key is absent)."""
    for key, value in patch.items():
        present = isinstance(obj, dict) and key in obj and obj[key] is not None
        if value is None:
            if present:
                return False
        elif isinstance(value, dict):
            if not reflected(value, obj.get(key) if present else None):
                return False
        elif not present or not _same(value, obj[key]):
            return False
    return True


def deleted(fresh: RawObject | None, ref: ObjectRef) -> bool:
    if fresh is None or dig(fresh, "metadata", "uid") != ref.uid:
        return True
    return bool(dig(fresh, "metadata", "deletionTimestamp"))


def scaled(write: Write, relied: RawObject, fresh: RawObject) -> bool | None:
    was = integer(dig(relied, "metadata", "generation"))
    now = integer(dig(fresh, "metadata", "generation"))
    if now is not None and now == was:
        return False  # the spec is untouched since the plan
    if now is not None and was is not None and now > was + 1:
        return None  # someone else changed the spec too: its replicas prove nothing
    # Someone else may have scaled it after us: only the replicas we asked for are proof.
    wanted = integer(dig(write.body, "spec", "replicas"))
    return True if integer(dig(fresh, "spec", "replicas")) == wanted else None
