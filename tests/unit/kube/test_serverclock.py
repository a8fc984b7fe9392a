"""The API server's time from the Date header of its answers: IMF-fixdate only (what Go's
net/http writes), read whatever the locale, and the newest of answers read side by side."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubectl_machinepool.kube.serverclock import ServerClock, http_date


def test_an_imf_fixdate_is_read_in_utc() -> None:
    assert http_date("Sun, 29 Nov 2026 15:00:07 GMT") == datetime(
        2026, 11, 29, 15, 0, 7, tzinfo=UTC
    )


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "Sunday, 29-Nov-26 15:00:07 GMT",  # RFC 850, obsolete
        "Sun Nov 29 15:00:07 2026",  # asctime, obsolete
        "Sun, 29 Nov 2026 15:00:07 UTC",
        "Sun, 29 Nov 2026 15:00:07 +0000",
        "Sun, 29 Now 2026 15:00:07 GMT",
        "Sun, 31 Feb 2026 15:00:07 GMT",
        "Sun, 29 Nov 2026 25:00:07 GMT",
        "Sun, 29 Nov 2026 15:00:07 GMT\r\nX-Evil: 1",
        "Sun, 29 Nov ٢٠٢٦ 15:00:07 GMT",
    ],
)
def test_anything_else_is_no_time(value: str | None) -> None:
    assert http_date(value) is None


def test_the_newest_time_heard_stays() -> None:
    clock = ServerClock()
    assert clock.time is None
    clock.heard("Sun, 29 Nov 2026 15:00:07 GMT")
    clock.heard("Sun, 29 Nov 2026 15:00:05 GMT")  # an answer read side by side, sent earlier
    clock.heard(None)
    clock.heard("garbage")
    assert clock.time == datetime(2026, 11, 29, 15, 0, 7, tzinfo=UTC)
    clock.heard("Sun, 29 Nov 2026 15:01:00 GMT")
    assert clock.time == datetime(2026, 11, 29, 15, 1, tzinfo=UTC)
