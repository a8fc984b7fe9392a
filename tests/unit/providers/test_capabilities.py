"""Which operations each infra pool kind honours, as the registry's records decide (issue 30)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from kubectl_machinepool.providers.capabilities import (
    AUTOSCALER,
    DELETE,
    DESCRIBE,
    FROM_ZERO,
    OPERATIONS,
    RESTART,
    UPGRADE,
    Answer,
    capabilities,
    unknown,
)
from kubectl_machinepool.providers.registry import INFRA_GROUP, PROVIDERS, infra_pool

# A reference: a source file, a provider doc (docs) or an upstream issue or pull request.
_CITED = re.compile(r"\([^)]*(\.go|docs|README|#[0-9]+|cluster-api-provider-)[^)]*\)")


def _answers(kind: str) -> dict[str, Answer]:
    provider = infra_pool(INFRA_GROUP, kind)
    assert provider is not None
    return {c.operation: c.answer for c in capabilities(provider)}


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.kind for p in PROVIDERS])
def test_every_record_says_what_rolls_it_and_what_a_pause_leaves_running(provider) -> None:
    operations = provider.operations
    for said in (operations.rolls, operations.pause_caveat):
        assert said.strip()
        assert _CITED.search(said) or said.startswith("not verified"), said


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.kind for p in PROVIDERS])
def test_every_no_says_why_with_an_upstream_reference(provider) -> None:
    found = capabilities(provider)
    assert tuple(c.operation for c in found) == OPERATIONS
    for capability in found:
        if capability.answer is Answer.NO:
            assert _CITED.search(capability.reason), (capability.operation, capability.reason)


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.kind for p in PROVIDERS])
def test_restart_is_honoured_exactly_where_one_instance_can_be_replaced(provider) -> None:
    answers = {c.operation: c for c in capabilities(provider)}
    assert answers[RESTART].answer is answers[DELETE].answer
    if answers[RESTART].answer is Answer.NO:
        assert provider.operations.rolls in answers[RESTART].reason


def test_the_autoscaler_removes_the_right_node_only_where_the_provider_honours_the_mark() -> None:
    """cluster-autoscaler marks the Machine, then lowers replicas (clusterapi_nodegroup.go):
    Azure and Dev/Docker remove the marked one first; CAPA ignores the mark, even with its gate."""
    picks = {p.kind for p in PROVIDERS if _answers(p.kind)[AUTOSCALER] is Answer.YES}
    assert picks == {"AzureMachinePool", "DevMachinePool", "DockerMachinePool"}
    aws = infra_pool(INFRA_GROUP, "AWSMachinePool")
    assert aws is not None
    assert "CAPA ignores" in next(c.reason for c in capabilities(aws) if c.operation == AUTOSCALER)


def test_no_surveyed_kind_scales_from_zero_without_the_capacity_annotations() -> None:
    """No surveyed infra pool kind sets status.capacity (cluster-autoscaler reads it from the
    object at infrastructureRef); kwok's was not surveyed."""
    for provider in PROVIDERS:
        expected = Answer.UNVERIFIED if provider.kind == "KwokMachinePool" else Answer.NO
        capability = next(c for c in capabilities(provider) if c.operation == FROM_ZERO)
        assert capability.answer is expected, provider.kind
        assert "capacity.cluster-autoscaler.kubernetes.io/cpu" in capability.reason


def test_per_instance_describe_needs_machines_of_another_kind() -> None:
    assert _answers("AzureMachinePool")[DESCRIBE] is Answer.YES
    assert _answers("GCPManagedMachinePool")[DESCRIBE] is Answer.NO  # names its own kind
    assert _answers("AWSManagedMachinePool")[DESCRIBE] is Answer.NO
    aws = infra_pool(INFRA_GROUP, "AWSMachinePool")
    assert aws is not None
    assert "MachinePoolMachines feature gate" in capabilities(aws)[0].reason


def test_upgrade_pairing_names_the_fields_or_why_not() -> None:
    virtual = infra_pool(INFRA_GROUP, "OCIVirtualMachinePool")
    assert virtual is not None
    pairing = next(c for c in capabilities(virtual) if c.operation == UPGRADE)
    assert pairing.answer is Answer.NO
    assert "OKE versions virtual nodes itself" in pairing.reason
    aws = infra_pool(INFRA_GROUP, "AWSMachinePool")
    assert aws is not None
    assert "spec.awsLaunchTemplate.ami.id" in capabilities(aws)[3].reason


def test_a_kind_outside_the_registry_is_unverified_throughout() -> None:
    found = unknown("KarpenterMachinePool")
    assert [c.answer for c in found] == [Answer.UNVERIFIED] * len(OPERATIONS)
    assert "KarpenterMachinePool is not in this tool's provider registry" in found[0].reason


def test_a_kind_that_sets_capacity_scales_from_zero() -> None:
    azure = infra_pool(INFRA_GROUP, "AzureMachinePool")
    assert azure is not None
    capable = replace(azure, operations=replace(azure.operations, sets_capacity=True))
    found = next(c for c in capabilities(capable) if c.operation == FROM_ZERO)
    assert (found.answer, found.reason) == (Answer.YES, "AzureMachinePool sets status.capacity")
