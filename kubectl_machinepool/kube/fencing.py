"""After a write got no answer: make sure it can no longer land, then read what it did.

A write whose reply was lost (a timeout or a reset after it was sent, Ctrl-C while it was in
flight) may still be on its way: a slow API server, a busy etcd or a buffering load balancer can
apply it seconds later. One read proves nothing while the object still holds the resourceVersion
the write names as its precondition. So the object is fenced first: a patch of an annotation of
the tool's own, conditioned on that same resourceVersion, moves the version on, and the write in
flight then fails its precondition wherever it is. The fence and the write name the same version,
so the API server lets exactly one of them through; a 409 on the fence means the version moved
first, and a new read decides. The fence annotation is removed at once.

Once the version has moved, by the fence or by anyone, the write in flight can no longer land:
what the object holds is final for it.
"""

from __future__ import annotations

import secrets

from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.plans.writes import (
    FIELD_MANAGER,
    MERGE_PATCH,
    Write,
    deleted,
    reflected,
    scaled,
)

# A key of the tool's own; its value is a token of one settle, so a fence whose reply was lost
# too is recognised on the next read.
FENCE_ANNOTATION = "kubectl-machinepool/fence"
# Fences tried before the outcome is "unknown": each 409 means the version moved, which usually
# settles it at the next read; only a fence that keeps losing its reply goes round again.
FENCE_ATTEMPTS = 3


@record
class Settled:
    """What a write that got no answer did: True took effect, False did not and never will,
    None unknown (why says what could not be done)."""

    effect: bool | None
    # The object as last read (None: gone or unread).
    fresh: RawObject | None
    fenced: bool = False
    why: str = ""
    # The fence could not be removed: the object keeps the tool's annotation (harmless).
    fence_left: bool = False


def took_effect(write: Write, relied: RawObject, fresh: RawObject | None) -> bool | None:
    """Whether the object, as read, holds the write's effect (None: cannot be told)."""
    if write.verb == "delete":
        return deleted(fresh, write.target)
    if fresh is None or dig(fresh, "metadata", "uid") != write.target.uid:
        return None
    if write.subresource == "scale":
        return scaled(write, relied, fresh)
    return reflected(write.body or {}, fresh)


def settle(
    kube: Kube, write: Write, version: str, relied: RawObject, timeout: float | None
) -> Settled:
    """Decide a write sent with resourceVersion `version` whose answer never came."""
    ref = write.target
    token = secrets.token_hex(8)
    fence = {FENCE_ANNOTATION: token}
    for _ in range(FENCE_ATTEMPTS):
        try:
            fresh: RawObject | None = kube.request("GET", ref.path(), timeout=timeout)
        except NotFoundError:
            fresh = None
        except MachinePoolError as err:
            return Settled(None, None, why=f"it could not be read back: {err.message}")
        effect = took_effect(write, relied, fresh)
        ours = fresh is not None and _fence_of(fresh) == token
        left = False
        if ours:
            unfenced = _unfence(kube, ref.path(), timeout)
            fresh, left = unfenced or fresh, unfenced is None
        if effect is not False:
            return Settled(effect, fresh, ours, fence_left=left)
        assert fresh is not None  # a write of an object that is gone is None or True
        if ours or text(dig(fresh, "metadata", "resourceVersion")) != version:
            return Settled(False, fresh, ours, fence_left=left)
        try:
            kube.request(
                "PATCH",
                ref.path(),
                {"fieldManager": FIELD_MANAGER},
                body={"metadata": {"resourceVersion": version, "annotations": fence}},
                content_type=MERGE_PATCH,
                timeout=timeout,
            )
        except MachinePoolError as err:
            if err.status is None or err.status >= 500 or err.status in (404, 409, 429):
                continue  # something moved it, or the fence may not have landed: read again
            return Settled(None, fresh, why=f"it could not be fenced: {err.message}")
        unfenced = _unfence(kube, ref.path(), timeout)
        return Settled(False, unfenced, True, fence_left=unfenced is None)
    return Settled(None, None, why=f"{FENCE_ATTEMPTS} fences got no answer")


def _fence_of(obj: RawObject) -> str | None:
    return text(mapping(dig(obj, "metadata", "annotations")).get(FENCE_ANNOTATION))


def _unfence(kube: Kube, path: str, timeout: float | None) -> RawObject | None:
    """Remove the fence (only the tool's own key, so no precondition); None when that failed,
    which leaves a harmless annotation and the object unread."""
    try:
        return kube.request(
            "PATCH",
            path,
            {"fieldManager": FIELD_MANAGER},
            body={"metadata": {"annotations": {FENCE_ANNOTATION: None}}},
            content_type=MERGE_PATCH,
            timeout=timeout,
        )
    except MachinePoolError:
        return None
