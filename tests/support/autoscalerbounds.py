"""cluster-autoscaler node-group bounds its clusterapi provider cannot use (issue 49, item 6),
each with the words that must name it: one table for the model's, the scale plan's and the live
tests."""

from __future__ import annotations

import pytest

MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
THIRTY_DIGITS = "9" * 30

# (id, min-size, max-size, words naming why); None: the annotation is absent.
_UNUSABLE: list[tuple[str, str | None, str | None, str]] = [
    ("letters", "abc", "10", f'{MIN_SIZE} is "abc", not a whole number'),
    ("decimal-point", "1", "1.0", f'{MAX_SIZE} is "1.0", not a whole number'),
    ("exponent", "1e0", "10", f'{MIN_SIZE} is "1e0", not a whole number'),
    ("thirty-digits", "1", THIRTY_DIGITS,
     f'{MAX_SIZE} is "{THIRTY_DIGITS}", too large for cluster-autoscaler (int64)'),
    ("empty-min", "", "10", f'{MIN_SIZE} is "", not a whole number'),
    ("empty-max", "1", "", f'{MAX_SIZE} is "", not a whole number'),
    ("escape", "\x1b", "10", f'{MIN_SIZE} is "\\u001b", not a whole number'),
    ("escape-sequence", "1", "10\x1b[2J", f'{MAX_SIZE} is "10\\u001b[2J", not a whole number'),
    ("negative", "-1", "10", f'{MIN_SIZE} is "-1": a bound cannot be negative'),
    ("min-above-max", "5", "2",
     "the minimum 5 is above the maximum 2: the bounds contradict each other"),
]  # fmt: skip
# What only a model or plan test sets up: the live pool always has both annotations.
_MODEL_ONLY: list[tuple[str, str | None, str | None, str]] = [
    ("min-alone", "1", None, "the minimum 1 is above the maximum 0, as max-size is unset"),
]


def unusable(*, model: bool = False) -> pytest.MarkDecorator:
    """The cases as pytest parameters (low, high, named)."""
    cases = _UNUSABLE + (_MODEL_ONLY if model else [])
    return pytest.mark.parametrize(
        ("low", "high", "named"),
        [pytest.param(low, high, named, id=case) for case, low, high, named in cases],
    )
