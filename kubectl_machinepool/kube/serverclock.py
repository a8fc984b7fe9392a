"""The API server's clock, read from the Date header of its answers.

A time compared with creationTimestamps (when a restart began) must be on the clock that stamps
them, not the client's, which may run minutes ahead or behind. A read carries no other reading of
that clock: managedFields times say when writes were made, not when the object was read, and a
write cannot carry the time the server stamps on it. kube-apiserver's HTTP server (Go's net/http)
sets Date on every answer, from the same clock and in whole seconds, as creationTimestamp is
counted; a proxy passes it on (RFC 9110 lets one add a Date only to an answer that has none).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_IMF_FIXDATE = re.compile(
    r"[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT", re.A
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def http_date(value: str | None) -> datetime | None:
    """An IMF-fixdate (RFC 9110 5.6.7, the only form net/http writes: "Sun, 06 Nov 1994
    08:49:37 GMT"), else None. Parsed by hand: strptime's %a and %b follow the locale."""
    found = _IMF_FIXDATE.fullmatch(value or "")
    if found is None or found[2] not in _MONTHS:
        return None
    day, month, year, hour, minute, second = found.groups()
    try:
        return datetime(
            int(year),
            _MONTHS.index(month) + 1,
            int(day),
            int(hour),
            int(minute),
            int(second),
            tzinfo=UTC,
        )
    except ValueError:  # 31 Feb
        return None


class ServerClock:
    """The newest time one server stamped on its answers; None until one carried a Date.
    Answers read side by side may set it in any order: the newest stays."""

    def __init__(self) -> None:
        self.time: datetime | None = None

    def heard(self, date: str | None) -> None:
        stamped = http_date(date)
        if stamped is not None and (self.time is None or stamped > self.time):
            self.time = stamped
