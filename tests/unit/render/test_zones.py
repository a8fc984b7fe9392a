"""A pool's Nodes per zone (describe), the balance rule (MP2701) and the delete plan's balance
line, on the provider scenarios with the zone labels and zone fields each provider writes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.docs import page
from support.documents import describe_document
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS, as_provider, zoned
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.core import Finding
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.states import node_state
from kubectl_machinepool.model.zones import (
    DEPRECATED_ZONE_LABEL,
    ZONE_LABEL,
    PoolZones,
    ZoneCount,
    delete_balance,
)
from kubectl_machinepool.plans.checks import Level
from kubectl_machinepool.plans.deletechecks import plan_deletion
from kubectl_machinepool.plans.deletetarget import Mode, Plan, Request, Wanted, find_target
from kubectl_machinepool.plans.deletewrites import writes_for
from kubectl_machinepool.plans.disruption import Disruption
from kubectl_machinepool.providers.records import numbered
from kubectl_machinepool.providers.registry import PROVIDERS, infra_pool
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.deleteplan import render_plan
from kubectl_machinepool.render.tree import TreeOptions, render_tree
from kubectl_machinepool.render.zones import SHOWN, zones_line

Obj = dict[str, Any]
Change = Callable[[list[Obj]], Any]
GENERATIONS = ["v1beta1", "v1beta2"]
AWS_ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")


def objects_of(scenario: str, generation: str, change: Change | None, **variant: Any) -> list[Obj]:
    objects = SCENARIOS[scenario](generation, NAMESPACE, **variant)
    if change is not None:
        change(objects)
    return objects


def pool_of(
    scenario: str, change: Change | None = None, generation: str = "v1beta2", **variant: Any
) -> PoolDescription:
    description = describe(
        snapshot_of(objects_of(scenario, generation, change, **variant)), Selection(), NOW
    )
    [pool] = [p for c in description.clusters for p in c.pools]
    return pool


def findings(
    scenario: str, change: Change | None = None, generation: str = "v1beta2", **variant: Any
) -> list[Finding]:
    snapshot = snapshot_of(objects_of(scenario, generation, change, **variant))
    description = describe(snapshot, Selection(), NOW)
    return [
        f
        for f in diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
        if f.code == "MP2701"
    ]


def nodes(objects: list[Obj]) -> list[Obj]:
    return [o for o in objects if o["kind"] == "Node"]


def infra(objects: list[Obj]) -> Obj:
    pool_ref = next(o for o in objects if o["kind"] == "MachinePool")
    kind = pool_ref["spec"]["template"]["spec"]["infrastructureRef"]["kind"]
    return next(o for o in objects if o["kind"] == kind)


def chain(*changes: Change) -> Change:
    def change(objects: list[Obj]) -> None:
        for step in changes:
            step(objects)

    return change


def infra_spec(**fields: Any) -> Change:
    def change(objects: list[Obj]) -> None:
        spec = infra(objects)["spec"]
        for key, value in fields.items():
            if value is None:
                spec.pop(key, None)
            else:
                spec[key] = value

    return change


def failure_domains(*zones: str) -> Change:
    def change(objects: list[Obj]) -> None:
        spec = next(o for o in objects if o["kind"] == "MachinePool")["spec"]
        spec["failureDomains"] = list(zones)

    return change


def counts(zones: PoolZones | None) -> list[tuple[str, int, int, bool | None]]:
    assert zones is not None
    return [(c.zone, c.nodes, c.ready, c.expected) for c in zones.counts]


# -- where a pool's zones come from -------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_aws_zones_come_from_the_asg_spec_and_an_empty_zone_shows_as_zero(generation) -> None:
    zones = pool_of("aws-asg", generation=generation).zones
    assert zones is not None
    assert (zones.expected, zones.source) == (AWS_ZONES, "AWSMachinePool spec.availabilityZones")
    # The third instance has no Node yet: its zone is there, with nothing in it.
    assert counts(zones) == [
        ("eu-west-1a", 1, 1, True),
        ("eu-west-1b", 1, 1, True),
        ("eu-west-1c", 0, 0, True),
    ]
    assert (zones.skew, zones.unlabelled) == (1, 0)


@pytest.mark.parametrize("generation", GENERATIONS)
def test_capa_falls_back_to_failure_domains_and_subnets_hide_the_zones(generation) -> None:
    # CAPA's precedence (pkg/cloud/scope/shared.go): subnets, then its own zones, then the
    # MachinePool's failure domains, then the cluster's private subnets.
    fallback = pool_of(
        "aws-asg",
        chain(infra_spec(availabilityZones=None), failure_domains("eu-west-1a", "eu-west-1b")),
        generation,
    ).zones
    assert fallback is not None
    assert (fallback.expected, fallback.source) == (
        ("eu-west-1a", "eu-west-1b"),
        "MachinePool spec.failureDomains",
    )
    subnets = pool_of("aws-asg", infra_spec(subnets=[{"id": "subnet-0a1b"}]), generation).zones
    assert subnets is not None
    assert subnets.expected is None
    assert subnets.source == "AWSMachinePool spec.subnets places the instances"
    # Not knowing the pool's zones, only the zones its Nodes are in are counted.
    assert counts(subnets) == [("eu-west-1a", 1, 1, None), ("eu-west-1b", 1, 1, None)]
    neither = pool_of(
        "aws-asg", chain(infra_spec(availabilityZones=None), failure_domains()), generation
    ).zones
    assert neither is not None
    assert neither.source == "neither AWSMachinePool nor spec.failureDomains names zones"


@pytest.mark.parametrize("generation", GENERATIONS)
def test_azure_nodes_are_labelled_region_dash_zone(generation) -> None:
    """CAPZ gives the VMSS spec.failureDomains ("1", "2", "3"); the cloud provider labels a
    Node in zone 1 `westeurope-1`; an unzoned VM gets its fault domain, "0"."""
    zones = pool_of("azure-vmss", generation=generation).zones
    assert counts(zones) == [("1", 1, 1, True), ("2", 1, 1, True), ("3", 1, 0, True)]
    unzoned = pool_of("azure-vmss", zoned("westeurope-1", "0", "westeurope-1"), generation).zones
    assert counts(unzoned) == [
        ("1", 2, 1, True),
        ("2", 0, 0, True),
        ("3", 0, 0, True),
        ("0", 1, 1, False),
    ]
    assert unzoned is not None
    assert unzoned.skew == 2
    assert [c.zone for c in unzoned.outside] == ["0"]


def test_oci_ad_numbers_and_tenancy_prefixes_name_the_nodes_labels() -> None:
    """OCIMachinePool names ADs by number, OKE pools by `<tenancy>:<AD name>`; the OCI cloud
    controller labels a Node with the AD name alone."""
    assert numbered("PHX-AD-2") == numbered("2")
    assert numbered("Uocm:PHX-AD-2") == numbered("PHX-AD-2")
    by_number = pool_of(
        "oci-instance-pool",
        chain(
            infra_spec(placementDetails=[{"availabilityDomain": 1}, {"availabilityDomain": 2}]),
            zoned("PHX-AD-1", "PHX-AD-1"),
        ),
    ).zones
    assert counts(by_number) == [("1", 2, 2, True), ("2", 0, 0, True)]
    assert by_number is not None
    assert by_number.source == "OCIMachinePool spec.placementDetails[].availabilityDomain"


def test_aso_agent_pools_name_their_zones_in_the_embedded_resource() -> None:
    provider = infra_pool("infrastructure.cluster.x-k8s.io", "AzureASOManagedMachinePool")
    assert provider is not None
    assert provider.zones is not None
    assert provider.zones.fields == ("spec.resources[].spec.availabilityZones",)


def test_an_unverified_provider_is_taken_at_its_failure_domains() -> None:
    zones = pool_of(
        "capd",
        chain(
            as_provider("KarpenterMachinePool", "KarpenterMachine"),
            failure_domains("us-east-1a", "us-east-1b"),
            zoned("us-east-1a", "us-east-1a"),
        ),
    ).zones
    assert zones is not None
    assert zones.source == "MachinePool spec.failureDomains"
    assert counts(zones) == [("us-east-1a", 2, 2, True), ("us-east-1b", 0, 0, True)]


def test_an_unread_infra_pool_leaves_provider_fields_unknown() -> None:
    def drop_infra(objects: list[Obj]) -> None:
        objects.remove(infra(objects))

    zones = pool_of("aws-asg", drop_infra).zones
    assert zones is not None
    assert (zones.expected, zones.source) == (None, "AWSMachinePool was not read")


def test_every_registered_zone_behaviour_names_its_source() -> None:
    for provider in PROVIDERS:
        source = provider.zones
        if source is None:
            continue
        if source.replacement or source.rebalance:
            assert source.source, provider.kind


# -- which Nodes count, and where -----------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_labels_missing_or_deprecated(generation) -> None:
    deprecated = pool_of(
        "aws-asg", zoned("eu-west-1b", "eu-west-1b", label=DEPRECATED_ZONE_LABEL), generation
    ).zones
    assert counts(deprecated)[:2] == [("eu-west-1a", 0, 0, True), ("eu-west-1b", 2, 2, True)]
    missing = pool_of("aws-asg", zoned(None, "eu-west-1a"), generation).zones
    assert missing is not None
    assert (missing.unlabelled, missing.unlabelled_ready) == (1, 1)
    assert sum(c.nodes for c in missing.counts) == 1
    empty = pool_of("aws-asg", zoned("", "eu-west-1a"), generation).zones
    assert empty is not None
    assert empty.unlabelled == 1


def test_nodes_of_other_pools_and_unlisted_instances_do_not_count() -> None:
    def stray(objects: list[Obj]) -> None:
        # A Node claiming the pool by its annotations whose providerID the pool does not list.
        node = nodes(objects)[0]
        node["spec"]["providerID"] = "aws:///eu-west-1c/i-0ffffffffffffffff"

    zones = pool_of("aws-asg", stray).zones
    assert counts(zones)[:3] == [
        ("eu-west-1a", 0, 0, True),
        ("eu-west-1b", 1, 1, True),
        ("eu-west-1c", 0, 0, True),
    ]


def test_no_zones_without_the_nodes() -> None:
    snapshot = snapshot_of(SCENARIOS["aws-asg"]("v1beta2", NAMESPACE), nodes_known=False)
    [pool] = describe(snapshot, Selection(), NOW).clusters[0].pools
    assert pool.zones is None
    assert zones_line(pool.zones) is None


# -- what describe shows --------------------------------------------------------------------------


def test_the_zones_line_flags_outsiders_unlabelled_nodes_and_imbalance() -> None:
    zones = pool_of("aws-asg", zoned("us-east-1a", None), healthy=False).zones
    assert zones_line(zones) == (
        "eu-west-1a=0/0, eu-west-1b=0/0, eu-west-1c=0/0 Ready/Nodes (zones of AWSMachinePool "
        "spec.availabilityZones); in no zone of the pool: us-east-1a=1/1; without a zone label: "
        "1/1"
    )
    skewed = pool_of("aws-asg", zoned("eu-west-1a", "eu-west-1a", "eu-west-1a"), healthy=True)
    assert zones_line(skewed.zones) == (
        "eu-west-1a=3/3, eu-west-1b=0/0, eu-west-1c=0/0 Ready/Nodes (zones of AWSMachinePool "
        "spec.availabilityZones); unbalanced, max-min 3"
    )


def test_hostile_zone_labels_are_escaped_in_text_and_kept_in_json() -> None:
    hostile = "eu-west-1a\x1b]0;pwned\x07\u202e"
    objects = objects_of("aws-asg", "v1beta2", zoned(hostile, "x" * 5000))
    description = describe(snapshot_of(objects), Selection(), NOW)
    text = render_tree(description, TreeOptions(NOW, Palette(False)))
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "eu-west-1a\\x1b]0;pwned\\x07\\u202e=1/1" in text
    assert "x" * 62 + "…=1/1" in text
    assert "x" * 64 not in text
    document = describe_document(description)
    [pool] = document["clusters"][0]["machinePools"]
    assert {z["zone"] for z in pool["zones"]["perZone"]} >= {hostile, "x" * 5000}


def test_many_zones_are_named_up_to_a_bound() -> None:
    many = PoolZones(
        None,
        "test",
        tuple(ZoneCount(f"zone-{i:03d}", 1, 1, None) for i in range(SHOWN + 5)),
        0,
        0,
    )
    line = zones_line(many)
    assert line is not None
    assert line.count("=1/1") == SHOWN
    assert "and 5 more" in line


# -- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_skew_over_one_is_flagged_with_counts_and_the_providers_rebalancing(generation) -> None:
    [finding] = findings("aws-asg", zoned(*["eu-west-1a"] * 3), generation, healthy=True)
    assert finding.message == (
        "Nodes per zone eu-west-1a=3, eu-west-1b=0, eu-west-1c=0: max-min 3 over the zones of "
        "AWSMachinePool spec.availabilityZones, where balanced is at most 1"
    )
    assert "AWSMachinePool: AZRebalance then evens the zones out" in finding.action
    assert "kubernetes-sigs/cluster-api#4063" in finding.refs


def test_a_suspended_azrebalance_is_said() -> None:
    suspend = infra_spec(suspendProcesses={"all": True, "processes": {"launch": False}})
    [finding] = findings("aws-asg", chain(zoned(*["eu-west-1a"] * 3), suspend), healthy=True)
    assert "its rebalancing is suspended (AWSMachinePool spec.suspendProcesses.all is true)" in (
        finding.action
    )
    kept = infra_spec(suspendProcesses={"all": True, "processes": {"azRebalance": False}})
    [finding] = findings("aws-asg", chain(zoned(*["eu-west-1a"] * 3), kept), healthy=True)
    assert "AZRebalance then evens the zones out" in finding.action


def test_balanced_within_one_is_not_flagged() -> None:
    # Three Nodes over three zones: a, a, b leaves c two short of a.
    assert findings("aws-asg", zoned("eu-west-1a", "eu-west-1a", "eu-west-1b"), healthy=True)
    assert not findings("aws-asg", healthy=True)  # a, b, c
    two_zones = infra_spec(availabilityZones=["eu-west-1a", "eu-west-1b"])
    spread = zoned("eu-west-1a", "eu-west-1a", "eu-west-1b")
    assert not findings("aws-asg", chain(two_zones, spread), healthy=True)


def deleting_node(objects: list[Obj]) -> None:
    nodes(objects)[2]["metadata"]["deletionTimestamp"] = "2026-11-29T14:59:00Z"


def old_kubelet(objects: list[Obj]) -> None:
    nodes(objects)[2]["status"]["nodeInfo"]["kubeletVersion"] = "v1.32.9"


def scaling_down(objects: list[Obj]) -> None:
    next(o for o in objects if o["kind"] == "MachinePool")["status"]["phase"] = "ScalingDown"


@pytest.mark.parametrize(
    "settling", [deleting_node, old_kubelet, scaling_down], ids=lambda f: f.__name__
)
def test_pools_being_scaled_or_rolled_are_not_judged(settling: Change) -> None:
    skewed = zoned(*["eu-west-1a"] * 3)
    assert findings("aws-asg", skewed, healthy=True)
    assert not findings("aws-asg", chain(skewed, settling), healthy=True)


def raised_replicas(objects: list[Obj]) -> None:
    """spec.replicas just raised: the phase still says Running."""
    next(o for o in objects if o["kind"] == "MachinePool")["spec"]["replicas"] = 4


def test_matched_nodes_short_of_desired_is_a_scale_up() -> None:
    skewed = zoned(*["eu-west-1a"] * 3)
    assert not findings("aws-asg", chain(skewed, raised_replicas), healthy=True)


def test_a_single_zone_pool_is_never_unbalanced() -> None:
    assert not findings("scaleway-kapsule")
    zones = pool_of("scaleway-kapsule").zones
    assert zones is not None
    assert zones.skew is None


def fourth_instance(objects: list[Obj]) -> None:
    """The healthy ASG grown to 4 instances, the new one joined in eu-west-1a."""
    mp = next(o for o in objects if o["kind"] == "MachinePool")
    pid = "aws:///eu-west-1a/i-00000000003a5f13"
    mp["spec"]["replicas"] = 4
    mp["spec"]["providerIDList"].append(pid)
    node = json.loads(json.dumps(nodes(objects)[0]))
    node["metadata"].update(name="ip-10-0-3-17.eu-west-1.compute.internal", uid="fourth")
    node["spec"]["providerID"] = pid
    objects.append(node)


def test_unknown_zones_are_judged_by_where_the_nodes_are() -> None:
    """The ASG's subnets hide its zones; 3 Nodes in one zone and 1 in another are at least
    2 apart over whatever zones the subnets are in."""
    subnets = infra_spec(subnets=[{"id": "subnet-0a1b"}])
    spread = zoned("eu-west-1a", "eu-west-1a", "eu-west-1b", "eu-west-1a")
    [finding] = findings("aws-asg", chain(subnets, fourth_instance, spread), healthy=True)
    assert finding.message == (
        "Nodes per zone eu-west-1a=3, eu-west-1b=1: max-min 2 over the zones its Nodes are in "
        "(the pool's zones are not known: AWSMachinePool spec.subnets places the instances), "
        "where balanced is at most 1"
    )
    # All in one zone says nothing about zones no Node is in.
    one = zoned(*["eu-west-1a"] * 4)
    assert not findings("aws-asg", chain(subnets, fourth_instance, one), healthy=True)


# -- the delete plan ----------------------------------------------------------------------------


def plan_for(
    change: Change | None, wanted: Wanted, mode: Mode = Mode.REPLACE, scenario: str = "azure-vmss"
) -> Plan:
    variant = {"healthy": True} if scenario == "azure-vmss" else {}
    objects = objects_of(scenario, "v1beta2", change, **variant)
    snapshot = snapshot_of(objects)
    description = describe(snapshot, Selection(), NOW)
    [target] = find_target(description, snapshot, wanted)
    request = Request(mode)
    allowed = {w.access: True for w in writes_for(target, request, NOW)}
    return plan_deletion(target, request, NOW, allowed, Disruption(()))


def zone_checks(plan: Plan) -> list[tuple[Level, str]]:
    return [
        (c.level, c.message)
        for c in plan.checks
        if c.message.startswith(("zone", "the delete", "the pool's"))
    ]


def test_a_delete_that_keeps_the_balance_is_ok() -> None:
    [(level, message)] = zone_checks(plan_for(None, Wanted(machine="vmss-workers-1")))
    assert level is Level.OK
    assert message.startswith(
        "zone balance: 1=1, 2=1 -> 0, 3=1 Nodes (max-min 0 -> 1); then the VMSS adds the "
        "replacement to a zone that needs more VMs"
    )
    assert message.endswith(
        "nothing moves existing VMs: CAPZ sets no automatic zone rebalancing on the VMSS"
    )


def test_a_delete_that_worsens_the_balance_warns_with_what_the_cloud_does_next() -> None:
    two_zones = chain(
        failure_domains("1", "2"), zoned("westeurope-1", "westeurope-1", "westeurope-2")
    )
    [(level, message)] = zone_checks(plan_for(two_zones, Wanted(machine="vmss-workers-2")))
    assert level is Level.WARNING
    assert message == (
        "the delete unbalances the pool's zones: 1=2, 2=1 -> 0 Nodes (max-min 1 -> 2; balanced "
        "is at most 1); then the VMSS adds the replacement to a zone that needs more VMs "
        "(best-effort zone balance; strict with spec.zoneBalance); nothing moves existing VMs: "
        "CAPZ sets no automatic zone rebalancing on the VMSS"
    )
    # From the fuller zone the same pool comes back within one.
    [(level, _)] = zone_checks(plan_for(two_zones, Wanted(machine="vmss-workers-0")))
    assert level is Level.OK


def test_a_delete_that_leaves_the_pool_unbalanced_warns_too() -> None:
    lean = zoned("westeurope-1", "westeurope-1", "westeurope-2")
    [(level, message)] = zone_checks(plan_for(lean, Wanted(machine="vmss-workers-2")))
    assert level is Level.WARNING
    assert message.startswith(
        "the pool's zones stay unbalanced: 1=2, 2=1 -> 0, 3=0 Nodes (max-min 2 -> 2; balanced"
    )
    [(level, message)] = zone_checks(plan_for(lean, Wanted(machine="vmss-workers-0")))
    assert (level, message[:55]) == (
        Level.OK,
        "zone balance: 1=2 -> 1, 2=1, 3=0 Nodes (max-min 2 -> 1)",
    )


def test_the_balance_warning_is_in_the_plan_the_user_confirms() -> None:
    two_zones = chain(
        failure_domains("1", "2"), zoned("westeurope-1", "westeurope-1", "westeurope-2")
    )
    text = render_plan(plan_for(two_zones, Wanted(machine="vmss-workers-2")), Palette(False))
    checks = text[text.index("Checks:") : text.index("Writes, in order")]
    assert "warning  the delete unbalances the pool's zones: 1=2, 2=1 -> 0 Nodes" in checks


def test_scale_down_says_only_what_the_cloud_does_about_balance() -> None:
    [(level, message)] = zone_checks(
        plan_for(None, Wanted(machine="vmss-workers-0"), Mode.SCALE_DOWN)
    )
    assert level is Level.OK
    assert "replacement" not in message
    assert message.endswith(
        "then nothing moves existing VMs: CAPZ sets no automatic zone rebalancing on the VMSS"
    )


def test_an_instance_without_a_zone_label_leaves_the_balance_unknown() -> None:
    unlabelled = zoned("westeurope-1", None, "westeurope-3")
    [(level, message)] = zone_checks(plan_for(unlabelled, Wanted(machine="vmss-workers-1")))
    assert level is Level.OK
    assert message.startswith(
        "zone balance: Node vmss-workers-000001 has no zone label; the zones stay 1=1, 2=0, 3=1"
    )


def test_refused_and_zoneless_plans_say_nothing_about_zones() -> None:
    capd = plan_for(None, Wanted(machine="dev-mp-0-x7q2p"), scenario="capd")
    assert zone_checks(capd) == []


# -- delete_balance as arithmetic ---------------------------------------------------------------


def _instance(zone: str | None) -> Instance:
    labels = {ZONE_LABEL: zone} if zone else {}
    node = node_state({"metadata": {"name": "n", "labels": labels}, "spec": {"providerID": "p"}})
    return Instance("p", None, None, node, True)


@given(
    st.lists(st.integers(min_value=0, max_value=6), min_size=2, max_size=5),
    st.integers(min_value=0, max_value=4),
    st.booleans(),
)
def test_worse_means_more_than_one_apart_and_further_than_before(
    nodes_per_zone: list[int], pick: int, replacing: bool
) -> None:
    names = [f"z{i}" for i in range(len(nodes_per_zone))]
    at = pick % len(names)
    if nodes_per_zone[at] == 0:
        nodes_per_zone[at] = 1  # the instance's own Node is counted in its zone
    zones = PoolZones(
        tuple(names),
        "MachinePool spec.failureDomains",
        tuple(ZoneCount(z, n, n, True) for z, n in zip(names, nodes_per_zone, strict=True)),
        0,
        0,
    )
    balance = delete_balance(zones, _instance(names[at]), None, None, replacing=replacing)
    assert balance is not None
    after = list(nodes_per_zone)
    after[at] -= 1
    before_skew = max(nodes_per_zone) - min(nodes_per_zone)
    after_skew = max(after) - min(after)
    assert balance.worse is (after_skew > 1 and after_skew >= before_skew)
    assert f"max-min {before_skew} -> {after_skew}" in balance.message
    assert ("replacement is not verified" in balance.message) is replacing


# -- docs/describe.md ---------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]
DESCRIBE = page("describe")


def test_docs_show_the_zones_line_describe_prints(capsys: pytest.CaptureFixture[str]) -> None:
    bullet = DESCRIBE[DESCRIBE.index("- **Zones (#4063):**") :]
    block = bullet.split("```\n")[1]
    shown = run_cli(
        capsys,
        "describe",
        "-f",
        str(ROOT / "examples" / "aws-asg.yaml"),
        "--now",
        "2026-11-29T15:00:00Z",
    )
    lines = shown.out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  Zones:"))
    zones = [
        lines[start],
        *itertools.takewhile(lambda line: line.startswith(" " * 24), lines[start + 1 :]),
    ]
    assert block.rstrip(" ") == "".join(f"  {line}\n" for line in zones)


def test_docs_zone_table_names_every_provider_the_registry_knows() -> None:
    bullet = DESCRIBE[DESCRIBE.index("- **Zones (#4063):**") :]
    table = bullet[: bullet.index("\n- **")]
    rows = [
        line for line in table.splitlines() if line.strip().startswith("| ") and "---" not in line
    ]
    kinds = {k.strip() for row in rows[1:] for k in row.split("|")[1].split(",")}
    # A kind whose zones are not verified is "any other".
    assert {p.kind for p in PROVIDERS if p.zones is not None} <= kinds
