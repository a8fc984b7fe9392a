"""Reading fields of raw objects without trusting their shape.

Live Cluster API objects are schema-checked by the API server, but provider objects are often
"preserve unknown fields" and dumps are whatever a file holds; a wrong type must read as absent,
never crash the run.
"""

from __future__ import annotations

from typing import Any


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


def strings(value: Any) -> tuple[str, ...]:
    return (
        tuple(str(v) for v in value if isinstance(v, str | int)) if isinstance(value, list) else ()
    )


def text(value: Any) -> str | None:
    """A scalar as a non-empty string (YAML turns 1.30 into a float), else None."""
    if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
        return str(value)
    return None


def integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def string_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
