"""describe's Owner line, its -o json owners, and list's OWNER column and summary.owner, from
pools carrying the signals of tests/support/ownership_pools.yaml."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from support.ownership import owned_pool

from kubectl_machinepool.model.listing import ListedPool
from kubectl_machinepool.model.pool import machine_pool
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.listing import ListView, list_table, summary
from kubectl_machinepool.render.owners import owner_line, owners_document

NOW = datetime(2026, 11, 29, 15, tzinfo=UTC)


def pool_of(raw: dict[str, Any]) -> Any:
    return machine_pool(raw, Snapshot.of([raw]))


def test_the_owner_line_names_each_applier_gitops_first() -> None:
    pool = pool_of(owned_pool("topology-pool"))
    assert owner_line(pool, "none seen") == (
        "ClusterClass topology capi-prod/prod, cluster-autoscaler 1..6"
    )


def test_owners_in_json_carry_the_evidence_and_the_object_to_read() -> None:
    (argo,) = owners_document(pool_of(owned_pool("argo-ssa")))
    assert argo == {
        "kind": "Argo CD Application",
        "name": "platform/prod-pools",
        "gitops": True,
        "evidence": 'annotation argocd.argoproj.io/tracking-id="platform_prod-pools:'
        'cluster.x-k8s.io/MachinePool:capi-prod/argo-ssa"; managedFields manager '
        "argocd-controller (Apply)",
        "owner": {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "namespace": "platform",
            "name": "prod-pools",
        },
        "fieldManagers": ["argocd-controller", "argocd-application-controller"],
    }


def test_a_hostile_owner_name_is_escaped_in_text_and_kept_in_json() -> None:
    raw = owned_pool("flux-ks")
    raw["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] = "pools\x1b[2J"
    pool = pool_of(raw)
    assert "\x1b" not in owner_line(pool, "none seen")
    assert "pools\\x1b[2J" in owner_line(pool, "none seen")
    assert owners_document(pool)[0]["name"] == "flux-system/pools\x1b[2J"


def test_list_wide_has_an_owner_column_and_the_summary_its_words() -> None:
    rows = [ListedPool(pool_of(owned_pool(n))) for n in ("flux-hr", "kubectl-ssa")]
    table = list_table(ListView(rows, NOW, Palette(False)), wide=True)
    header, *lines = table.splitlines()
    assert header.split()[-1] == "OWNER"
    assert lines[0].endswith("Flux HelmRelease flux-system/workers")
    assert lines[1].endswith("kubectl apply, field manager platform-ci")
    assert summary(rows[0])["owner"] == "Flux HelmRelease flux-system/workers"


def test_a_pool_with_no_signal_says_so() -> None:
    raw = owned_pool("flux-hr")
    raw["metadata"] = {"name": "bare", "namespace": "capi-prod"}
    row = ListedPool(pool_of(raw))
    assert owner_line(row.pool, "none seen") == "none seen"
    assert summary(row)["owner"] is None
    assert (
        list_table(ListView([row], NOW, Palette(False)), wide=True)
        .splitlines()[1]
        .endswith("<none>")
    )
