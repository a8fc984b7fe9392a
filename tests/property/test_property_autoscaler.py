"""cluster-autoscaler's node-group bounds over any annotation values: read exactly as Go's
strconv.Atoi reads them (an independent oracle here), every refusal named safely for a terminal and briefly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples
from strategies import hostile_text

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.model.autoscaler import MAX_SIZE, MIN_SIZE, autoscaler_bounds

INT64 = range(-(2**63), 2**63)
VALUE = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70).map(str),
    st.from_regex(r"[+-]?[0-9]{1,25}", fullmatch=True),
    st.text(max_size=12),
    hostile_text(surrogates=True),
    st.integers(1, 30_000).map(lambda n: "7" * n),
)


def atoi(value: str) -> int | None:
    """Go's strconv.Atoi on a 64-bit platform: a sign, then ASCII digits, within int64."""
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    stripped = digits.lstrip("0") or "0"
    if len(stripped) > 19:
        return None
    number = int(stripped) * (-1 if value.startswith("-") else 1)
    return number if number in INT64 else None


@settings(max_examples=examples(1500))
@given(VALUE, VALUE)
def test_bounds_are_what_the_autoscaler_reads(low: str | None, high: str | None) -> None:
    given = {MIN_SIZE: low, MAX_SIZE: high}
    found = autoscaler_bounds({k: v for k, v in given.items() if v is not None})
    read = [None if v is None else atoi(v) for v in (low, high)]
    unreadable = any(v is not None and n is None for v, n in zip((low, high), read, strict=True))
    negative = any(n is not None and n < 0 for n in read)
    low_n, high_n = (n or 0 for n in read)
    refused = unreadable or negative or high_n < low_n
    assert bool(found.problems) is refused
    assert found.node_group is (not refused and high_n > 0)
    if not refused:
        assert (found.low, found.high) == tuple(read)
    for problem in found.problems:
        assert escape(problem) == problem  # nothing left for a terminal to act on
        assert len(problem) < 300
