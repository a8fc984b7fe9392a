"""Conditions of any object, in both Cluster API condition generations.

Cluster API moved from its own Condition type (with `severity`; now "v1beta1", kept under
status.deprecated.v1beta1) to metav1 conditions ("v1beta2"). MachinePools still set only
`Paused` in the new set, so readers must look at both and say which one they used.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, text
from kubectl_machinepool.base.timeutil import parse_time

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


class Condition(NamedTuple):
    """A NamedTuple, not a frozen dataclass: a pool's JSON output makes about 20 per instance,
    and a frozen dataclass takes five times as long to make (3.6 against 0.75 us)."""

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


class Conditions:
    """Both condition sets of an object, current (metav1, "v1beta2") and legacy (v1beta1),
    read from its raw lists when asked: get() makes only the condition it finds, and the
    sets are made whole once, when read whole. A tree of thousands of instances asks each for
    one or two of its twenty conditions. Immutable, as the raw objects are (compact.py)."""

    __slots__ = ("_raw", "_sets")

    def __init__(self, current: Any = None, legacy: Any = None) -> None:
        self._raw = (current, legacy)
        self._sets: tuple[tuple[Condition, ...], tuple[Condition, ...]] | None = None

    def _parsed(self) -> tuple[tuple[Condition, ...], tuple[Condition, ...]]:
        if self._sets is None:
            self._sets = (_parse(self._raw[0], False), _parse(self._raw[1], True))
        return self._sets

    @property
    def current(self) -> tuple[Condition, ...]:
        return self._parsed()[0]

    @property
    def legacy(self) -> tuple[Condition, ...]:
        return self._parsed()[1]

    @property
    def all(self) -> tuple[Condition, ...]:
        current, legacy = self._parsed()
        return (*current, *legacy)

    def get(self, kind: str) -> Condition | None:
        """The condition of that type, from the current set if it has it, else the v1beta1 set."""
        if self._sets is not None:
            return next((c for c in self.all if c.type == kind), None)
        if not kind:
            return None
        for raw, legacy in ((self._raw[0], False), (self._raw[1], True)):
            if type(raw) is list:
                for item in raw:
                    if isinstance(item, dict):
                        found = item.get("type")
                        if found == kind if type(found) is str else text(found) == kind:
                            return _condition(item, kind, legacy)
        return None

    def first(self, *kinds: str) -> Condition | None:
        for kind in kinds:
            found = self.get(kind)
            if found is not None:
                return found
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Conditions) and self._parsed() == other._parsed()

    def __hash__(self) -> int:
        return hash(self._parsed())

    def __repr__(self) -> str:
        current, legacy = self._parsed()
        return f"Conditions(current={current!r}, legacy={legacy!r})"


def _type_of(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    return kind if type(kind) is str and kind else text(kind)


def _condition(item: dict[str, Any], kind: str, legacy: bool) -> Condition:
    # Run for most conditions of every object (about 20 per instance): plain strings, the
    # shape the API server sends, take the short way; anything else goes through text().
    status = item.get("status")
    reason = item.get("reason")
    message = item.get("message")
    severity = item.get("severity")
    return Condition(
        kind,
        # Case matters upstream too ("true" is not True); the JSON schema promises these three.
        status if type(status) is str and status in STATUSES else "Unknown",
        reason if type(reason) is str else text(reason) or "",
        (message if type(message) is str else text(message) or "").strip(),
        parse_time(item.get("lastTransitionTime")),
        severity if type(severity) is str else text(severity) or "",
        legacy,
    )


def _parse(raw: Any, legacy: bool) -> tuple[Condition, ...]:
    out = []
    for item in items(raw):
        kind = _type_of(item)
        if kind is not None:
            out.append(_condition(item, kind, legacy))
    return tuple(out)


def read_conditions(obj: RawObject) -> Conditions:
    """Both condition sets of an object, wherever its API version keeps them."""
    status = mapping(obj.get("status"))
    plain = status.get("conditions")
    newer = dig(status, "v1beta2", "conditions")
    if newer is not None:
        # A v1beta1 API object that also reports v1beta2 conditions (CAPI 1.9+ view of v1beta1).
        return Conditions(newer, plain)
    older = dig(status, "deprecated", "v1beta1", "conditions")
    if older is not None:
        return Conditions(plain, older)
    api_version = text(obj.get("apiVersion")) or ""
    capi_v1beta1 = api_version.startswith("cluster.x-k8s.io/") and api_version.endswith("/v1beta1")
    # Providers on the v1beta1 contract still write Cluster API's old type: it has `severity`,
    # and `reason` is optional there while metav1 requires it.
    legacy = capi_v1beta1 or any("severity" in c or not c.get("reason") for c in items(plain))
    return Conditions(None, plain) if legacy else Conditions(plain, None)
