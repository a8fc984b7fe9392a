"""The restart record as read from a MachinePool: an RFC 3339 time is a start, anything else
(a date alone, no zone, a time with something after it, a control character) is a value that
names no time, shown quoted, escaped and bounded, never read as the part that parses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kubectl_machinepool.model.restartrecord import (
    STARTED,
    RestartRecord,
    read_record,
    recorded_start,
)


def pool(value: Any) -> dict[str, Any]:
    return {"metadata": {"name": "workers", "annotations": {STARTED: value}}}


@pytest.mark.parametrize(
    ("value", "started"),
    [
        ("2026-11-29T15:00:00Z", datetime(2026, 11, 29, 15, tzinfo=UTC)),
        ("2026-11-29T16:30:00+01:30", datetime(2026, 11, 29, 15, tzinfo=UTC)),
        ("2026-11-29T15:00:00.25Z", datetime(2026, 11, 29, 15, 0, 0, 250000, tzinfo=UTC)),
        # YAML reads an unquoted time in a dump as a datetime.
        (datetime(2026, 11, 29, 15, tzinfo=UTC), datetime(2026, 11, 29, 15, tzinfo=UTC)),
    ],
)
def test_an_rfc3339_time_is_the_start(value: Any, started: datetime) -> None:
    found = read_record(pool(value))
    assert (found.started, found.unparseable) == (started, False)
    assert recorded_start(pool(value)) == started


@pytest.mark.parametrize(
    "value",
    [
        "yesterday",
        "",
        "2026-11-29",
        "2026-11-29T15:00:00",
        "2026-11-29 15:00:00Z",
        "20261129T150000Z",
        "2026-11-29T15:00:00Z;$(id)",
        " 2026-11-29T15:00:00Z",
        "2026-11-29T15:00:00Z\n",
        "2026-02-30T15:00:00Z",
        "9999-11-29T15:00:00Z",  # past any real time
        "\uff12\uff10\uff12\uff16-11-29T15:00:00Z",  # fullwidth digits
        1764428400,
    ],
)
def test_anything_else_names_no_time(value: Any) -> None:
    found = read_record(pool(value))
    assert (found.started, found.unparseable) == (None, True)
    assert recorded_start(pool(value)) is None


def test_no_annotation_is_no_record() -> None:
    for mp in (None, {}, {"metadata": {"annotations": {"other": "x"}}}):
        found = read_record(mp)
        assert (found.value, found.started, found.unparseable) == (None, None, False)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("soon", '"soon"'),
        ("x\x1b]0;owned\x07", '"x\\x1b]0;owned\\x07"'),
        ("a\u202eb", '"a\\u202eb"'),
        ("7" * 129, '"' + "7" * 128 + '…"'),
    ],
)
def test_a_value_is_shown_quoted_escaped_and_bounded(value: str, shown: str) -> None:
    assert RestartRecord(value, None).shown == shown
