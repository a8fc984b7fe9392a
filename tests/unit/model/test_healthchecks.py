"""MachineHealthChecks in describe and the rule on them (MP2601), on the provider scenarios with
the checks users write and the conditions their controller leaves on Machines."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from support.docs import fenced, page, section
from support.documents import describe_document
from support.healthchecks import checked_status, health_check, health_checked, mark_unhealthy
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS, core_manager
from support.snapshots import NAMESPACE, snapshot_of

from kubectl_machinepool.diagnostics.core import CapiVersion, Finding, Severity
from kubectl_machinepool.diagnostics.rules import diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import Description, PoolDescription, describe
from kubectl_machinepool.model.healthchecks import DEFAULT_NODE_STARTUP_SECONDS
from kubectl_machinepool.model.healthchecks import health_check as read
from kubectl_machinepool.model.selector import Selection, selector_matches
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.tree import TreeOptions, render_tree

Obj = dict[str, Any]
SCHEMA = json.loads(
    resources.files("kubectl_machinepool").joinpath("schemas/describe.json").read_text()
)
GENERATIONS = ("v1beta1", "v1beta2")
POOL_LABEL = "cluster.x-k8s.io/pool-name"
AGO = lambda minutes: (NOW - timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")  # noqa: E731
V1_14 = CapiVersion.parse("v1.14.2", "image of Deployment capi-system/capi-controller-manager")
V1_10 = CapiVersion.parse("v1.10.10", "image of Deployment capi-system/capi-controller-manager")
UNKNOWN = CapiVersion(None, "the capi-controller-manager Deployment was not read")


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def scenario(name: str, generation: str, *changes: Callable[[list[Obj]], None]) -> list[Obj]:
    objects = SCENARIOS[name](generation, NAMESPACE)
    for change in changes:
        change(objects)
    return objects


def described(objects: list[Obj]) -> tuple[Description, Snapshot]:
    snapshot = snapshot_of(objects)
    return describe(snapshot, Selection(), NOW), snapshot


def only_pool(objects: list[Obj]) -> PoolDescription:
    [cluster] = described(objects)[0].clusters
    [pool] = cluster.pools
    return pool


def findings(objects: list[Obj], capi: CapiVersion = V1_14) -> list[Finding]:
    description, snapshot = described(objects)
    return [f for f in diagnose(description, snapshot, capi, Thresholds()) if f.code == "MP2601"]


def add(*objects: Obj) -> Callable[[list[Obj]], None]:
    return lambda found: found.extend(objects)


def marked(name: str, since: str, **options: Any) -> Callable[[list[Obj]], None]:
    return lambda objects: mark_unhealthy(find(objects, "Machine", name), since, **options)


# -- reading MachineHealthChecks ---------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_both_generations_read_alike(generation: str) -> None:
    check = read(
        health_check(
            generation, NAMESPACE, "workers", "prod", {"matchLabels": {POOL_LABEL: "w"}},
            node_conditions=(("Ready", "False", 300), ("DiskPressure", "True", 90)),
            startup=1200, max_unhealthy="40%", unhealthy_range="[1-3]",
            template=("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3RemediationTemplate", "reboot"),
            status=checked_status(generation, ["w-0", "w-1"], healthy=1, allowed=0, remediation_allowed=False),
        )
    )  # fmt: skip
    assert (check.cluster, check.node_startup_seconds) == ("prod", 1200)
    assert [(c.type, c.status, c.timeout_seconds) for c in check.node_conditions] == [
        ("Ready", "False", 300),
        ("DiskPressure", "True", 90),
    ]
    assert (check.max_unhealthy, check.unhealthy_range) == ("40%", "[1-3]")
    assert check.template is not None
    assert check.template.kind == "Metal3RemediationTemplate"
    assert (check.expected_machines, check.current_healthy, check.remediations_allowed) == (2, 1, 0)
    allowed = check.remediation_allowed
    assert allowed is not None
    assert (allowed.status, allowed.reason) == ("False", "TooManyUnhealthy")


@pytest.mark.parametrize(
    ("generation", "written", "seconds"),
    [
        ("v1beta2", None, DEFAULT_NODE_STARTUP_SECONDS),
        ("v1beta2", 0, 0),
        ("v1beta1", None, DEFAULT_NODE_STARTUP_SECONDS),
        ("v1beta1", "0s", 0),
        ("v1beta1", "1h30m", 5400),
        ("v1beta1", "soon", DEFAULT_NODE_STARTUP_SECONDS),  # the API server would refuse it
        ("v1beta2", -5, DEFAULT_NODE_STARTUP_SECONDS),
        ("v1beta2", 2**62, DEFAULT_NODE_STARTUP_SECONDS),  # no int32: timedelta would overflow
        ("v1beta1", "2562047h47m16s", 9223372036),
    ],
)
def test_node_startup_timeout(generation: str, written: Any, seconds: float) -> None:
    obj = health_check(generation, NAMESPACE, "w", "prod", {"matchLabels": {"a": "b"}})
    if written is not None:
        if generation == "v1beta2":
            obj["spec"]["checks"]["nodeStartupTimeoutSeconds"] = written
        else:
            obj["spec"]["nodeStartupTimeout"] = written
    assert read(obj).node_startup_seconds == seconds


def test_the_cluster_name_label_is_the_checks_own() -> None:
    """The controller sets cluster-name=spec.clusterName over whatever the selector says."""
    elsewhere = read(
        health_check(
            "v1beta2", NAMESPACE, "w", "prod",
            {"matchLabels": {POOL_LABEL: "w", "cluster.x-k8s.io/cluster-name": "other"}},
        )
    )  # fmt: skip
    assert elsewhere.selects({POOL_LABEL: "w", "cluster.x-k8s.io/cluster-name": "prod"})
    assert not elsewhere.selects({POOL_LABEL: "w", "cluster.x-k8s.io/cluster-name": "other"})
    assert not elsewhere.selects({POOL_LABEL: "w"})


@pytest.mark.parametrize(
    ("selector", "selected"),
    [
        ({"matchExpressions": [{"key": "role", "operator": "In", "values": ["gpu", "cpu"]}]}, True),
        ({"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["gpu"]}]}, False),
        ({"matchExpressions": [{"key": "role", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]}, True),
        # LabelSelectorAsSelector refuses these, and the check then selects nothing.
        ({"matchExpressions": [{"key": "role", "operator": "In", "values": []}]}, False),
        ({"matchExpressions": [{"key": "spot", "operator": "NotIn"}]}, False),
        ({"matchExpressions": [{"key": "role", "operator": "Exists", "values": ["gpu"]}]}, False),
        ({"matchExpressions": [{"key": "role", "operator": "Matches", "values": ["g.*"]}]}, False),
        ({"matchLabels": ["role", "gpu"]}, False),
        ({"matchLabels": {"role": {"gpu": True}}}, False),
        # An empty selector (the webhook refuses it) is everything of the Cluster.
        ({}, True),
    ],
)
def test_selectors_select_as_the_controller_does(selector: Obj, selected: bool) -> None:
    check = read(health_check("v1beta2", NAMESPACE, "w", "prod", selector))
    labels = {"role": "gpu", "cluster.x-k8s.io/cluster-name": "prod"}
    assert check.selects(labels) is selected


def test_pod_disruption_budget_selectors_share_the_stricter_rules() -> None:
    """One selector reader for budgets and checks: NotIn without values selects nothing."""
    assert not selector_matches({"matchExpressions": [{"key": "a", "operator": "NotIn"}]}, {})


# -- describe ----------------------------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_check_of_the_pools_machines(generation: str) -> None:
    objects = scenario(
        "azure-vmss",
        generation,
        health_checked("vmss-workers", "prod", {"vmss-workers-2": AGO(14)}),
    )
    pool = only_pool(objects)
    assert pool.health_checks is not None
    [found] = pool.health_checks
    assert found.machines == ("vmss-workers-0", "vmss-workers-1", "vmss-workers-2")
    assert found.template_matches
    [mark] = found.marked
    assert (mark.machine, mark.unhealthy, mark.waiting, mark.deleting) == (
        "vmss-workers-2",
        True,
        True,
        False,
    )
    assert mark.health is not None
    assert mark.health.reason == "UnhealthyNode"


def test_which_checks_belong_to_a_pool() -> None:
    """Only checks in the pool's namespace, of its Cluster, whose selector takes some of its
    Machines: here one by a label only two of the three Machines carry."""
    selector = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}]}

    def label_two(objects: list[Obj]) -> None:
        for name in ("vmss-workers-0", "vmss-workers-1"):
            find(objects, "Machine", name)["metadata"]["labels"]["tier"] = "frontend"

    objects = scenario(
        "azure-vmss",
        "v1beta2",
        label_two,
        add(
            health_check("v1beta2", NAMESPACE, "frontend", "prod", selector),
            health_check("v1beta2", "elsewhere", "other-ns", "prod", {}),
            health_check("v1beta2", NAMESPACE, "other-cluster", "staging", {}),
            health_check("v1beta2", NAMESPACE, "other-pool", "prod", {"matchLabels": {POOL_LABEL: "x"}}),
        ),
    )  # fmt: skip
    checks = only_pool(objects).health_checks
    assert checks is not None
    assert [(c.check.name, c.machines, c.template_matches) for c in checks] == [
        ("frontend", ("vmss-workers-0", "vmss-workers-1"), False)
    ]


def summary(objects: list[Obj], capi: CapiVersion = V1_14) -> str:
    description, snapshot = described(objects)
    found = tuple(diagnose(description, snapshot, capi, Thresholds()))
    text = render_tree(description, TreeOptions(NOW, Palette(False), findings=found))
    return " ".join(text.split())


def test_describe_says_what_each_check_does() -> None:
    objects = scenario(
        "azure-vmss",
        "v1beta2",
        add(
            health_check(
                "v1beta2", NAMESPACE, "vmss-workers-unhealthy", "prod",
                {"matchLabels": {POOL_LABEL: "vmss-workers"}}, max_unhealthy="40%", startup=0,
                status=checked_status("v1beta2", ["vmss-workers-0"], 0, 0, remediation_allowed=False),
            ),
            health_check(
                "v1beta2", NAMESPACE, "reboot", "prod", {"matchLabels": {POOL_LABEL: "vmss-workers"}},
                node_conditions=(), unhealthy_range="[1-2]",
                template=("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3RemediationTemplate", "reboot"),
            ),
        ),
        marked("vmss-workers-2", AGO(14)),
    )  # fmt: skip
    text = summary(objects)
    assert (
        "Health checks: MachineHealthCheck reboot: 3 of 3 Machines; vmss-workers-2 unhealthy for "
        "14m (UnhealthyNode), waiting for remediation; checks no Node after 10m; external "
        "remediation (Metal3RemediationTemplate reboot) while [1-2] unhealthy "
        "MachineHealthCheck vmss-workers-unhealthy: 3 of 3 Machines; vmss-workers-2 unhealthy "
        "for 14m (UnhealthyNode), waiting for remediation; checks Node Ready=False 5m, "
        "Ready=Unknown 5m, no Node startup timeout; remediation left to the Machine's owner (the "
        "MachinePool) while at most 40% unhealthy; held back now (TooManyUnhealthy)"
    ) in text


def test_a_pool_without_machines_cannot_be_checked() -> None:
    """AWSMachinePool without MachinePool Machines: a check on its template's labels selects
    nothing, and describe says why; the rule stays silent (there is no Machine to remediate)."""
    selector = {"matchLabels": {"node-role.kubernetes.io/worker": ""}}
    objects = scenario(
        "aws-asg", "v1beta2", add(health_check("v1beta2", NAMESPACE, "workers", "prod", selector))
    )
    text = summary(objects)
    assert (
        "Health checks: MachineHealthCheck workers selects the template's labels, but checks "
        "Machines only: this pool has no MachinePool Machines, so its Nodes are not checked"
    ) in text
    assert findings(objects) == []


def test_without_any_check_describe_adds_nothing() -> None:
    objects = scenario("azure-vmss", "v1beta2")
    assert only_pool(objects).health_checks == ()
    assert "Health checks" not in summary(objects)


@pytest.mark.parametrize("generation", GENERATIONS)
def test_describe_json(generation: str) -> None:
    objects = scenario(
        "azure-vmss",
        generation,
        health_checked("vmss-workers", "prod", {"vmss-workers-2": AGO(14)}),
    )
    document = describe_document(described(objects)[0])
    jsonschema.validate(document, SCHEMA)
    [check] = document["clusters"][0]["machinePools"][0]["healthChecks"]
    assert check["name"] == "vmss-workers-unhealthy"
    assert check["apiVersion"] == f"cluster.x-k8s.io/{generation}"
    assert check["checks"] == {
        "nodeStartupTimeoutSeconds": 600,
        "unhealthyNodeConditions": [
            {"type": "Ready", "status": "False", "timeoutSeconds": 300},
            {"type": "Ready", "status": "Unknown", "timeoutSeconds": 300},
        ],
        "unhealthyMachineConditions": [],
    }
    assert check["remediation"] == {
        "unhealthyLessThanOrEqualTo": None,
        "unhealthyInRange": None,
        "templateRef": None,
    }
    [mark] = check["marked"]
    assert mark["machine"] == "vmss-workers-2"
    assert mark["healthCheckSucceeded"]["reason"] == "UnhealthyNode"
    assert mark["ownerRemediated"]["status"] == "False"
    # The v1beta2 set is read first, whichever API version the Machine came in.
    assert mark["ownerRemediated"]["generation"] == "v1beta2"


def test_hostile_values_are_bounded_and_escaped() -> None:
    check = health_check(
        "v1beta2", NAMESPACE, "evil\x1b]0;pwned\x07", "prod", {"matchLabels": {POOL_LABEL: "vmss-workers"}},
        node_conditions=tuple((f"C{i}\x1b[31m", "True", i) for i in range(500)),
    )  # fmt: skip
    check["spec"]["checks"]["unhealthyNodeConditions"].append("not a condition")
    check["spec"]["remediation"] = {"triggerIf": {"unhealthyLessThanOrEqualTo": ["40%"]}}
    check["status"] = {"expectedMachines": -3, "currentHealthy": "many", "conditions": "broken"}
    objects = scenario("azure-vmss", "v1beta2", add(check))
    pool = only_pool(objects)
    assert pool.health_checks is not None
    [found] = pool.health_checks
    assert len(found.check.node_conditions) == 100
    assert found.check.max_unhealthy is None
    assert found.check.expected_machines is None
    text = summary(objects)
    assert "\x1b" not in text
    assert "and 97 more" in text
    jsonschema.validate(describe_document(described(objects)[0]), SCHEMA)


# -- MP2601 ------------------------------------------------------------------------------------


def checked(*changes: Callable[[list[Obj]], None], generation: str = "v1beta2") -> list[Obj]:
    return scenario("azure-vmss", generation, health_checked("vmss-workers", "prod", {}), *changes)


@pytest.mark.parametrize(
    ("capi", "severity", "says"),
    [
        (V1_14, Severity.WARNING, "Cluster API v1.14.2 does not remediate MachinePool Machines: "
         "nothing is going to replace it"),
        (V1_10, Severity.WARNING, "Cluster API v1.10.10 does not remediate"),
        (UNKNOWN, Severity.WARNING, "no Cluster API release up to v1.14 remediates MachinePool "
         "Machines: unless this one is newer (its version is unknown: the "
         "capi-controller-manager Deployment was not read), nothing is going to replace it"),
        (CapiVersion.parse("v1.15.0", "--capi-version"), Severity.WARNING,
         "newer than the releases read (up to v1.14, none of which remediates MachinePool "
         "Machines): whether it carries PR #11392, which does, is not known here"),
    ],
)  # fmt: skip
def test_an_unhealthy_machine_nobody_replaces(
    capi: CapiVersion, severity: Severity, says: str
) -> None:
    [finding] = findings(checked(marked("vmss-workers-2", AGO(10))), capi)
    assert finding.severity is severity
    assert finding.message.startswith(
        "MachineHealthCheck vmss-workers-unhealthy selects 3 of 3 Machines and marks "
        "vmss-workers-2 unhealthy, waiting for remediation for 10m; "
    )
    assert says in finding.message
    assert finding.instances == ("vmss-workers-2",)
    assert finding.refs == (
        "kubernetes-sigs/cluster-api#11392",
        "kubernetes-sigs/cluster-api#13065",
    )


@pytest.mark.parametrize("generation", GENERATIONS)
def test_marked_longer_than_a_deletion_takes_is_an_error_only_at_a_known_version(
    generation: str,
) -> None:
    objects = checked(marked("vmss-workers-2", AGO(180)), generation=generation)
    [known] = findings(objects, V1_14)
    assert known.severity is Severity.ERROR
    assert "waiting for remediation for 3h" in known.message
    [unknown] = findings(objects, UNKNOWN)
    assert unknown.severity is Severity.WARNING


def test_every_check_of_the_pool_is_told_apart() -> None:
    """Two checks that select the same Machines are a finding each."""
    other = health_check(
        "v1beta2", NAMESPACE, "ready-only", "prod", {"matchLabels": {POOL_LABEL: "vmss-workers"}}
    )
    found = findings(checked(add(other), marked("vmss-workers-2", AGO(5))))
    assert [(f.severity, f.message.split(" selects")[0]) for f in found] == [
        (Severity.WARNING, "MachineHealthCheck ready-only"),
        (Severity.WARNING, "MachineHealthCheck vmss-workers-unhealthy"),
    ]


def test_with_nothing_marked_it_is_info() -> None:
    [finding] = findings(checked())
    assert finding.severity is Severity.INFO
    assert finding.message == (
        "MachineHealthCheck vmss-workers-unhealthy selects 3 of 3 Machines, but Cluster API "
        "v1.14.2 does not remediate MachinePool Machines: one it finds unhealthy is marked, "
        "never replaced"
    )
    assert finding.instances == ()


def test_a_machine_already_deleting_is_on_its_way() -> None:
    def deleting(objects: list[Obj]) -> None:
        find(objects, "Machine", "vmss-workers-2")["metadata"]["deletionTimestamp"] = AGO(1)

    [finding] = findings(checked(marked("vmss-workers-2", AGO(30)), deleting))
    assert finding.severity is Severity.INFO


def test_a_machine_that_recovered_still_waits_for_remediation() -> None:
    """The check never clears OwnerRemediated: a Machine that is healthy again stays marked."""

    def recovered(objects: list[Obj]) -> None:
        machine = find(objects, "Machine", "vmss-workers-2")
        for cond in machine["status"]["conditions"]:
            if cond["type"] == "HealthCheckSucceeded":
                cond.update(status="True", reason="HealthCheckSucceeded", message="")

    [finding] = findings(checked(marked("vmss-workers-2", AGO(30)), recovered))
    assert "vmss-workers-2 waiting for remediation for 30m" in finding.message
    assert finding.severity is Severity.ERROR


def test_remediation_held_back_is_said() -> None:
    def held(objects: list[Obj]) -> None:
        check = find(objects, "MachineHealthCheck", "vmss-workers-unhealthy")
        check["status"] = checked_status("v1beta2", ["vmss-workers-2"], 0, 0, False)

    [finding] = findings(checked(marked("vmss-workers-2", AGO(3), waiting=False), held))
    assert finding.message.endswith(
        "nothing is going to replace it (the check also holds remediation back: TooManyUnhealthy)"
    )
    assert "vmss-workers-2 unhealthy for 3m" in finding.message


def test_mp1602_is_left_to_the_check_that_marked_the_machine() -> None:
    """MP1602 names only the marked Machines no check read here selects (one deleted since, or
    changed): here the check selects the frontend tier, which vmss-workers-0 is not in."""
    selector = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}]}

    def frontend(objects: list[Obj]) -> None:
        find(objects, "Machine", "vmss-workers-2")["metadata"]["labels"]["tier"] = "frontend"

    objects = scenario(
        "azure-vmss",
        "v1beta2",
        frontend,
        add(health_check("v1beta2", NAMESPACE, "frontend", "prod", selector)),
        marked("vmss-workers-2", AGO(5)),
        marked("vmss-workers-0", AGO(5)),
    )
    description, snapshot = described(objects)
    by_code = {f.code: f for f in diagnose(description, snapshot, V1_14, Thresholds())}
    assert by_code["MP2601"].instances == ("vmss-workers-2",)
    assert by_code["MP1602"].instances == ("vmss-workers-0",)


def test_an_external_remediation_template_is_not_this_rules_business() -> None:
    objects = scenario(
        "azure-vmss",
        "v1beta2",
        health_checked("vmss-workers", "prod", {"vmss-workers-2": AGO(60)}, template=True),
    )
    assert findings(objects) == []


def test_the_rows_of_the_marked_machines_carry_the_code() -> None:
    text = summary(checked(marked("vmss-workers-2", AGO(5))))
    # The message wraps inside the tree: its rails are not part of it.
    assert (
        "(KubeletNotReady); VMSS instance 2 in westeurope-3 [MP0102, MP1102, MP2601]"
        in " ".join(text.replace("│", " ").split())
    )


# -- offline -----------------------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "azure-vmss.yaml"


def test_a_dump_carries_its_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    objects = yaml.safe_load(EXAMPLE.read_text())["items"]
    health_checked("vmss-workers", "prod", {"vmss-workers-2": "2026-11-29T14:46:00Z"})(objects)
    dump = tmp_path / "mgmt.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    now = ("--now", "2026-11-29T15:00:00Z", "--capi-version", "v1.14.2")
    shown = run_cli(capsys, "describe", "-f", str(dump), *now, "-o", "json")
    [pool] = json.loads(shown.out)["clusters"][0]["machinePools"]
    assert [c["name"] for c in pool["healthChecks"]] == ["vmss-workers-unhealthy"]
    judged = run_cli(capsys, "diagnose", "-f", str(dump), *now, "-o", "json")
    assert "MP2601" in {f["code"] for f in json.loads(judged.out)["findings"]}


def test_a_dump_without_checks_says_nothing_of_them(capsys: pytest.CaptureFixture[str]) -> None:
    """A kind left out of `kubectl get` proves nothing: null, not an empty list."""
    shown = run_cli(capsys, "describe", "-f", str(EXAMPLE), "-o", "json")
    [pool] = json.loads(shown.out)["clusters"][0]["machinePools"]
    assert pool["healthChecks"] is None


def test_golden(golden) -> None:
    objects = scenario(
        "azure-vmss", "v1beta2", health_checked("vmss-workers", "prod", {"vmss-workers-2": AGO(14)})
    )
    golden("describe/azure-vmss-healthcheck.txt", summary_text(objects))


def summary_text(objects: list[Obj]) -> str:
    description, snapshot = described(objects)
    found = tuple(diagnose(description, snapshot, V1_14, Thresholds()))
    return render_tree(description, TreeOptions(NOW, Palette(False), findings=found))


# -- the example and docs/describe.md ------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]
CHECKED_EXAMPLE = ROOT / "examples" / "healthchecks" / "azure-vmss.yaml"
DOCS_NOW = "2026-11-29T15:00:00Z"


def checked_example() -> str:
    """examples/azure-vmss.yaml with what a MachineHealthCheck adds, and the core controller's
    Deployment (its image tag is the Cluster API version)."""
    objects = SCENARIOS["azure-vmss"]("v1beta2", NAMESPACE)
    health_checked("vmss-workers", "prod", {"vmss-workers-2": "2026-11-29T14:46:00Z"})(objects)
    objects.append(core_manager("capi-system"))
    header = (
        "# examples/azure-vmss.yaml with a MachineHealthCheck of the pool's Machines, which marked\n"
        "# vmss-workers-2, and the capi-controller-manager Deployment (v1.14.2).\n"
        f"# kubectl machinepool describe -f examples/healthchecks/azure-vmss.yaml --now {DOCS_NOW}\n"
    )
    items = {
        "apiVersion": "v1",
        "kind": "List",
        "items": objects,
        "metadata": {"resourceVersion": ""},
    }
    return header + yaml.safe_dump(items, sort_keys=False)


def test_the_example_is_the_scenario(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--update-golden"):
        CHECKED_EXAMPLE.parent.mkdir(exist_ok=True)
        CHECKED_EXAMPLE.write_text(checked_example())
    assert CHECKED_EXAMPLE.read_text() == checked_example(), "run pytest --update-golden"


def excerpt_of(block: str, output: str) -> bool:
    """Every line of the block, in order, is a line of the output ("…" stands for the rest)."""
    lines = iter(output.splitlines())
    return all(
        any(line == shown for line in lines) for shown in block.splitlines() if shown != "  …"
    )


def test_docs_show_what_the_commands_print(capsys: pytest.CaptureFixture[str]) -> None:
    dump = str(CHECKED_EXAMPLE)
    described = run_cli(capsys, "describe", "-f", dump, "--now", DOCS_NOW)
    judged = run_cli(capsys, "diagnose", "-f", dump, "--now", DOCS_NOW)
    tree, diagnosis = fenced(section(page("describe"), "## describe: MachineHealthChecks"))
    assert excerpt_of(tree, described.out), described.out
    assert excerpt_of(diagnosis, judged.out), judged.out
