"""Wrong input fails loud: -f input that holds no MachinePool, names that are not there, and
flag values that are no value of theirs, in every command that reads pools.

A gate (diagnose --fail-on, rollout status, a named pool or Cluster) that is given nothing to
judge fails, naming the files and what they held; a view without a verdict keeps kubectl's
"No resources found" and exit 0, after a warning that says what the files held instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.run import run_cli

pytestmark = pytest.mark.usefixtures("no_cluster")

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = str(ROOT / "examples")
NOW = "2026-11-29T15:00:00Z"
HINT = (
    "hint: -f reads `kubectl get machinepools,machines,<infra kinds>,... -o yaml` output or an "
    "export (kubectl machinepool export); see docs/describe.md"
)

# What `kubectl get deployment web -o yaml` writes, trimmed: no MachinePool anywhere.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  uid: 6f1d3c1e-2b7a-4d39-9b0e-8f1a2c3d4e5f
  creationTimestamp: "2026-11-02T08:12:44Z"
  generation: 3
  managedFields:
  - apiVersion: apps/v1
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-11-02T08:12:44Z"
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
status:
  availableReplicas: 2
  conditions:
  - type: Available
    status: "True"
    reason: MinimumReplicasAvailable
    lastUpdateTime: "2026-11-02T08:13:10Z"
    lastTransitionTime: "2026-11-02T08:13:10Z"
"""
SERVICES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: default}
- apiVersion: v1
  kind: Service
  metadata: {name: api, namespace: default}
- apiVersion: networking.k8s.io/v1
  kind: NetworkPolicy
  metadata: {name: deny-all, namespace: default}
- apiVersion: networking.k8s.io/v1
  kind: NetworkPolicy
  metadata: {name: allow-web, namespace: default}
"""


@pytest.fixture
def deployment(tmp_path: Path) -> str:
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT)
    return str(path)


def lines(text: str) -> list[str]:
    return text.splitlines()


# -- -f input without a MachinePool --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("diagnose", "--fail-on", "warning"),
        ("diagnose", "web"),
        ("describe", "web"),
        ("describe", "--cluster", "prod"),
        ("events", "web"),
        ("diff-metadata", "web"),
        ("rollout", "status"),
        ("list", "web"),
    ],
)
def test_a_gate_given_no_machinepool_fails_naming_what_the_file_held(
    capsys: pytest.CaptureFixture[str], deployment: str, args: tuple[str, ...]
) -> None:
    result = run_cli(capsys, *args, "-f", deployment, "--now", NOW)
    assert result.code == 1, result
    assert lines(result.err) == [
        f"error: no MachinePool in {deployment} (it holds 1 Deployment)",
        HINT,
    ]
    assert result.out == ""


@pytest.mark.parametrize("command", ["describe", "diagnose", "list", "diff-metadata"])
def test_a_view_of_no_machinepool_says_so_and_keeps_kubectl_s_no_resources_found(
    capsys: pytest.CaptureFixture[str], deployment: str, command: str
) -> None:
    result = run_cli(capsys, command, "-f", deployment, "--now", NOW)
    assert result.code == 0
    said = f"warning: no MachinePool in {deployment} (it holds 1 Deployment)"
    assert said in lines(result.err)
    assert lines(result.err)[-1] == "No resources found."


def test_events_of_no_machinepool_says_so_then_no_events(
    capsys: pytest.CaptureFixture[str], deployment: str
) -> None:
    result = run_cli(capsys, "events", "-f", deployment, "--now", NOW)
    assert (result.code, result.out) == (0, "")
    assert lines(result.err) == [
        f"warning: no MachinePool in {deployment} (it holds 1 Deployment)",
        "No events found.",
    ]


def test_the_note_is_in_the_document_too(capsys: pytest.CaptureFixture[str], deployment: str):
    result = run_cli(capsys, "describe", "-f", deployment, "--now", NOW, "-o", "json")
    assert result.code == 0
    assert json.loads(result.out)["notes"] == [
        f"no MachinePool in {deployment} (it holds 1 Deployment)"
    ]


def test_several_files_and_kinds_are_counted(
    capsys: pytest.CaptureFixture[str], deployment: str, tmp_path: Path
) -> None:
    services = tmp_path / "services.yaml"
    services.write_text(SERVICES)
    result = run_cli(
        capsys,
        "diagnose",
        "-f",
        deployment,
        "-f",
        str(services),
        "--now",
        NOW,
        "--fail-on",
        "error",
    )
    assert result.code == 1
    assert lines(result.err)[0] == (
        f"error: no MachinePool in {deployment} and {services} (they hold 2 Services, "
        "2 NetworkPolicies and 1 Deployment)"
    )


def test_an_empty_directory_holds_no_object(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    result = run_cli(capsys, "diagnose", "-f", str(tmp_path), "--fail-on", "warning")
    assert result.code == 1
    assert lines(result.err)[0] == f"error: no MachinePool in {tmp_path} (it holds no object)"


def test_a_gate_whose_scope_leaves_every_pool_out_fails(capsys: pytest.CaptureFixture[str]):
    """examples/ holds four pools in capi-prod: --fail-on judging none of them must not pass."""
    gate = run_cli(
        capsys, "diagnose", "-f", EXAMPLES, "-n", "elsewhere", "--now", NOW, "--fail-on", "warning"
    )
    assert gate.code == 1
    assert lines(gate.err) == [
        f"error: no MachinePool in {EXAMPLES} is selected by -n elsewhere (it holds 4 "
        "MachinePools, in capi-prod)",
        "hint: a verdict on no pool passes nothing: change the scope (-A, -n, -l, --cluster)",
    ]
    view = run_cli(capsys, "diagnose", "-f", EXAMPLES, "-n", "elsewhere", "--now", NOW)
    assert (view.code, view.err) == (0, "No resources found in elsewhere namespace.\n")
    selector = run_cli(capsys, "rollout", "status", "-f", EXAMPLES, "-l", "tier=none", "--now", NOW)
    assert selector.code == 1
    assert "is selected by -l tier=none (it holds 4 MachinePools" in selector.err


# -- names that are not there --------------------------------------------------------------------

NAMED = [
    ("describe",),
    ("diagnose",),
    ("events",),
    ("diff-metadata",),
    ("rollout", "status"),
]


@pytest.mark.parametrize("command", NAMED)
def test_a_pool_that_is_not_there_is_not_found(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    result = run_cli(capsys, *command, "nope", "-f", EXAMPLES, "--now", NOW)
    assert result.code == 1
    assert lines(result.err) == ['error: machinepools.cluster.x-k8s.io "nope" not found']


@pytest.mark.parametrize("command", NAMED)
def test_a_cluster_that_is_not_there_is_not_found(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    result = run_cli(capsys, *command, "--cluster", "nope", "-f", EXAMPLES, "--now", NOW)
    assert result.code == 1
    assert lines(result.err)[-1] == 'error: clusters.cluster.x-k8s.io "nope" not found'


def test_events_print_the_pools_found_then_name_the_one_that_is_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run_cli(capsys, "events", "vmss-workers", "nope", "-f", EXAMPLES, "--now", NOW)
    assert result.code == 1
    assert "Node/vmss-workers-000002" in result.out
    assert lines(result.err) == ['error: machinepools.cluster.x-k8s.io "nope" not found']


def test_a_cluster_without_pools_is_no_resources_not_not_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        (ROOT / "examples" / "eks-managed.yaml").read_text()
        + "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n"
        "metadata: {name: empty, namespace: capi-prod}\n"
    )
    result = run_cli(capsys, "describe", "--cluster", "empty", "-f", str(dump), "--now", NOW)
    assert (result.code, lines(result.err)) == (0, ["No resources found."])


# -- flag values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error", "hint"),
    [
        (
            ("events", "--types", "warnin"),
            "error: invalid value 'warnin' for --types: 'warnin' is not an Event type",
            "hint: choose from Normal, Warning (a comma list, any case)",
        ),
        (
            ("events", "--types", "Warning,"),
            "error: invalid value 'Warning,' for --types: '' is not an Event type",
            "hint: choose from Normal, Warning (a comma list, any case)",
        ),
        (
            ("describe", "--show-conditions", "Foo", "-f", str(ROOT / "examples/azure-vmss.yaml")),
            "error: invalid value 'Foo' for --show-conditions: not a kind the tree shows",
            "hint: choose from all, Cluster, MachinePool, Machine, Node, AzureMachinePool, "
            "AzureMachinePoolMachine, KubeadmConfig (a comma list, any case), or an infra pool "
            "or machine kind docs/providers.md names",
        ),
    ],
)
def test_a_value_that_is_none_of_the_flag_s_is_refused_with_the_valid_ones(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], error: str, hint: str
) -> None:
    result = run_cli(capsys, *args, "--now", NOW)
    assert (result.code, result.out) == (2, "")
    assert lines(result.err) == [error, hint]


def test_fail_on_takes_its_severities_only(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_cli(capsys, "diagnose", "--fail-on", "warnin", "-f", EXAMPLES)
    assert result.code == 2
    assert "warning" in result.err
    assert "error" in result.err


def test_valid_values_are_taken_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    dump = str(ROOT / "examples" / "azure-vmss.yaml")
    events = run_cli(capsys, "events", "--types", "NORMAL,warning", "-f", dump, "--now", NOW)
    assert events.code == 0
    assert "NodeNotReady" in events.out
    kinds = "node,AZUREMACHINEPOOLMACHINE,OCIMachinePool"
    tree = run_cli(capsys, "describe", "--show-conditions", kinds, "-f", dump, "--now", NOW)
    assert tree.code == 0
    assert "MemoryPressure" in tree.out  # a Node condition, listed
    every = run_cli(capsys, "describe", "--show-conditions", "ALL", "-f", dump, "--now", NOW)
    assert every.code == 0
    assert every.out.count("MemoryPressure") == tree.out.count("MemoryPressure")


NAMED_AND_SELECTED = [
    ["list", "vmss-workers"],
    ["describe", "vmss-workers"],
    ["diagnose", "vmss-workers"],
    ["events", "vmss-workers"],
    ["diff-metadata", "vmss-workers"],
    ["rollout", "status", "vmss-workers", "-w=false"],
    ["fix", "vmss-workers"],
    ["delete-machine", "vmss-workers-1", "--pool", "vmss-workers", "--dry-run=client"],
]


@pytest.mark.parametrize("args", NAMED_AND_SELECTED, ids=" ".join)
def test_a_name_beside_a_selector_is_refused_as_kubectl_refuses_it(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """Both once ANDed: `describe vmss-workers -l nomatch=1` said the pool that is there was
    not found, and its hint named another pool."""
    result = run_cli(capsys, *args, "-l", "nomatch=1", "-f", EXAMPLES, "--now", NOW)
    assert result.code == 2, result.err
    assert result.err.startswith("error: name cannot be provided when a selector is specified")
    assert "not found" not in result.err


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["explain", ""], 1, "error: no rule ''"),
        (["explain", "--list", "MP0101"], 2, "error: --list lists every rule: it takes no CODE"),
    ],
)
def test_explain_does_not_drop_what_it_was_given(
    capsys: pytest.CaptureFixture[str], args: list[str], code: int, error: str
) -> None:
    """An empty CODE explained MP0001 (whose rule letter is empty) and --list dropped a CODE."""
    result = run_cli(capsys, *args)
    assert (result.code, result.out, result.err.splitlines()[0]) == (code, "", error)


@pytest.mark.parametrize(
    "args",
    [["upgrade", "vmss-workers", "--version", "v1.34.1"], ["rollout", "undo", "vmss-workers"]],
)
def test_a_timeout_for_a_rollout_not_followed_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    """--no-wait --timeout 5m was taken and the timeout ignored."""
    result = run_cli(capsys, *args, "--no-wait", "--timeout", "5m", "--yes")
    assert result.code == 2
    assert result.err.startswith(
        "error: --timeout bounds following the rollout, which --no-wait does not do"
    )
