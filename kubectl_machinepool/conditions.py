"""Conditions of any object, in both Cluster API condition generations.

Cluster API moved from its own Condition type (with `severity`; now "v1beta1", kept under
status.deprecated.v1beta1) to metav1 conditions ("v1beta2"). MachinePools still set only
`Paused` in the new set, so readers must look at both and say which one they used.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_machinepool.fields import dig, items, mapping, text
from kubectl_machinepool.snapshot import RawObject
from kubectl_machinepool.timeutil import parse_time

# Conditions that are good when False (Cluster API's negative polarity, and Node pressure).
NEGATIVE_POLARITY = frozenset(
    {
        "Paused",
        "Deleting",
        "RollingOut",
        "ScalingUp",
        "ScalingDown",
        "Updating",
        "Remediating",
        "MemoryPressure",
        "DiskPressure",
        "PIDPressure",
        "NetworkUnavailable",
    }
)


# The only statuses Kubernetes defines; anything else an object holds reads as Unknown.
STATUSES = frozenset({"True", "False", "Unknown"})


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    # One of STATUSES.
    status: str
    reason: str = ""
    message: str = ""
    since: datetime | None = None
    severity: str = ""
    # True for Cluster API's deprecated v1beta1 condition set.
    legacy: bool = False

    @property
    def good(self) -> bool:
        wanted = "False" if self.type in NEGATIVE_POLARITY else "True"
        return self.status == wanted

    @property
    def generation(self) -> str:
        return "v1beta1" if self.legacy else "v1beta2"


@dataclass(frozen=True, slots=True)
class Conditions:
    current: tuple[Condition, ...] = ()
    legacy: tuple[Condition, ...] = ()

    def get(self, kind: str) -> Condition | None:
        """The condition of that type, from the current set if it has it, else the v1beta1 set."""
        for cond in (*self.current, *self.legacy):
            if cond.type == kind:
                return cond
        return None

    def first(self, *kinds: str) -> Condition | None:
        for kind in kinds:
            found = self.get(kind)
            if found is not None:
                return found
        return None

    @property
    def all(self) -> tuple[Condition, ...]:
        return (*self.current, *self.legacy)


def _parse(raw: Any, legacy: bool) -> tuple[Condition, ...]:
    # Run for every condition of every object (about 20 per instance): plain strings, the
    # shape the API server sends, take the short way; anything else goes through text().
    out = []
    for item in items(raw):
        kind = item.get("type")
        if type(kind) is not str or not kind:
            kind = text(kind)
            if kind is None:
                continue
        status = item.get("status")
        reason = item.get("reason")
        message = item.get("message")
        severity = item.get("severity")
        out.append(
            Condition(
                kind,
                # Case matters upstream too ("true" is not True); the JSON schema promises
                # these three.
                status if type(status) is str and status in STATUSES else "Unknown",
                reason if type(reason) is str else text(reason) or "",
                (message if type(message) is str else text(message) or "").strip(),
                parse_time(item.get("lastTransitionTime")),
                severity if type(severity) is str else text(severity) or "",
                legacy,
            )
        )
    return tuple(out)


def read_conditions(obj: RawObject) -> Conditions:
    """Both condition sets of an object, wherever its API version keeps them."""
    status = mapping(obj.get("status"))
    plain = status.get("conditions")
    newer = dig(status, "v1beta2", "conditions")
    if newer is not None:
        # A v1beta1 API object that also reports v1beta2 conditions (CAPI 1.9+ view of v1beta1).
        return Conditions(_parse(newer, False), _parse(plain, True))
    older = dig(status, "deprecated", "v1beta1", "conditions")
    if older is not None:
        return Conditions(_parse(plain, False), _parse(older, True))
    api_version = text(obj.get("apiVersion")) or ""
    capi_v1beta1 = api_version.startswith("cluster.x-k8s.io/") and api_version.endswith("/v1beta1")
    # Providers on the v1beta1 contract still write Cluster API's old type: it has `severity`,
    # and `reason` is optional there while metav1 requires it.
    legacy = capi_v1beta1 or any("severity" in c or not c.get("reason") for c in items(plain))
    return Conditions((), _parse(plain, True)) if legacy else Conditions(_parse(plain, False), ())
