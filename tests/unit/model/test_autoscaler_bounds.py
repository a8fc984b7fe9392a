"""cluster-autoscaler's node-group annotations read as its clusterapi provider reads them
(strconv.Atoi, an absent one 0, negative or contradictory bounds an error), over the values an
operator or a hostile object can write."""

from __future__ import annotations

import pytest
from support.autoscalerbounds import MAX_SIZE, MIN_SIZE, unusable

from kubectl_machinepool.model.autoscaler import AutoscalerBounds, autoscaler_bounds


def bounds(low: str | None, high: str | None) -> AutoscalerBounds:
    given = {MIN_SIZE: low, MAX_SIZE: high}
    return autoscaler_bounds({k: v for k, v in given.items() if v is not None})


def refused(low: str | None, high: str | None, named: str) -> None:
    found = bounds(low, high)
    assert found.annotated
    assert not found.node_group
    assert any(named in problem for problem in found.problems), found.problems
    assert all(problem.isprintable() for problem in found.problems)


@unusable(model=True)
def test_bounds_the_autoscaler_refuses_are_named_with_their_value(
    low: str | None, high: str | None, named: str
) -> None:
    refused(low, high, named)


@pytest.mark.parametrize(
    ("low", "high", "named"),
    [
        (" 3", "5", f'{MIN_SIZE} is " 3", not a whole number'),
        ("3\n", "5", f'{MIN_SIZE} is "3\\n", not a whole number'),
        ("1_0", "50", f'{MIN_SIZE} is "1_0", not a whole number'),
        ("\u0663", "5", f'{MIN_SIZE} is "\u0663", not a whole number'),
        ("1", "-3", f'{MAX_SIZE} is "-3": a bound cannot be negative'),
    ],
    ids=["leading-space", "trailing-newline", "underscore", "arabic-indic-digit", "negative-max"],
)
def test_what_python_reads_as_a_number_and_atoi_does_not(
    low: str | None, high: str | None, named: str
) -> None:
    refused(low, high, named)


@pytest.mark.parametrize(
    ("low", "high", "read", "node_group"),
    [
        ("1", "10", (1, 10), True),
        ("+3", "007", (3, 7), True),
        ("0" * 40 + "1", "2", (1, 2), True),
        (None, "5", (None, 5), True),  # max-size alone: min 0
        ("4", "4", (4, 4), True),
        ("0", "0", (0, 0), False),  # no room to scale: no node group, and no error
        ("0", None, (0, None), False),
        (None, None, (None, None), False),
        ("-0", "9223372036854775807", (0, 2**63 - 1), True),
    ],
)
def test_bounds_the_autoscaler_reads(
    low: str | None, high: str | None, read: tuple[int | None, int | None], node_group: bool
) -> None:
    found = bounds(low, high)
    assert found.problems == ()
    assert (found.low, found.high) == read
    assert found.node_group is node_group


def test_one_past_int64_is_too_large() -> None:
    [problem] = bounds("1", "9223372036854775808").problems
    assert "too large for cluster-autoscaler (int64)" in problem


def test_a_long_value_is_shown_bounded() -> None:
    [problem] = bounds("x" * 100_000, "5").problems
    assert len(problem) < 200
    assert "(100000 characters)" in problem


def test_both_unreadable_are_both_named() -> None:
    found = bounds("abc", "1.0")
    assert len(found.problems) == 2
    assert (found.low, found.high) == (None, None)
