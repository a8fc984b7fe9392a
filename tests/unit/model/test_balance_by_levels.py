"""scale's zone projection taken a level at a time gives what one instance at a time gives, and a
size of 2**31-1 (the largest spec.replicas) is a few steps, not two billion."""

from __future__ import annotations

import itertools

from kubectl_machinepool.model.zones import _balanced


def one_at_a_time(nodes: list[int], to: int) -> tuple[list[int], bool]:
    """The rule as the plan line states it: each new instance to the first emptiest zone, each
    going one from the last fullest."""
    after, tied = list(nodes), False
    while sum(after) != to:
        growing = sum(after) < to
        pick = min(after) if growing else max(after)
        tied = tied or after.count(pick) > 1
        if growing:
            after[after.index(pick)] += 1
        else:
            after[len(after) - 1 - after[::-1].index(pick)] -= 1
    return after, tied


def test_levels_are_instances_one_at_a_time() -> None:
    for size in (2, 3, 4):
        for nodes in itertools.product(range(5), repeat=size):
            for to in range(0, 4 * size + 6):
                assert _balanced(list(nodes), to) == one_at_a_time(list(nodes), to), (nodes, to)


def test_the_largest_size_is_a_few_steps() -> None:
    assert _balanced([1, 2, 0], 2**31 - 1) == ([715827883, 715827882, 715827882], True)
    assert _balanced([2**31 - 1, 0], 1) == ([1, 0], False)
