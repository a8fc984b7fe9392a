"""A manifest against the live object: the fields that change, in kubectl diff's order, and the
object a client-side apply would leave.

kubectl diff writes each object as YAML (keys sorted, list items in order) into a file named
`<group>.<version>.<Kind>.<namespace>.<name>` and runs `diff -u -N -r` over the two directories
(k8s.io/kubectl pkg/cmd/diff/diff.go InfoObject.Name): objects come in the order of those names,
fields in key order, depth first. What the server alone writes (status, managedFields,
resourceVersion, generation, uid, creationTimestamp) and the last-applied copy are not compared.

Pure: raw objects in, records out; both sides are hostile input, walked without recursion and
within MAX_CHANGES.
"""

from __future__ import annotations

import copy
from typing import Any

from kubectl_machinepool.base.apiversion import group_of
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.ownership import LAST_APPLIED, last_applied

# Past this many changed fields an object's diff is cut (a providerIDList of thousands).
MAX_CHANGES = 200
Key = str | int
FieldPath = tuple[Key, ...]
# What only the server writes: never a change a manifest makes.
_SERVER_WRITTEN = {
    ("status",),
    ("metadata", "managedFields"),
    ("metadata", "resourceVersion"),
    ("metadata", "generation"),
    ("metadata", "uid"),
    ("metadata", "creationTimestamp"),
    ("metadata", "selfLink"),
    ("metadata", "annotations", LAST_APPLIED),
}
_ABSENT = object()


@record
class Change:
    """A field whose value changes; None on a side where it is absent."""

    path: FieldPath
    before: Any
    after: Any


@record
class ObjectDiff:
    changes: tuple[Change, ...]
    # Changed fields past MAX_CHANGES, not listed.
    more: int = 0


def dotted(path: FieldPath) -> str:
    """spec.template.spec.version, spec.subnets[0], metadata.annotations[example.com/a.b]."""
    out = ""
    for key in path:
        if isinstance(key, int) or "." in key or "[" in key:
            out += f"[{key}]"
        else:
            out += f".{key}" if out else key
    return out


def diff_name(obj: RawObject) -> str:
    """The name kubectl diff gives the object's file: what orders the objects."""
    api_version = text(obj.get("apiVersion")) or ""
    group, version = group_of(api_version), api_version.rpartition("/")[2]
    meta = mapping(obj.get("metadata"))
    namespace, name = text(meta.get("namespace")) or "", text(meta.get("name")) or ""
    prefix = f"{group}." if group else ""
    return f"{prefix}{version}.{text(obj.get('kind')) or ''}.{namespace}.{name}"


def _compared(path: FieldPath) -> bool:
    return path not in _SERVER_WRITTEN


def _leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or not value


def object_diff(before: RawObject | None, after: RawObject) -> ObjectDiff:
    """Every field whose value differs, depth first with keys sorted (list items by index); an
    absent side is None. A mapping or list present on one side only is walked to its leaves."""
    found: list[Change] = []
    more = 0
    stack: list[tuple[FieldPath, Any, Any]] = [((), before or {}, after)]
    while stack:
        at, old, new = stack.pop()
        if not _compared(at):
            continue
        if (isinstance(old, dict) and isinstance(new, dict)) or _pair_of(old, new, dict):
            olds, news = mapping(_present(old)), mapping(_present(new))
            keys = sorted(set(olds) | set(news), reverse=True)
            stack.extend(
                ((*at, k), olds.get(k, _ABSENT), news.get(k, _ABSENT))
                for k in keys
                if isinstance(k, str)
            )
            continue
        if (isinstance(old, list) and isinstance(new, list)) or _pair_of(old, new, list):
            olds_list, news_list = _list(old), _list(new)
            size = max(len(olds_list), len(news_list))
            stack.extend(
                (
                    (*at, i),
                    olds_list[i] if i < len(olds_list) else _ABSENT,
                    news_list[i] if i < len(news_list) else _ABSENT,
                )
                for i in reversed(range(size))
            )
            continue
        if (old == new and type(old) is type(new)) or (_empty(old) and _empty(new)):
            continue
        if len(found) < MAX_CHANGES:
            found.append(Change(at, _value(old), _value(new)))
        else:
            more += 1
    return ObjectDiff(tuple(found), more)


def _empty(value: Any) -> bool:
    """Absent, null, {} and []: the same to the API server's objects, never a change."""
    return value is _ABSENT or value is None or (isinstance(value, (dict, list)) and not value)


def _present(value: Any) -> Any:
    return None if value is _ABSENT else value


def _pair_of(old: Any, new: Any, kind: type) -> bool:
    """A container on one side, nothing on the other: its leaves are added or removed."""
    non_empty = (isinstance(old, kind) and old and new is _ABSENT) or (
        isinstance(new, kind) and new and old is _ABSENT
    )
    return bool(non_empty)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _value(value: Any) -> Any:
    return None if value is _ABSENT else value


def applied(live: RawObject, manifest: RawObject) -> RawObject:
    """What `kubectl apply` (client-side) leaves: the manifest merged over the live object as a
    JSON merge patch (mappings merged, lists and scalars replaced, null removes), and each field
    the last-applied copy holds that the manifest no longer does removed."""
    result = copy.deepcopy(live)
    _merge(result, manifest)
    last = last_applied(live)
    if last is not None:
        for removed in _removed(last, manifest):
            _delete(result, removed)
    return result


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    stack = [(target, patch)]
    while stack:
        into, source = stack.pop()
        for key, value in source.items():
            if value is None:
                into.pop(key, None)
            elif isinstance(value, dict) and isinstance(into.get(key), dict):
                stack.append((into[key], value))
            else:
                into[key] = copy.deepcopy(value)


def _removed(last: dict[str, Any], manifest: RawObject) -> list[tuple[str, ...]]:
    """The mapping keys the last apply set that the manifest no longer names."""
    gone: list[tuple[str, ...]] = []
    stack: list[tuple[tuple[str, ...], dict[str, Any], Any]] = [((), last, manifest)]
    while stack:
        at, old, new = stack.pop()
        for key, value in old.items():
            if not isinstance(new, dict) or key not in new:
                gone.append((*at, key))
            elif isinstance(value, dict) and isinstance(new[key], dict):
                stack.append(((*at, key), value, new[key]))
    return gone


def _delete(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    parent = dig(obj, *path[:-1]) if len(path) > 1 else obj
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def leaf_paths(obj: RawObject) -> list[FieldPath]:
    """Every field a manifest sets, leaf by leaf, in kubectl diff's order (what an offline
    comparison says it could not compare)."""
    found: list[FieldPath] = []
    stack: list[tuple[FieldPath, Any]] = [((), obj)]
    while stack:
        at, value = stack.pop()
        if not _compared(at):
            continue
        if isinstance(value, dict) and value:
            stack.extend(((*at, k), value[k]) for k in sorted(value, reverse=True))
        elif isinstance(value, list) and value:
            stack.extend(((*at, i), value[i]) for i in reversed(range(len(value))))
        elif at:
            found.append(at)
    return found


def value_at(obj: Any, path: FieldPath) -> Any:
    for key in path:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and key < len(obj) else None
        else:
            obj = obj.get(key) if isinstance(obj, dict) else None
    return obj
