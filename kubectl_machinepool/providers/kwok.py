"""kwok's simulated pools. The stored capi-samples/cluster-api-provider-kwok (9e5f8f0) has no
KwokMachinePool: its field paths are left unknown.
"""

from __future__ import annotations

from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.records import INFRA_GROUP, REPLACED, InstanceDeletion, Provider

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        INFRA_GROUP,
        "KwokMachinePool",
        "simulated nodes",
        "KwokMachine",
        InstanceDeletion(
            True,
            REPLACED + " (simulated)",
            False,
            "the annotation is ignored",
            source="capi-samples/cluster-api-provider-kwok, not audited in depth",
        ),
        operations=Operations(
            rolls="not verified: the stored provider has no KwokMachinePool",
            pause_caveat="not verified: the stored provider has no KwokMachinePool",
            sets_capacity=None,
        ),
    ),
)
