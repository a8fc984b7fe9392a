"""upgrade --set names a field from the set the pool's infra kind has: any other path is
refused with the valid ones, never dropped while the field it meant keeps its derived value.
Only the provider registry's version and image fields, each value printable and bounded, each
path once (issue 49, item 1): from the command line alone a usage error, before anything is
read; what the pool's own kind does not take, a plan refusal."""

from __future__ import annotations

import pytest
from support.objects import NOW, infra_pool, machine_pool
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.base.errors import ExitCode, UsageError
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.upgrade import UpgradeRequest, field_plan
from kubectl_machinepool.plans.upgradesets import MAX_VALUE, parse_sets
from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.providers.upgrades import settable

GALLERY = {
    "template": {
        "image": {
            "computeGallery": {
                "gallery": "ClusterAPI-f72ceb4f-5159-4c26-a0fe-2ea738f0d019",
                "name": "capi-ubun2-2404",
                "version": "1.33.4",
            }
        }
    }
}


def plan(kind: str, spec: dict[str, object], sets: tuple[tuple[str, str], ...]):
    objects = [
        machine_pool("v1beta2", "workers", NAMESPACE, "prod", infra_kind=kind, version="v1.33.4"),
        infra_pool(kind, "workers", NAMESPACE, "prod", spec=spec),
    ]
    [pool] = [p for c in describe(snapshot_of(objects), Selection(), NOW).clusters for p in c.pools]
    return field_plan(pool, objects[1], UpgradeRequest("v1.34.1", sets))


def test_a_misspelt_path_is_refused_with_the_paths_there_are() -> None:
    typo = "spec.template.imag.computeGallery.version"
    refused = plan("AzureMachinePool", GALLERY, ((typo, "1.34.1"),))
    assert (refused.changes, refused.refusals) == (
        (),
        (
            f"--set {typo} is no field upgrade writes on AzureMachinePool {NAMESPACE}/workers: "
            "it writes spec.template.image.computeGallery.version, "
            "spec.template.image.sharedGallery.version, spec.template.image.marketplace.version, "
            "spec.template.image.id, spec.template.image",
        ),
    )


def test_a_kind_with_no_field_to_set_says_so() -> None:
    refused = plan("KwokMachinePool", {}, (("spec.image", "x"),))
    assert refused.refusals == (
        f"--set spec.image is no field upgrade writes on KwokMachinePool {NAMESPACE}/workers: "
        "it writes none of its fields",
    )


def test_the_path_spelt_right_is_taken() -> None:
    taken = plan(
        "AzureMachinePool", GALLERY, (("spec.template.image.computeGallery.version", "1.34.1"),)
    )
    assert taken.refusals == ()
    assert [(c.path, c.new) for c in taken.changes] == [
        ("spec.template.image.computeGallery.version", "1.34.1")
    ]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        # The reproductions on a DockerMachinePool: none is a field upgrade writes.
        ("metadata.ownerReferences=", "is no field upgrade writes on any infra pool kind"),
        ("spec.providerIDList=", "is no field upgrade writes on any infra pool kind"),
        ("metadata.labels=", "is no field upgrade writes on any infra pool kind"),
        ("metadata.name=x", "is no field upgrade writes on any infra pool kind"),
        ("status.replicas=5", "is no field upgrade writes on any infra pool kind"),
        ("spec.template.customImage=x\x1b[2J", "holds whitespace or a control character"),
        ("spec.template.customImage=kindest/node:v1.34.1 ", "holds whitespace"),
        ("spec.template.customImage=a\u202eb", "control character"),
        ("spec.template.customImage=" + "x" * (MAX_VALUE + 1), f"over {MAX_VALUE}"),
        # Clearing helps only where the provider derives the field from the version.
        ("spec.version=", "would clear a field no provider derives from the version"),
        ("spec.instanceConfiguration.instanceSourceViaImageConfig.imageId=", "would clear"),
        # A path only clearing names takes no value (it was dropped, exit 0).
        ("spec.template.image=foo", "takes only an empty value"),
        ("spec.template.customImage", "is not PATH=VALUE"),
        ("=x", "is not PATH=VALUE"),
    ],
)
def test_what_no_kind_takes_is_a_usage_error(given: str, said: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_sets((given,))
    assert said in raised.value.message
    assert raised.value.exit_code is ExitCode.USAGE
    assert "\x1b" not in raised.value.message


def test_the_same_path_twice_is_refused_not_the_last_one_taken() -> None:
    twice = ("spec.amiVersion=1.33.4-20250101", "spec.amiVersion=1.34.1-20251101")
    with pytest.raises(UsageError, match=r"--set spec\.amiVersion is given twice"):
        parse_sets(twice)


def test_a_misspelt_path_is_told_the_nearest() -> None:
    with pytest.raises(UsageError) as raised:
        parse_sets(("spec.templat.customImage=x",))
    assert (raised.value.hint or "").startswith("did you mean spec.template.customImage")


def test_every_path_of_every_kind_is_taken() -> None:
    for provider in PROVIDERS:
        upgrade = provider.upgrade
        for path in settable(upgrade):
            cleared = {f.clear for f in upgrade.fields}
            value = "" if path in cleared else "x-1"
            assert parse_sets((f"{path}={value}",)) == ((path, value),)


def test_another_kinds_field_is_a_plan_refusal_naming_this_kinds() -> None:
    refused = plan(
        "DockerMachinePool",
        {"template": {"customImage": "kindest/node:v1.33.4"}},
        (("spec.awsLaunchTemplate.ami.id", "ami-0123456789abcdef0"),),
    )
    assert refused.changes == ()
    assert refused.refusals == (
        "--set spec.awsLaunchTemplate.ami.id is no field upgrade writes on DockerMachinePool "
        f"{NAMESPACE}/workers: it writes spec.template.customImage",
    )


def test_a_value_where_only_clearing_helps_is_a_plan_refusal_too() -> None:
    # parse_sets refuses it first; a plan made otherwise (a property test) refuses it as well.
    refused = plan("AzureMachinePool", {}, (("spec.template.image", "x"),))
    [refusal] = refused.refusals
    assert "takes only an empty value on AzureMachinePool" in refusal


def test_clearing_a_field_the_provider_derives_is_planned() -> None:
    cleared = plan(
        "DockerMachinePool",
        {"template": {"customImage": "registry.example/node:custom"}},
        (("spec.template.customImage", ""),),
    )
    assert cleared.refusals == ()
    assert [(c.path, c.new, c.how) for c in cleared.changes] == [
        ("spec.template.customImage", None, "cleared with --set")
    ]
