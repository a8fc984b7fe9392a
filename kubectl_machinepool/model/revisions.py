"""The revisions the whole-pool writes record on a MachinePool, for `rollout history` to show and
`rollout undo` to go back with.

`upgrade`, `scale` and `rollout restart` each record, in the MachinePool's
kubectl-machinepool/revisions annotation and in the same request as their change of it, which
fields they write with their values before and after, when, by which version of the tool, under
a number one above the last. It lives on the MachinePool, so `clusterctl move` takes it along.

What may be recorded is an allow-list of what those commands write: the MachinePool's version
(a semantic version), its replicas (an int32 that is not negative) and the restart's start (an
RFC 3339 time), and each infra pool kind's version and image fields as the provider registry
lists them (printable, no whitespace, at most MAX_VALUE characters, as upgrade --set takes
them). The last KEPT revisions are kept, fewer when they would take more than MAX_BYTES encoded
(UTF-8 JSON), an eighth of the 256 KiB all of an object's annotations may hold.

The annotation is hostile input like the rest of the object: anyone who may patch the pool can
write it. Anything but what the tool writes (too large, not JSON, wrong types, a field outside
the allow-list, revisions not in ascending order, another pool's) is no usable history, with
the reason: shown, never applied. Pure.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.kubeversion import version
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.restartrecord import STARTED, parse_start
from kubectl_machinepool.providers.registry import infra_pool
from kubectl_machinepool.providers.upgrades import settable

ANNOTATION = "kubectl-machinepool/revisions"
KEPT = 10
MAX_BYTES = 32 * 1024
# A release, an image reference with its digest or a cloud image id is well under this.
MAX_VALUE = 1024
# A revision's command line and the tool's version, as recorded.
MAX_CAUSE = 512
MAX_TOOL = 64
# The annotation's layout; a newer one is no history this version can read.
FORMAT = 1
MAX_NUMBER = 2**31 - 1

VERSION = "spec.template.spec.version"
REPLICAS = "spec.replicas"
START = f"metadata.annotations.{STARTED}"
MACHINE_POOL = "MachinePool"

# A field's value: a version, image or id, a size, or an image object clearing writes whole.
Value = str | int | dict[str, Any] | None
# A Kubernetes object name (DNS-1123 subdomain).
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?", re.A)
_REVISION_KEYS = {"revision", "cause", "at", "tool", "changes"}
_CHANGE_KEYS = {"kind", "group", "name", "path", "before", "after"}


@record
class Change:
    """One field a write changed: on which object, from what, to what (None: unset)."""

    kind: str
    group: str
    name: str
    path: str
    before: Value
    after: Value

    @property
    def on_pool(self) -> bool:
        return (self.group, self.kind) == (CAPI_GROUP, MACHINE_POOL)

    @property
    def where(self) -> str:
        """The object and field, for a line: `DockerMachinePool pool-0 spec.template.image`."""
        return f"{self.kind} {self.name} {self.path}"


@record
class Revision:
    number: int
    # The command that made it, as the user would type it again: "upgrade --version v1.34.1".
    cause: str
    # When it was planned, RFC 3339: a restart's start (the API server's time), else the
    # clock of the machine that ran the command.
    at: str
    # The version of kubectl-machinepool that wrote it.
    tool: str
    changes: tuple[Change, ...]


@record
class History:
    """The revisions on a pool, oldest first; unusable says why the annotation is no history
    (None: it is one, or there is none)."""

    revisions: tuple[Revision, ...] = ()
    unusable: str | None = None
    # The annotation as read, for a write to put back if it must be taken back.
    value: str | None = None

    @property
    def last(self) -> Revision | None:
        return self.revisions[-1] if self.revisions else None

    @property
    def next_number(self) -> int:
        return self.revisions[-1].number + 1 if self.revisions else 1

    def find(self, number: int) -> Revision | None:
        return next((r for r in self.revisions if r.number == number), None)


class _Unusable(Exception):
    """Why the annotation is no usable history."""


def _printable(value: Any) -> str | None:
    if not isinstance(value, str):
        return "is not text"
    if len(value) > MAX_VALUE:
        return f"is {len(value)} characters long, over {MAX_VALUE}"
    if not value.isprintable() or any(c.isspace() for c in value):
        return "holds whitespace or a control character"
    return None


def _image(value: Any, depth: int = 0) -> str | None:
    """An image object a --set PATH= clears whole (CAPZ's spec.template.image): mappings of
    printable text, whole numbers and booleans, at most MAX_VALUE characters as JSON."""
    if not isinstance(value, dict):
        return _printable(value)
    if depth == 0 and len(json.dumps(value, ensure_ascii=False)) > MAX_VALUE:
        return f"is an object over {MAX_VALUE} characters"
    for key, entry in value.items():
        if depth > 3 or _printable(key):
            return "is an object nested too deep, or with a key that is no field name"
        if isinstance(entry, dict):
            why = _image(entry, depth + 1)
        elif isinstance(entry, bool | int):
            why = None
        else:
            why = _printable(entry)
        if why:
            return why
    return None


def _version(value: Any) -> str | None:
    return _printable(value) or (None if version(value) else "is not a semantic version")


def _replicas(value: Any) -> str | None:
    ok = type(value) is int and 0 <= value <= MAX_NUMBER
    return None if ok else "is not a size from 0 to 2147483647"


def _start(value: Any) -> str | None:
    ok = isinstance(value, str) and parse_start(value) is not None
    return None if ok else "is not an RFC 3339 time"


_POOL_FIELDS: dict[str, Callable[[Any], str | None]] = {
    VERSION: _version,
    REPLICAS: _replicas,
    START: _start,
}


def _judge(group: str, kind: str, path: str) -> Callable[[Any], str | None] | None:
    """How a recorded field's values are checked; None: the tool never writes that field."""
    if (group, kind) == (CAPI_GROUP, MACHINE_POOL):
        return _POOL_FIELDS.get(path)
    provider = infra_pool(group, kind)
    if provider is None or path not in settable(provider.upgrade):
        return None
    upgrade = provider.upgrade
    valued = {f.path for f in (*upgrade.fields, upgrade.deployed) if f is not None}
    # A path only clearing writes may hold an object: it is written back whole.
    return _printable if path in valued else _image


def change_problem(change: Change) -> str | None:
    """Why this change cannot be recorded (nor read back); None: it can."""
    judge = _judge(change.group, change.kind, change.path)
    if judge is None:
        return f"{change.where} is no field the tool writes"
    if not _NAME.fullmatch(change.name):
        return f"{change.kind} {change.name!r} is no object name"
    for side, value in (("before", change.before), ("after", change.after)):
        if value is not None and (why := judge(value)):
            return f"{change.where}'s value {side} {why}"
    return None


def _dumped(revision: Revision) -> dict[str, Any]:
    changes = [
        {
            "kind": c.kind,
            "group": c.group,
            "name": c.name,
            "path": c.path,
            "before": c.before,
            "after": c.after,
        }
        for c in revision.changes
    ]
    return {
        "revision": revision.number,
        "cause": revision.cause,
        "at": revision.at,
        "tool": revision.tool,
        "changes": changes,
    }


def encode(revisions: Sequence[Revision]) -> str:
    """The annotation's value: the newest KEPT revisions that fit in MAX_BYTES together."""
    kept = list(revisions[-KEPT:])
    while True:
        value = json.dumps(
            {"format": FORMAT, "revisions": [_dumped(r) for r in kept]},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        if len(value.encode()) <= MAX_BYTES or len(kept) == 1:
            return value
        kept.pop(0)


def recorded(history: History, revision: Revision) -> str | None:
    """The annotation with revision added, oldest dropped; None when the revision alone is
    over MAX_BYTES (revision_problem says so)."""
    value = encode([*history.revisions, revision])
    return value if len(value.encode()) <= MAX_BYTES else None


def revision_problem(revision: Revision) -> str | None:
    """Why this revision cannot be recorded; None: it can."""
    try:
        _texts(revision.number, revision.cause, revision.at, revision.tool)
    except _Unusable as unusable:
        return str(unusable)
    for change in revision.changes:
        if why := change_problem(change):
            return why
    size = len(encode([revision]).encode())
    if size > MAX_BYTES:
        return f"the revision is {size} bytes encoded, over the cap of {MAX_BYTES}"
    return None


def _text(value: Any, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise _Unusable(f"{what} is not printable text of at most {limit} characters")
    return value


def _texts(number: int, cause: Any, at: Any, tool: Any) -> tuple[str, str, str]:
    """A revision's cause, time and tool version, each as the tool writes it."""
    found = (
        _text(cause, MAX_CAUSE, f"revision {number}'s cause"),
        _text(at, MAX_CAUSE, f"revision {number}'s time"),
        _text(tool, MAX_TOOL, f"revision {number}'s tool version"),
    )
    if parse_start(found[1]) is None:
        raise _Unusable(f"revision {number}'s time is not an RFC 3339 time")
    return found


def _change(raw: Any) -> Change:
    if not isinstance(raw, dict) or set(raw) != _CHANGE_KEYS:
        raise _Unusable(f"a change is not an object of exactly {', '.join(sorted(_CHANGE_KEYS))}")
    kind, group, name, path = (raw[k] for k in ("kind", "group", "name", "path"))
    if not all(isinstance(t, str) and 0 < len(t) <= MAX_VALUE for t in (kind, group, name, path)):
        raise _Unusable("a change's kind, group, name or path is not text")
    change = Change(kind, group, name, path, raw["before"], raw["after"])
    if why := change_problem(change):
        raise _Unusable(why)
    return change


def _revision(raw: Any) -> Revision:
    if not isinstance(raw, dict) or set(raw) != _REVISION_KEYS:
        keys = ", ".join(sorted(_REVISION_KEYS))
        raise _Unusable(f"a revision is not an object of exactly {keys}")
    number = raw["revision"]
    if type(number) is not int or not 1 <= number <= MAX_NUMBER:
        raise _Unusable("a revision number is not a whole number from 1 to 2147483647")
    cause, at, tool = _texts(number, raw["cause"], raw["at"], raw["tool"])
    changes = raw["changes"]
    if not isinstance(changes, list) or not changes:
        raise _Unusable(f"revision {number} lists no changes")
    found = tuple(_change(c) for c in changes)
    fields = {(c.group, c.kind, c.name, c.path) for c in found}
    if len(fields) != len(found):
        raise _Unusable(f"revision {number} names a field twice")
    return Revision(number, cause, at, tool, found)


def _parsed(value: str) -> tuple[Revision, ...]:
    size = len(value.encode(errors="replace"))
    if size > MAX_BYTES:
        raise _Unusable(f"it is {size} bytes, over the cap of {MAX_BYTES}")
    try:
        document = json.loads(value)
    except (ValueError, RecursionError):
        raise _Unusable("it is not JSON") from None
    if not isinstance(document, dict) or set(document) != {"format", "revisions"}:
        raise _Unusable("it is not an object of exactly format and revisions")
    if document["format"] != FORMAT or type(document["format"]) is not int:
        raise _Unusable(f"its format is not {FORMAT}: written by another version of the tool")
    listed = document["revisions"]
    if not isinstance(listed, list) or not 1 <= len(listed) <= KEPT:
        raise _Unusable(f"it does not list 1 to {KEPT} revisions")
    revisions = tuple(_revision(r) for r in listed)
    numbers = [r.number for r in revisions]
    if any(a >= b for a, b in itertools.pairwise(numbers)):
        raise _Unusable("its revision numbers are not in ascending order, each once")
    return revisions


def decode(value: Any, pool: str | None = None) -> History:
    """The annotation's value as a history; pool: the MachinePool it was read from, which every
    change of the MachinePool must name."""
    if not isinstance(value, str):
        return History(unusable="it is not text")
    try:
        revisions = _parsed(value)
    except _Unusable as why:
        return History(unusable=str(why), value=value)
    for revision in revisions:
        for change in revision.changes:
            if pool is not None and change.on_pool and change.name != pool:
                return History(
                    unusable=f"revision {revision.number} changed MachinePool {change.name}, "
                    "not this one",
                    value=value,
                )
    return History(revisions, value=value)


def read_history(mp: RawObject | None) -> History:
    """The history recorded on a MachinePool (an empty one when there is none)."""
    value = mapping(dig(mp, "metadata", "annotations")).get(ANNOTATION)
    if value is None:
        return History()
    name = dig(mp, "metadata", "name")
    return decode(value, name if isinstance(name, str) else None)
