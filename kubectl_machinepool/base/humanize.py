"""Durations with kubectl's rounding, so AGE columns read the same as in `kubectl get`."""

from __future__ import annotations

from datetime import datetime, timedelta

_MINUTE = 60
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR
_YEAR = 365 * _DAY


def _pair(big: int, big_unit: str, small: int, small_unit: str) -> str:
    return f"{big}{big_unit}{small}{small_unit}" if small else f"{big}{big_unit}"


def human_duration(delta: timedelta) -> str:  # noqa: PLR0911 - one return per precision band
    """kubectl's HumanDuration: more precision for short spans, less for long ones."""
    seconds = int(delta.total_seconds())
    if seconds < -1:
        return "<invalid>"  # clock skew beyond kubectl's 1 s tolerance
    if seconds < 0:
        return "0s"
    if seconds < 2 * _MINUTE:
        return f"{seconds}s"
    minutes = seconds // _MINUTE
    if minutes < 10:
        return _pair(minutes, "m", seconds % _MINUTE, "s")
    if minutes < 3 * 60:
        return f"{minutes}m"
    hours = seconds // _HOUR
    if hours < 8:
        return _pair(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = seconds // _DAY
    if hours < 8 * 24:
        return _pair(days, "d", hours % 24, "h")
    if hours < 2 * 365 * 24:
        return f"{days}d"
    years = seconds // _YEAR
    if hours < 8 * 365 * 24:
        return _pair(years, "y", days % 365, "d")
    return f"{years}y"


def age(since: datetime | None, now: datetime) -> str:
    return "<unknown>" if since is None else human_duration(now - since)


def byte_size(size: int) -> str:
    """1536 -> 1.5 KiB, as du -h and ls -lh round."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
