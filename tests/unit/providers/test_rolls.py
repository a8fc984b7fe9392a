"""Each provider's "what rolls" record (providers/rolls.py, a Provider's rolls): the effect of a
change of each field it names, the cases that switch it (a pinned image, a disabled refresh), the
known surprises with their upstream reference, and a field no fact covers is unknown."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_machinepool.plans.consequences import BOOTSTRAP, INFRA, POOL, rules_for
from kubectl_machinepool.providers.registry import PROVIDERS, infra_pool
from kubectl_machinepool.providers.rolls import CORE, Effect, Verdict, covering, path, verdict

GROUP = "infrastructure.cluster.x-k8s.io"
VERSION = "spec.template.spec.version"
CONFIG_REF = "spec.template.spec.bootstrap.configRef.name"


def judge(kind: str, role: str, field: str, infra: dict[str, Any] | None = None) -> Verdict:
    rule = covering(rules_for(role, infra_pool(GROUP, kind)), path(field))
    if rule is None:
        return Verdict(Effect.UNKNOWN, "", "")
    return verdict(rule, infra or {})


def effect(kind: str, role: str, field: str, infra: dict[str, Any] | None = None) -> Effect:
    return judge(kind, role, field, infra).effect


def test_capz_tags_roll_nothing_now_and_say_what_they_did_before() -> None:
    tags = judge("AzureMachinePool", INFRA, "spec.additionalTags.cost-center")
    assert tags.effect is Effect.ROLLS_NONE
    assert "CAPZ#5020" in tags.source
    assert tags.surprise is not None
    assert "CAPZ#1763" in tags.surprise


def test_capz_rolls_for_an_image_and_only_new_vms_get_the_rest_of_the_model() -> None:
    image = "spec.template.image.computeGallery.version"
    assert effect("AzureMachinePool", INFRA, image) is Effect.ROLLS_ALL
    assert effect("AzureMachinePool", INFRA, "spec.template.vmSize") is Effect.NEW_ONLY
    assert effect("AzureMachinePool", INFRA, "spec.strategy.rollingUpdate.maxSurge") is (
        Effect.ROLLS_NONE
    )


def test_capz_version_rolls_unless_the_image_is_pinned() -> None:
    assert effect("AzureMachinePool", POOL, VERSION) is Effect.ROLLS_ALL
    pinned = {"spec": {"template": {"image": {"id": "/subscriptions/x/images/y"}}}}
    held = judge("AzureMachinePool", POOL, VERSION, pinned)
    assert held.effect is Effect.ROLLS_NONE
    assert "7248" in held.reason


def test_a_new_bootstrap_config_name_rolls_capa_but_not_capz() -> None:
    assert effect("AWSMachinePool", POOL, CONFIG_REF) is Effect.ROLLS_ALL
    capz = judge("AzureMachinePool", POOL, CONFIG_REF)
    assert capz.effect is Effect.NEW_ONLY
    assert capz.surprise is not None
    assert "8858" in capz.surprise


@pytest.mark.parametrize(
    "kind", ["AWSMachinePool", "AzureMachinePool", "DockerMachinePool", "DevMachinePool"]
)
def test_a_bootstrap_config_changed_under_its_name_rolls_nothing(kind: str) -> None:
    same = judge(kind, BOOTSTRAP, "spec.joinConfiguration.nodeRegistration.kubeletExtraArgs")
    assert same.effect is Effect.ROLLS_NONE
    assert same.surprise is not None
    assert "#10496" in same.surprise
    assert "#8858" in same.surprise
    assert "rotateMachinePoolBootstrapToken" in same.reason
    assert effect(kind, BOOTSTRAP, "metadata.labels.team") is Effect.ROLLS_NONE


def test_capa_tags_roll_every_instance_and_a_disabled_refresh_only_new_ones() -> None:
    tags = judge("AWSMachinePool", INFRA, "spec.additionalTags.cost-center")
    assert tags.effect is Effect.ROLLS_ALL
    assert "tagsChanged" in tags.source
    assert tags.surprise
    disabled = {"spec": {"refreshPreferences": {"disable": True}}}
    field = "spec.awsLaunchTemplate.instanceType"
    assert effect("AWSMachinePool", INFRA, field) is Effect.ROLLS_ALL
    assert effect("AWSMachinePool", INFRA, field, disabled) is Effect.NEW_ONLY
    enabled = {"spec": {"refreshPreferences": {"disable": False}}}
    assert effect("AWSMachinePool", INFRA, field, enabled) is Effect.ROLLS_ALL


def test_capa_version_rolls_through_the_ami_lookup_unless_the_ami_is_pinned() -> None:
    assert effect("AWSMachinePool", POOL, VERSION) is Effect.ROLLS_ALL
    pinned = {"spec": {"awsLaunchTemplate": {"ami": {"id": "ami-0123456789abcdef0"}}}}
    assert effect("AWSMachinePool", POOL, VERSION, pinned) is Effect.ROLLS_NONE
    # A field of the launch template CAPA does not compare is not claimed either way.
    assert effect("AWSMachinePool", INFRA, "spec.awsLaunchTemplate.rootVolume.size") is (
        Effect.UNKNOWN
    )


@pytest.mark.parametrize(
    ("kind", "role", "field"),
    [
        ("AWSManagedMachinePool", POOL, VERSION),
        ("AWSManagedMachinePool", INFRA, "spec.amiVersion"),
        ("AzureManagedMachinePool", POOL, VERSION),
        ("GCPManagedMachinePool", POOL, VERSION),
        ("ScalewayManagedMachinePool", POOL, VERSION),
        ("ROSAMachinePool", INFRA, "spec.version"),
    ],
)
def test_a_managed_pool_version_starts_the_services_upgrade(
    kind: str, role: str, field: str
) -> None:
    assert effect(kind, role, field) is Effect.MANAGED_UPGRADE


def test_eks_config_changes_in_place_and_scaling_scales() -> None:
    assert effect("AWSManagedMachinePool", INFRA, "spec.labels.team") is Effect.ROLLS_NONE
    assert effect("AWSManagedMachinePool", INFRA, "spec.scaling.maxSize") is Effect.SCALES


def test_aks_immutable_fields_are_refused() -> None:
    refused = judge("AzureManagedMachinePool", INFRA, "spec.sku")
    assert refused.effect is Effect.REFUSED
    assert "azuremanagedmachinepool_webhook.go" in refused.source


def test_oke_replaces_nodes_only_with_node_cycling() -> None:
    assert effect("OCIManagedMachinePool", INFRA, "spec.version") is Effect.NEW_ONLY
    cycling = {"spec": {"nodePoolCyclingDetails": {"isNodeCyclingEnabled": True}}}
    assert effect("OCIManagedMachinePool", INFRA, "spec.version", cycling) is (
        Effect.MANAGED_UPGRADE
    )
    field = "spec.instanceConfiguration.shape"
    assert effect("OCIMachinePool", INFRA, field) is Effect.NEW_ONLY


def test_capg_new_minor_reaches_new_instances_unless_the_image_is_named() -> None:
    assert effect("GCPMachinePool", POOL, VERSION) is Effect.NEW_ONLY
    family = {"spec": {"imageFamily": "capi-ubuntu-2204-k8s-v1-33"}}
    assert effect("GCPMachinePool", POOL, VERSION, family) is Effect.ROLLS_NONE


@pytest.mark.parametrize(("kind", "image"), [
    ("DockerMachinePool", "spec.template.customImage"),
    ("DevMachinePool", "spec.backend.docker.customImage"),
])  # fmt: skip
def test_capd_rolls_for_the_version_unless_a_custom_image_is_pinned(kind: str, image: str) -> None:
    assert effect(kind, POOL, VERSION) is Effect.ROLLS_ALL
    assert effect(kind, INFRA, image) is Effect.ROLLS_ALL
    root, _, leaf = image.rpartition(".")
    pinned: dict[str, Any] = {leaf: "kindest/node:v1.34.0"}
    for key in reversed(root.split(".")):
        pinned = {key: pinned}
    assert effect(kind, POOL, VERSION, pinned) is Effect.ROLLS_NONE
    assert effect(kind, POOL, CONFIG_REF) is Effect.NEW_ONLY


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("spec.replicas", Effect.SCALES),
        ("spec.clusterName", Effect.REFUSED),
        ("spec.template.spec.taints", Effect.REFUSED),
        ("spec.template.metadata.labels.team", Effect.ROLLS_NONE),
        ("spec.template.spec.minReadySeconds", Effect.ROLLS_NONE),
        ("metadata.annotations.cluster.x-k8s.io/paused", Effect.UNKNOWN),  # dotted: no key
        ("spec.template.spec.failureDomain", Effect.UNKNOWN),
    ],
)
def test_core_facts_hold_for_a_kind_the_registry_does_not_know(
    field: str, expected: Effect
) -> None:
    assert effect("NoSuchMachinePool", POOL, field) is expected


def test_annotations_are_judged_by_their_whole_key() -> None:
    rule = covering(CORE, ("metadata", "annotations", "cluster.x-k8s.io/paused"))
    assert rule is not None
    assert rule.effect is Effect.ROLLS_NONE
    bound = (
        "metadata",
        "annotations",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
    )
    assert covering(CORE, bound) is not None
    assert covering(CORE, ("metadata", "annotations", "example.com/note")) is None


def test_no_fact_for_an_infra_field_is_unknown_never_rolls_none() -> None:
    for provider in PROVIDERS:
        assert effect(provider.kind, INFRA, "spec.fieldNoProviderHas") is Effect.UNKNOWN
    assert effect("KwokMachinePool", POOL, VERSION) is Effect.UNKNOWN


def test_every_fact_says_where_upstream_says_it() -> None:
    for provider in PROVIDERS:
        rolls = provider.rolls
        rules = [*rolls.infra, *rolls.pool, *([rolls.bootstrap] if rolls.bootstrap else [])]
        for rule in rules:
            assert all((rule.reason, rule.source)), (provider.kind, rule.field)
            assert all(case.reason and case.source for case in rule.when), rule.field
        if rolls.strategy or any(r.effect is Effect.ROLLS_ALL for r in rules):
            assert rolls.strategy_default, provider.kind
    assert all(rule.source for rule in CORE)
