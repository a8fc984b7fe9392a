"""`providers` drawn: kubectl's tables, each kind in use with why, never "none" for the unread, and
docs/providers.md's verdict table equal to what the registry decides."""

from __future__ import annotations

import json

from support.docs import page
from support.inventory import controller, provider
from support.snapshots import scenario_snapshot

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.model.inventory import CLUSTERCTL_GROUP, inventory
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.render.providers import (
    KIND_HEADER,
    providers_document,
    providers_text,
    verdict_table,
)
from kubectl_machinepool.render.structured import document_text

CORE = controller(
    "cluster-api",
    "capi-controller-manager",
    "capi-system",
    "cluster-api-controller:v1.10.4",
    ("--leader-elect", "--feature-gates=MachinePool=true,ClusterTopology=true"),
)
INSTALLED = [
    provider("cluster-api", "CoreProvider", "v1.10.4", "capi-system"),
    provider("azure", "InfrastructureProvider", "v1.26.0", "capz-system"),
    CORE,
]


def _pools(*scenarios: str) -> list[dict]:
    return [o for name in scenarios for o in scenario_snapshot(name).objects]


def test_the_providers_the_gate_and_each_kind_in_use_with_why() -> None:
    shown = inventory(Snapshot.of([*INSTALLED, *_pools("azure-vmss", "aws-asg")]), "capi-prod",
                      all_kinds=False)  # fmt: skip
    text = providers_text(shown, 100)
    lines = text.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "VERSION", "NAMESPACE", "FROM"]
    assert lines[1].split() == [
        "cluster-api", "CoreProvider", "v1.10.4", "capi-system", "Provider", "cluster-api"
    ]  # fmt: skip
    assert "MachinePool feature gate: on: --feature-gates sets MachinePool=true" in text
    kinds = text[text.index("KIND ") :].splitlines()
    assert kinds[0].split() == list(KIND_HEADER)
    assert kinds[1].split() == ["AWSMachinePool", "1", *["gated"] * 3, "yes", "no", "no"]
    assert kinds[2].split() == ["AzureMachinePool", "1", *["yes"] * 4, "no", "yes"]
    assert "AWSMachinePool (infrastructure.cluster.x-k8s.io), 1 pool:" in text
    assert "only with CAPA's MachinePoolMachines feature gate" in text
    assert "a pause does not stop: an ASG instance refresh already started" in " ".join(
        text.split()
    )
    assert all(len(line) <= 100 for line in lines if " " in line.strip())


def test_every_kind_is_one_row_and_no_reasons() -> None:
    shown = inventory(Snapshot.of(INSTALLED), None, all_kinds=True)
    text = providers_text(shown, 100, no_headers=True)
    rows = text[text.index("AzureMachinePool") :].splitlines()
    assert [row.split()[0] for row in rows] == [p.kind for p in PROVIDERS]
    assert "NAME" not in text
    assert "KwokMachinePool   0   yes   yes   yes   yes   unverified   no" in " ".join(
        "   ".join(row.split()) for row in rows
    )


def test_what_could_not_be_read_is_said_never_none() -> None:
    unread = Snapshot.of(
        [], unread=[(CLUSTERCTL_GROUP, "Provider"), ("apps", "Deployment"), (CAPI_GROUP, "MachinePool")]
    )  # fmt: skip
    text = providers_text(inventory(unread, "capi-prod", all_kinds=False))
    assert "The installed providers are not known: they could not be read" in text
    assert "MachinePool feature gate: unknown: Deployments could not be read" in text
    assert "kinds in use in namespace capi-prod are not known" in text
    assert "No provider" not in text
    assert "No MachinePools" not in text
    read = providers_text(inventory(Snapshot.of([]), None, all_kinds=False))
    assert "No provider found: no clusterctl Provider object" in read
    assert "No MachinePools in every namespace" in read


def test_a_kind_the_registry_lacks_is_unverified_throughout() -> None:
    pools = _pools("aws-asg")
    for pool in pools:
        if pool["kind"] == "MachinePool":
            ref = pool["spec"]["template"]["spec"]["infrastructureRef"]
            ref["kind"] = "KarpenterMachinePool"
    text = providers_text(inventory(Snapshot.of(pools), None, all_kinds=False), 100)
    row = next(line for line in text.splitlines() if line.startswith("KarpenterMachinePool "))
    assert row.split() == ["KarpenterMachinePool", "1", *["unverified"] * 6]
    assert "not in this tool's provider registry" in text


def test_cluster_text_is_escaped_in_text_and_kept_in_json() -> None:
    evil = provider("aws", "InfrastructureProvider", "v2\x1b]0;owned\x07", "capa-system")
    shown = inventory(Snapshot.of([evil]), None, all_kinds=False)
    text = providers_text(shown)
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "v2\\x1b]0;owned\\x07" in text
    assert providers_document(shown)["providers"][0]["version"] == "v2\x1b]0;owned\x07"


def test_the_document_holds_the_same_as_the_text() -> None:
    shown = inventory(Snapshot.of([*INSTALLED, *_pools("azure-vmss")]), "capi-prod",
                      all_kinds=False)  # fmt: skip
    document = json.loads(document_text(providers_document(shown), "json"))
    assert document["providersNamedBy"] == "Provider"
    assert document["machinePoolFeatureGate"]["state"] == "on"
    assert document["providers"][1] == {
        "name": "azure", "type": "InfrastructureProvider", "version": "v1.26.0",
        "namespace": "capz-system", "from": "Provider infrastructure-azure",
    }  # fmt: skip
    [kind] = document["kinds"]
    assert (kind["kind"], kind["pools"], kind["known"]) == ("AzureMachinePool", 1, True)
    assert [o["answer"] for o in kind["operations"]] == ["yes"] * 4 + ["no", "yes"]
    assert kind["pauseCaveat"].startswith("a VMSS operation already sent to Azure")
    assert "kinds:" in document_text(providers_document(shown), "yaml")


def test_docs_providers_table_is_what_the_registry_decides() -> None:
    assert verdict_table() in page("providers")
