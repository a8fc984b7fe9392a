"""upgrade --set names a field from the set the pool's infra kind has: any other path is
refused with the valid ones, never dropped while the field it meant keeps its derived value."""

from __future__ import annotations

from support.objects import NOW, infra_pool, machine_pool
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.plans.upgrade import UpgradeRequest, field_plan

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
