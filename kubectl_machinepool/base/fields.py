"""Reading fields of raw objects without trusting their shape.

Live Cluster API objects are schema-checked by the API server, but provider objects are often
"preserve unknown fields" and dumps are whatever a file holds; a wrong type must read as absent,
never crash the run, and never be turned into text (a list where a string belongs may be huge).
"""

from __future__ import annotations

import re
from typing import Any

# What Go's strconv.Atoi accepts, in ASCII only (str.isdigit also takes "²", which int() refuses).
_DECIMAL = re.compile(r"[+-]?[0-9]{1,19}")
# An object as the API server (or a dump) gave it, before any of it is trusted.
RawObject = dict[str, Any]
_INT64 = range(-(2**63), 2**63)
_STR = {str}


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def dig(value: Any, *path: str) -> Any:
    """value[path[0]][path[1]]…, or None as soon as a step is not a mapping."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def items(value: Any) -> list[dict[str, Any]]:
    """The mappings in a list (anything else in it is skipped)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def scalar(value: Any) -> str | None:
    """A string as it is, a number as YAML wrote it (1.30 is a float there), anything else None."""
    if type(value) is str:  # the common case first: called for every field of every object
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if value in _INT64 else None
    if isinstance(value, float):
        return str(value)
    return None


def strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(s for s in (scalar(v) for v in value if not isinstance(v, float)) if s is not None)


def text(value: Any) -> str | None:
    """A scalar as a non-empty string (YAML turns 1.30 into a float), else None."""
    if type(value) is str:
        return value or None
    if value is None:  # the other common case: a field left out
        return None
    return scalar(value) or None


def integer(value: Any) -> int | None:
    """An int64, or a string holding one in decimal; anything else (1.5, "²", 2**70) is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in _INT64 else None
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        number = int(value)
        return number if number in _INT64 else None
    return None


def count(value: Any) -> int | None:
    """A counter or size: an integer that is not negative."""
    number = integer(value)
    return number if number is not None and number >= 0 else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def string_map(value: Any) -> dict[str, str]:
    """Labels or annotations: entries whose key or value is not a scalar are left out."""
    if not isinstance(value, dict):
        return {}
    if set(map(type, value.values())) <= _STR and set(map(type, value)) <= _STR:
        return dict(value)  # what the API server sends, checked without a call per entry
    out = {}
    for key, entry in value.items():
        name, content = scalar(key), scalar(entry)
        if name is not None and content is not None:
            out[name] = content
    return out


def field_keys(path: str) -> tuple[str, ...]:
    """The keys to dig() for a field path that crosses no list."""
    if "[]" in path:
        raise ValueError(f"{path} crosses a list")
    return tuple(path.split("."))
