"""model/zones.py's projection of a new size onto a pool's zones (scale's plan line): new
instances go to the emptiest zone, the fullest loses first, and a choice among tied zones is said
to be the group's."""

from __future__ import annotations

import pytest

from kubectl_machinepool.model.zones import PoolZones, ZoneCount, scale_balance
from kubectl_machinepool.providers.registry import infra_pool

AWS = infra_pool("infrastructure.cluster.x-k8s.io", "AWSMachinePool")


def zones(**nodes: int) -> PoolZones:
    counts = tuple(ZoneCount(zone, n, n, True) for zone, n in nodes.items())
    return PoolZones(tuple(nodes), "AWSMachinePool spec.availabilityZones", counts, 0, 0)


@pytest.mark.parametrize(
    ("before", "to", "shown"),
    [
        ({"a": 3, "b": 1, "c": 2}, 7, "a=3 -> 3, b=1 -> 2, c=2 -> 2"),
        ({"a": 3, "b": 1, "c": 2}, 5, "a=3 -> 2, b=1 -> 1, c=2 -> 2"),
        ({"a": 3, "b": 1, "c": 2}, 8, "a=3 -> 3, b=1 -> 3, c=2 -> 2 (or another of the zones tied, the group's choice)"),
        ({"a": 3, "b": 1, "c": 2}, 6, "a=3 -> 3, b=1 -> 1, c=2 -> 2"),
        ({"a": 2, "b": 2}, 3, "a=2 -> 2, b=2 -> 1 (or another of the zones tied, the group's choice)"),
        ({"a": 0, "b": 0}, 2, "a=0 -> 1, b=0 -> 1 (or another of the zones tied, the group's choice)"),
        ({"a": 1, "b": 1}, 0, "a=1 -> 0, b=1 -> 0 (or another of the zones tied, the group's choice)"),
    ],
)  # fmt: skip
def test_a_balanced_group_at_the_new_size(before: dict[str, int], to: int, shown: str) -> None:
    line = scale_balance(zones(**before), to, AWS, {"spec": {}})
    assert line is not None
    assert line.startswith(f"zones (Nodes): {shown}, if the group keeps them balanced; ")
    assert "AZRebalance" in line


def test_fewer_than_two_zones_or_no_nodes_say_nothing() -> None:
    assert scale_balance(zones(a=3), 5, AWS, None) is None
    assert scale_balance(None, 5, AWS, None) is None
