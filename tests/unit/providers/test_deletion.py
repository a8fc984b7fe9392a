from __future__ import annotations

import pytest

from kubectl_machinepool.providers.deletion import Verdict, pool_deletion_verdict
from kubectl_machinepool.providers.registry import INFRA_GROUP


@pytest.mark.parametrize(
    ("kind", "machine_kind", "verdict", "annotation"),
    [
        ("AzureMachinePool", "AzureMachinePoolMachine", Verdict.SUPPORTED, True),
        ("AWSMachinePool", "AWSMachine", Verdict.SUPPORTED, False),
        ("DevMachinePool", "DevMachine", Verdict.SUPPORTED, True),
        ("DockerMachinePool", "DockerMachine", Verdict.SUPPORTED, True),
        ("OCIMachinePool", "OCIMachinePoolMachine", Verdict.NOT_SUPPORTED, None),
        ("OCIManagedMachinePool", "OCIMachinePoolMachine", Verdict.NOT_SUPPORTED, None),
        ("OCIVirtualMachinePool", "OCIMachinePoolMachine", Verdict.NOT_SUPPORTED, None),
        # GCP's managed pool names itself as machine kind: core treats it as MPM, but no Machines exist.
        ("GCPManagedMachinePool", "GCPManagedMachinePool", Verdict.NOT_SUPPORTED, None),
        ("AWSMachinePool", None, Verdict.NOT_SUPPORTED, None),
        ("AWSManagedMachinePool", None, Verdict.NOT_SUPPORTED, None),
        ("AzureManagedMachinePool", None, Verdict.NOT_SUPPORTED, None),
        ("ScalewayManagedMachinePool", None, Verdict.NOT_SUPPORTED, None),
        ("GCPMachinePool", None, Verdict.NOT_SUPPORTED, None),
        ("KarpenterMachinePool", "KarpenterMachine", Verdict.UNVERIFIED, None),
        (None, None, Verdict.UNVERIFIED, None),
    ],
)
def test_verdict_per_provider_shape(kind, machine_kind, verdict, annotation) -> None:
    result = pool_deletion_verdict(INFRA_GROUP if kind else None, kind, machine_kind)
    assert result.verdict is verdict
    assert result.honours_delete_annotation is annotation
    assert result.reason
    if verdict is Verdict.NOT_SUPPORTED:
        assert result.instead


def test_same_kind_in_another_group_is_unverified() -> None:
    assert (
        pool_deletion_verdict(
            "infrastructure.example.com", "AzureMachinePool", "AzureMachinePoolMachine"
        ).verdict
        is Verdict.UNVERIFIED
    )
