"""Writes to pools a GitOps controller applies, on the real API server (issue 50): a CAPD pool
server-side applied under Argo CD's field manager with its tracking-id, and one under
kustomize-controller's with Flux's labels, their owner objects (an Argo CD Application, a Flux
Kustomization) created from the CRDs the controllers' Go modules ship.

While the owner object says it reverts (self-heal on, the Kustomization not suspended), upgrade
and scale are refused naming the owner, the fields and its one suspend command, and nothing is
written (resourceVersion unchanged); --ignore-owner writes, or the owner's spec turns revert off
(self-heal off, suspended) and the write goes with a warning. Every write kind the tool makes (a
merge patch of a MachinePool, of its infra pool and of a Machine; a PUT to /scale) leaves
managedFields naming kubectl-machinepool for the fields it wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.gitops import (
    ARGO_MANAGER,
    FLUX_MANAGER,
    applied_pool,
    install_gitops_crds,
    managers_of,
    pool_path,
)
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.ownerobjects import owner_object
from support.roles import flat
from support.run import Result, run_cli
from support.scenarios import SCENARIOS

Obj = dict[str, Any]
POOL = "dev-mp-0"
OURS = "kubectl-machinepool"
INFRA = "infrastructure.cluster.x-k8s.io"
MERGE = "application/merge-patch+json"


class Owned:
    """The capd scenario in a namespace of its own, and a namespace for the owner object."""

    def __init__(self, mgmt: ManagementCluster) -> None:
        self.mgmt = mgmt
        self.ns = mgmt.new_namespace()
        self.owner_ns = mgmt.new_namespace()
        self.objects = SCENARIOS["capd"](mgmt.generation, self.ns, self.ns.removeprefix("t-"))
        create_scenario(mgmt, self.objects)
        self.pool = next(o for o in self.objects if o["kind"] == "MachinePool")

    def run(self, capsys: pytest.CaptureFixture[str], *args: str) -> Result:
        kubeconfig = str(self.mgmt.kubeconfig)
        return run_cli(capsys, *args, "-n", self.ns, "--kubeconfig", kubeconfig)

    def get(self, path: str) -> Obj:
        return self.mgmt.api.request("GET", path)  # type: ignore[no-any-return]

    def machine_pool(self) -> Obj:
        return self.get(pool_path(self.mgmt, self.ns, POOL))

    def infra_pool(self) -> Obj:
        return self.get(f"/apis/{INFRA}/v1beta2/namespaces/{self.ns}/dockermachinepools/{POOL}")

    def versions(self) -> tuple[str, str]:
        """What a refused write must leave as it was: the pool's and its infra pool's."""
        return tuple(
            o["metadata"]["resourceVersion"] for o in (self.machine_pool(), self.infra_pool())
        )  # type: ignore[return-value]

    def owner(self, kind: str) -> Obj:
        obj = owner_object(kind)
        obj["metadata"]["namespace"] = self.owner_ns
        obj["metadata"].pop("finalizers", None)  # no Argo CD here to remove its finalizer
        return self.mgmt.api.create(obj)  # type: ignore[no-any-return]

    def change_owner(self, obj: Obj, patch: Obj) -> None:
        self.mgmt.api.request(
            "PATCH", self.mgmt.api.path_of(obj, obj["metadata"]["name"]), patch, MERGE
        )


@pytest.fixture
def owned(v1beta2: ManagementCluster) -> Iterator[Owned]:
    install_gitops_crds(v1beta2)
    found = Owned(v1beta2)
    yield found
    delete_nodes(v1beta2, found.objects)


def refused(result: Result, *fragments: str) -> None:
    said = flat(result.err)
    assert result.code == 3, result.out + result.err
    assert said.startswith("error: refused: "), said
    assert said.endswith("nothing was written"), said
    for fragment in fragments:
        assert fragment in said, said


def test_argo_cd_self_heal_refuses_until_ignore_owner_or_self_heal_off(
    owned: Owned, capsys: pytest.CaptureFixture[str]
) -> None:
    tracking = f"{owned.owner_ns}_prod-pools:cluster.x-k8s.io/MachinePool:{owned.ns}/{POOL}"
    applied_pool(owned.mgmt, owned.pool, ARGO_MANAGER,
                 annotations={"argocd.argoproj.io/tracking-id": tracking})  # fmt: skip
    app = owned.owner("Application")
    before = owned.versions()
    named = f"is applied by Argo CD Application {owned.owner_ns}/prod-pools"
    suspend = f"argocd app set {owned.owner_ns}/prod-pools --sync-policy manual"
    scale = owned.run(capsys, "scale", POOL, "--replicas", "3", "--yes")
    refused(scale, f"spec.replicas of MachinePool {owned.ns}/{POOL} {named}",
            "managedFields manager argocd-controller (Apply)", "a self-heal sync reverts this write",
            f"change it in git, or suspend the owner first: {suspend}")  # fmt: skip
    upgrade = owned.run(capsys, "upgrade", POOL, "--version", "v1.34.1", "--yes", "--no-wait")
    refused(upgrade, f"spec.template.spec.version of MachinePool {owned.ns}/{POOL} {named}")
    dry = owned.run(capsys, "scale", POOL, "--replicas", "3", "--dry-run=client")
    assert dry.code == 3, dry.out + dry.err
    assert "a self-heal sync reverts this write" in flat(dry.out)
    assert owned.versions() == before  # nothing written

    owned.change_owner(app, {"spec": {"syncPolicy": {"automated": {"selfHeal": False}}}})
    scaled = owned.run(capsys, "scale", POOL, "--replicas", "3", "--yes")
    assert scaled.code == 0, scaled.err
    assert "auto-sync without self-heal" in flat(scaled.out)
    assert owned.machine_pool()["spec"]["replicas"] == 3
    assert managers_of(owned.machine_pool(), "spec", "replicas") == {OURS}  # through /scale

    owned.mgmt.api.request("DELETE", owned.mgmt.api.path_of(app, app["metadata"]["name"]))
    # --force: with no controller here, the scale above is never observed, the rollout not done.
    upgrade = ("upgrade", POOL, "--version", "v1.34.1", "--yes", "--no-wait", "--force")
    unknown = f"unknown owner state: Application {owned.owner_ns}/prod-pools could not be read"
    refused(owned.run(capsys, *upgrade), f"{unknown}: no such Application", suspend)
    going = owned.run(capsys, *upgrade, "--ignore-owner")
    assert going.code == 0, going.err
    assert f"{unknown}: no such Application (--ignore-owner: writing anyway" in flat(going.out)
    pool = owned.machine_pool()
    assert pool["spec"]["template"]["spec"]["version"] == "v1.34.1"
    assert managers_of(pool, "spec", "template", "spec", "version") == {OURS}
    infra = owned.infra_pool()
    assert infra["spec"]["template"]["customImage"] == "kindest/node:v1.34.1"
    assert managers_of(infra, "spec", "template", "customImage") == {OURS}


def test_flux_kustomization_refuses_until_suspended(
    owned: Owned, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = {
        "kustomize.toolkit.fluxcd.io/name": "prod-pools",
        "kustomize.toolkit.fluxcd.io/namespace": owned.owner_ns,
    }
    applied_pool(owned.mgmt, owned.pool, FLUX_MANAGER, labels=labels)
    kustomization = owned.owner("Kustomization")
    before = owned.versions()
    named = f"is applied by Flux Kustomization {owned.owner_ns}/prod-pools"
    reverts = "kustomize-controller applies it again every 10m (spec.interval), forcing ownership"
    suspend = f"flux suspend kustomization prod-pools -n {owned.owner_ns}"
    for args in (("scale", POOL, "--replicas", "3"), ("upgrade", POOL, "--version", "v1.34.1")):
        refused(owned.run(capsys, *args, "--yes"), named, reverts, suspend)
    assert owned.versions() == before

    owned.change_owner(kustomization, {"spec": {"suspend": True}})
    scaled = owned.run(capsys, "scale", POOL, "--replicas", "3", "--yes")
    assert scaled.code == 0, scaled.err
    assert "suspended (spec.suspend true)" in flat(scaled.out)
    assert managers_of(owned.machine_pool(), "spec", "replicas") == {OURS}

    machine = "dev-mp-0-x7q2p"
    marked = owned.run(capsys, "delete-machine", machine, "--scale-down", "--yes", "--no-wait")
    assert marked.code == 0, marked.err
    path = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{owned.ns}/machines/{machine}"
    mark = ("metadata", "annotations", "cluster.x-k8s.io/delete-machine")
    assert managers_of(owned.get(path), *mark) == {OURS}

    paused = owned.run(capsys, "rollout", "pause", POOL, "--yes")
    assert paused.code == 0, paused.err
    key = ("metadata", "annotations", "cluster.x-k8s.io/paused")
    assert managers_of(owned.machine_pool(), *key) == {OURS}
    assert managers_of(owned.infra_pool(), *key) == {OURS}
