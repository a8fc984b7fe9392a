"""Kubernetes timestamps in and out (RFC 3339, UTC, `Z`)."""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime
from typing import Any

# Timestamps past this year cannot be real, and leave no room for the durations added to them.
_LAST_YEAR = 9000


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 string (or the datetime YAML makes of an unquoted one) in UTC, else None."""
    if type(value) is str:
        return _parse_text(value) if value else None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str | date) and value:
        try:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return _in_utc(parsed)


# Thousands of objects of one pool share a handful of timestamps (a rollout's conditions flip
# together): each is parsed once. datetimes are immutable, so sharing one is safe.
@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return _in_utc(parsed)


def _in_utc(parsed: datetime) -> datetime | None:
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except OverflowError:  # an offset that moves 0001-01-01 or 9999-12-31 out of range
        return None
    return parsed if parsed.year <= _LAST_YEAR else None


@functools.lru_cache(maxsize=4096)
def format_time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
