"""Properties of the readers every model builder relies on, over values of any type."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import TIME_EDGES, any_values, hostile_text, scalar_values

from kubectl_machinepool.base.apiversion import (
    contract_versions,
    crd_plural,
    newest,
    version_priority,
)
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.fields import count, integer, scalar, string_map, strings, text
from kubectl_machinepool.base.humanize import age, human_duration
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.conditions import STATUSES, read_conditions
from kubectl_machinepool.model.poolname import pool_label_value
from kubectl_machinepool.model.selector import matches, selector_matches

VALUES = any_values(surrogates=True)
# A field of a known object: usually a scalar, sometimes retyped.
FIELD = st.one_of(
    st.sampled_from(["True", "False", "Unknown", "Ready"]), scalar_values(surrogates=True), VALUES
)
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


@settings(max_examples=examples(1500))
@given(VALUES)
def test_scalar_readers_never_turn_containers_into_text(value: object) -> None:
    for read in (scalar, text):
        got = read(value)
        assert got is None or isinstance(got, str)
        if isinstance(value, list | dict | tuple | set):
            assert got is None
        if isinstance(value, str) and got is not None:
            assert got == value
    number = integer(value)
    assert number is None or (type(number) is int and -(2**63) <= number < 2**63)
    size = count(value)
    assert size is None or size >= 0
    assert all(isinstance(s, str) for s in strings(value))


@settings(max_examples=examples(600))
@given(st.dictionaries(scalar_values(surrogates=True), VALUES, max_size=6))
def test_string_maps_keep_scalars_unmodified_and_drop_the_rest(value: dict) -> None:
    got = string_map(value)
    for key, entry in got.items():
        assert isinstance(key, str)
        assert isinstance(entry, str)
    for key, entry in value.items():
        if isinstance(key, str) and isinstance(entry, str):
            assert got[key] == entry
        if isinstance(entry, list | dict | bool) or entry is None:
            assert scalar(key) not in got or got[scalar(key)] != entry


@settings(max_examples=examples(1000))
@given(st.one_of(VALUES, st.sampled_from(TIME_EDGES), st.datetimes(timezones=st.just(UTC))))
def test_timestamps_read_as_utc_or_not_at_all(value: object) -> None:
    parsed = parse_time(value)
    if parsed is not None:
        assert parsed.tzinfo is not None
        assert parsed.utcoffset() == timedelta(0)
        assert parse_time(format_time(parsed)) == parsed
        now = datetime(2026, 11, 29, 15, tzinfo=UTC)
        assert age(parsed, now)
        # Rules add graces and minReadySeconds to timestamps: there is room for that.
        assert parsed + timedelta(seconds=2**31) > parsed


@settings(max_examples=examples(1000))
@given(st.timedeltas())
def test_durations_always_read(delta: timedelta) -> None:
    assert human_duration(delta)


CONDITION = st.fixed_dictionaries(
    {},
    optional={
        key: FIELD
        for key in ("type", "status", "reason", "message", "lastTransitionTime", "severity")
    },
)
API_VERSIONS = ["cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2", "v1", ""]
PLACES = [("conditions",), ("deprecated", "v1beta1", "conditions"), ("v1beta2", "conditions")]


@settings(max_examples=examples(800))
@given(st.lists(CONDITION, max_size=4), st.sampled_from(API_VERSIONS), st.sampled_from(PLACES))
def test_condition_statuses_are_the_three_kubernetes_defines(
    raw: list, api_version: str, where: tuple[str, ...]
) -> None:
    status: dict = {"conditions": raw}
    if where != ("conditions",):
        holder = status
        for key in where[:-1]:
            holder = holder.setdefault(key, {})
        holder[where[-1]] = raw
    conditions = read_conditions({"apiVersion": api_version, "status": status})
    for cond in conditions.all:
        assert cond.status in STATUSES
        assert isinstance(cond.type, str)
        assert isinstance(cond.reason, str)
        assert isinstance(cond.message, str)


@settings(max_examples=examples(1000))
@given(
    st.one_of(hostile_text(surrogates=True), st.text(alphabet="a=!,() in notin b", max_size=30)),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=4),
    VALUES,
)
def test_selectors_match_or_are_refused(selector: str, labels: dict, structured: object) -> None:
    try:
        assert matches(selector, labels) in (True, False)
    except UsageError as err:
        assert "\n" not in err.message  # noqa: PT017 - one line, whatever the selector
    if isinstance(structured, dict):
        assert selector_matches(structured, labels) in (True, False)
        assert selector_matches({"matchExpressions": [structured]}, labels) in (True, False)


@settings(max_examples=examples(1000))
@given(st.one_of(st.text(), hostile_text(surrogates=True)))
def test_pool_label_values_are_valid_label_values(name: str) -> None:
    value = pool_label_value(name)
    assert len(value) <= 63
    assert LABEL_VALUE.fullmatch(value)
    assert pool_label_value(value) == value or value.startswith("hash_")


@settings(max_examples=examples(500))
@given(st.lists(st.one_of(st.text(max_size=12), hostile_text(surrogates=True)), max_size=4))
def test_api_versions_of_any_spelling_sort_and_name(versions: list[str]) -> None:
    best = newest(versions)
    assert best is None or best in versions
    for version in versions:
        assert len(version_priority(version)) == 3
        assert crd_plural(version) or not version
    assert all(v for v in contract_versions({"cluster.x-k8s.io/v1beta1": "_".join(versions)}))
