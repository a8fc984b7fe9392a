"""A dump's newest timestamp over objects of any shape: the newest of the times placed where
objects date what happened (the head of each list only), whatever else the objects hold, and
never an exception."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import EDGES, TIME_EDGES, any_values

from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.offline.dump import _TIMES_PER_LIST, newest_time

BASE = datetime(2026, 11, 1, tzinfo=UTC)
# Where a time is placed: (path to a list or None, the key), as the reader looks for it.
PLACES = [
    (None, ("metadata", "creationTimestamp")),
    (None, ("metadata", "deletionTimestamp")),
    (("metadata", "managedFields"), ("time",)),
    (("status", "conditions"), ("lastTransitionTime",)),
    (("status", "conditions"), ("lastHeartbeatTime",)),
    (("status", "v1beta2", "conditions"), ("lastTransitionTime",)),
    (("status", "deprecated", "v1beta1", "conditions"), ("lastTransitionTime",)),
    (None, ("status", "lastUpdated")),
    (None, ("lastTimestamp",)),
    (None, ("series", "lastObservedTime")),
]


def _at(root: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path:
        child = root.get(key)
        if not isinstance(child, dict):
            child = root[key] = {}
        root = child
    return root


@st.composite
def dated_objects(draw: st.DrawFn) -> tuple[list[dict[str, Any]], datetime | None]:
    """Objects with times placed where they are read (a list's entries beyond its head too),
    and values of any shape everywhere else: beside them, in lists, under spec."""
    objects: list[dict[str, Any]] = []
    placed: list[datetime] = []
    for _ in range(draw(st.integers(1, 4))):
        obj: dict[str, Any] = {"kind": "Event", "metadata": {"name": "x"}}
        obj["spec"] = {"time": draw(st.sampled_from(TIME_EDGES)), "x": draw(any_values(False))}
        for listed, key in draw(st.lists(st.sampled_from(PLACES), max_size=6, unique=True)):
            when = BASE + timedelta(seconds=draw(st.integers(0, 10**7)))
            value = draw(st.sampled_from([format_time(when), when]))
            if listed is None:
                _at(obj, key[:-1])[key[-1]] = value
                placed.append(when)
                continue
            holder = _at(obj, listed[:-1])
            entries = holder.setdefault(listed[-1], [])
            entries += draw(st.lists(st.sampled_from(EDGES), max_size=2))
            if draw(st.booleans()):  # a list longer than any real object's
                entries += [{"message": "filler"}] * _TIMES_PER_LIST
            entries.append({key[0]: value, "message": draw(st.sampled_from(EDGES))})
            if len(entries) <= _TIMES_PER_LIST:
                placed.append(when)
        objects.append(obj)
    return objects, max(placed, default=None)


@settings(max_examples=examples(200))
@given(dated_objects())
def test_the_newest_placed_time_is_found(case: tuple[list[dict[str, Any]], datetime | None]):
    objects, newest = case
    assert newest_time(objects) == newest


@settings(max_examples=examples(100))
@given(st.lists(any_values(True), max_size=4))
def test_any_values_are_read_without_an_exception(values: list[Any]) -> None:
    objects = [v for v in values if isinstance(v, dict)]
    found = newest_time(objects)
    assert found is None or found.utcoffset() == timedelta(0)
