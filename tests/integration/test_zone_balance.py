"""Zones against the real API server: describe's per-zone counts, diagnose's MP2701, and the
delete-machine plan's balance line before the question, from Nodes carrying zone labels."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import jsonschema
import pytest
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS, zoned

from kubectl_machinepool.cli.commands import confirming

AT = NOW.isoformat().replace("+00:00", "Z")
SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)
Obj = dict[str, Any]


def two_zones(objects: list[Obj]) -> None:
    """The VMSS in zones 1 and 2 (spec.failureDomains, which CAPZ gives the VMSS)."""
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    pool["spec"]["failureDomains"] = ["1", "2"]
    zoned("westeurope-1", "westeurope-1", "westeurope-2")(objects)


@pytest.fixture
def loaded(mgmt: ManagementCluster) -> Iterator[Callable[..., str]]:
    """A healthy scenario changed as the test says; its Nodes deleted afterwards (every test's
    workload cluster is this one API server)."""
    created: list[list[Obj]] = []

    def load(scenario: str, change: Callable[[list[Obj]], None]) -> str:
        namespace = mgmt.new_namespace()
        objects = SCENARIOS[scenario](
            mgmt.generation, namespace, namespace.removeprefix("t-"), healthy=True
        )
        change(objects)
        create_scenario(mgmt, objects)
        created.append(objects)
        return namespace

    yield load
    for objects in created:
        delete_nodes(mgmt, objects)


def cli(mgmt: ManagementCluster, capsys, command: str, namespace: str, *args: str):
    return run_cli(capsys, command, "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), *args)


def test_describe_counts_nodes_per_zone_in_text_and_json(mgmt, capsys, loaded) -> None:
    namespace = loaded("aws-asg", zoned("eu-west-1a", "eu-west-1a", "us-east-1d"))
    text = cli(mgmt, capsys, "describe", namespace, "--now", AT)
    assert (text.code, text.err) == (0, "")
    line = " ".join(text.out[text.out.index("  Zones:") :].split("\n  Delete")[0].split())
    assert line == (
        "Zones: eu-west-1a=2/2, eu-west-1b=0/0, eu-west-1c=0/0 Ready/Nodes (zones of "
        "AWSMachinePool spec.availabilityZones); unbalanced, max-min 2; in no zone of the pool: "
        "us-east-1d=1/1"
    )
    as_json = cli(mgmt, capsys, "describe", namespace, "--now", AT, "-o", "json")
    document = json.loads(as_json.out)
    jsonschema.validate(document, SCHEMA)
    [pool] = document["clusters"][0]["machinePools"]
    assert pool["zones"] == {
        "expected": ["eu-west-1a", "eu-west-1b", "eu-west-1c"],
        "source": "AWSMachinePool spec.availabilityZones",
        "perZone": [
            {"zone": "eu-west-1a", "nodes": 2, "ready": 2, "expected": True},
            {"zone": "eu-west-1b", "nodes": 0, "ready": 0, "expected": True},
            {"zone": "eu-west-1c", "nodes": 0, "ready": 0, "expected": True},
            {"zone": "us-east-1d", "nodes": 1, "ready": 1, "expected": False},
        ],
        "unlabelled": {"nodes": 0, "ready": 0},
        "skew": 2,
    }


def test_diagnose_flags_the_skew_and_fails_on_it(mgmt, capsys, loaded) -> None:
    namespace = loaded("aws-asg", zoned("eu-west-1a", "eu-west-1a", "eu-west-1b"))
    result = cli(mgmt, capsys, "diagnose", namespace, "--now", AT, "-o", "json")
    assert result.code == 0, result.err
    [finding] = [f for f in json.loads(result.out)["findings"] if f["code"] == "MP2701"]
    assert finding["severity"] == "warning"
    assert finding["message"] == (
        "Nodes per zone eu-west-1a=2, eu-west-1b=1, eu-west-1c=0: max-min 2 over the zones of "
        "AWSMachinePool spec.availabilityZones, where balanced is at most 1"
    )
    assert "AZRebalance then evens the zones out" in finding["action"]
    assert finding["refs"] == ["kubernetes-sigs/cluster-api#4063"]
    text = cli(mgmt, capsys, "diagnose", namespace, "--now", AT, "--fail-on", "warning")
    assert text.code == 4
    assert "WARNING  MP2701  Nodes per zone eu-west-1a=2, eu-west-1b=1, eu-west-1c=0" in text.out


def test_a_balanced_pool_is_not_flagged(mgmt, capsys, loaded) -> None:
    namespace = loaded("aws-asg", zoned("eu-west-1a", "eu-west-1b", "eu-west-1c"))
    result = cli(mgmt, capsys, "diagnose", namespace, "--now", AT, "-o", "json")
    assert result.code == 0, result.err
    assert [f for f in json.loads(result.out)["findings"] if f["code"] == "MP2701"] == []


WARNING = (
    "the delete unbalances the pool's zones: 1=2, 2=1 -> 0 Nodes (max-min 1 -> 2; balanced is "
    "at most 1); then the VMSS adds the replacement to a zone that needs more VMs (best-effort "
    "zone balance; strict with spec.zoneBalance); nothing moves existing VMs: CAPZ sets no "
    "automatic zone rebalancing on the VMSS"
)


def checks(plan: str) -> str:
    """The plan's Checks section, each check on one line."""
    section = plan[plan.index("Checks:\n") + 8 : plan.index("Writes, in order")]
    each = re.split(r"\n  (?=ok|warning|refused)", "\n" + section)
    return "\n".join(" ".join(part.split()) for part in each if part.strip())


def test_the_plan_warns_before_the_question_and_nothing_is_written(
    mgmt, capsys, loaded, monkeypatch
) -> None:
    namespace = loaded("azure-vmss", two_zones)
    dry = cli(mgmt, capsys, "delete-machine", namespace, "vmss-workers-2", "--dry-run=client")
    assert dry.code == 0, dry.err
    assert f"warning {WARNING}" in checks(dry.out)

    shown: list[str] = []

    def declined(_assume_yes: bool, _env: object) -> bool:
        shown.append(capsys.readouterr().out)  # what the user has read when asked
        return False

    monkeypatch.setattr(confirming, "confirmed", declined)
    path = f"/apis/cluster.x-k8s.io/{mgmt.generation}/namespaces/{namespace}/machines"
    before = mgmt.api.request("GET", f"{path}/vmss-workers-2")["metadata"]["resourceVersion"]
    result = cli(mgmt, capsys, "delete-machine", namespace, "vmss-workers-2")
    assert result.code == 0, result.err
    assert "Cancelled: nothing was written." in result.err
    [plan] = shown
    assert f"warning {WARNING}" in checks(plan)
    machine = mgmt.api.request("GET", f"{path}/vmss-workers-2")
    assert machine["metadata"]["resourceVersion"] == before
    assert "deletionTimestamp" not in machine["metadata"]


def test_a_delete_from_the_fuller_zone_is_ok(mgmt, capsys, loaded) -> None:
    namespace = loaded("azure-vmss", two_zones)
    result = cli(mgmt, capsys, "delete-machine", namespace, "vmss-workers-0", "--dry-run=client")
    assert result.code == 0, result.err
    assert "ok zone balance: 1=2 -> 1, 2=1 Nodes (max-min 1 -> 0); then the VMSS" in checks(
        result.out
    )
