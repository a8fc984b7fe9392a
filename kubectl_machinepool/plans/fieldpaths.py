"""Fields named by dotted paths (`spec.template.image.id`, `spec.resources[].spec.version`): read
from an object, and written as a JSON merge patch, which cannot address a list item: a path
through a list writes the whole list, each item that holds the field changed."""

from __future__ import annotations

import copy
from typing import Any

from kubectl_machinepool.base.fields import RawObject


def _get(obj: Any, dotted: str) -> Any:
    for key in dotted.split(".") if dotted else ():
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def values_at(obj: RawObject | None, path: str) -> list[Any]:
    """The field's values (one per list item through `[]`), absent ones left out."""
    head, through, tail = path.partition("[].")
    if not through:
        found = _get(obj, head)
        return [] if found is None else [found]
    items = _get(obj, head)
    if not isinstance(items, list):
        return []
    return [v for item in items if (v := _get(item, tail)) is not None]


def _set(body: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        nested = body.get(key)
        if not isinstance(nested, dict):
            nested = body[key] = {}
        body = nested
    body[last] = value


def merge_patch(body: dict[str, Any], obj: RawObject, path: str, value: Any) -> None:
    """Add to body a merge patch setting the field to value (None removes it). Through `[]`, the
    list as body already has it (else as obj does), each item holding the field changed."""
    head, through, tail = path.partition("[].")
    if not through:
        _set(body, head, value)
        return
    items = _get(body, head)
    if not isinstance(items, list):
        items = copy.deepcopy(_get(obj, head))
    if not isinstance(items, list):
        return
    for item in items:
        if isinstance(item, dict) and _get(item, tail) is not None:
            if value is None:
                *parents, last = tail.split(".")
                holder = _get(item, ".".join(parents))
                if isinstance(holder, dict):
                    holder.pop(last, None)
            else:
                _set(item, tail, value)
    _set(body, head, items)
