"""list's kubectl output conventions against the real kubectl, on the same API server.

`list -o jsonpath=…`, `-o custom-columns=…` and `--sort-by` must print what
`kubectl get machinepools.cluster.x-k8s.io` prints for the same template, byte for byte: the
built kubectl runs against the test API server in the same namespace.
"""

from __future__ import annotations

import copy
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.controlplane import ControlPlane, binaries_dir
from support.management import ManagementCluster, management_cluster
from support.objects import list_scenario, machine_pool
from support.run import Lines, run_cli, start_plugin

RESOURCE = "machinepools.cluster.x-k8s.io"
GENERATIONS = ["v1beta2", "v1beta1"]
# Per pool: labels (env is missing on gke-default; order is a number kubectl compares as a
# quantity: 9 < 10 < 100, which no string order gives) and an annotation Go's JSON escapes.
LABELS = {
    "asg-workers": {"env": "prod", "team": "infra", "order": "10"},
    "vmss-workers": {"env": "dev", "order": "9"},
    "gke-default": {"order": "100"},
    "pending-pool": {"env": "prod", "tier": "gpu"},
}
ANNOTATIONS = {"asg-workers": {"example.com/note": "a<b & c>d \u00e9"}}

Compare = Callable[..., tuple[str, str]]


@pytest.fixture(scope="module", params=GENERATIONS)
def pools(request: pytest.FixtureRequest, control_plane: ControlPlane) -> list[str]:
    """Four pools of varied labels, replicas and phases, created once per generation (the tests
    only read them): the flags that reach them."""
    mgmt = management_cluster(control_plane, request.param)
    namespace = mgmt.new_namespace()
    objects = list_scenario(mgmt.generation, namespace)
    for obj in objects:
        name = obj["metadata"]["name"]
        if obj["kind"] == "MachinePool":
            obj["metadata"]["labels"].update(LABELS[name])
            obj["metadata"]["annotations"] = ANNOTATIONS.get(name, {})
    mgmt.create(objects)
    # The Cluster's kubeconfig Secret: list reads its Nodes (this same server's) without a word.
    mgmt.workload_kubeconfig_secret(namespace, "prod")
    return ["--kubeconfig", str(mgmt.kubeconfig), "-n", namespace]


@pytest.fixture
def compare(pools: list[str], capsys: pytest.CaptureFixture[str]) -> Compare:
    """compare(*args) runs `list ARGS` and `kubectl get machinepools ARGS` on the pools and
    gives both standard outputs."""
    config = pools

    def both(*args: str) -> tuple[str, str]:
        ours = run_cli(capsys, "list", *config, *args)
        theirs = subprocess.run(
            [str(binaries_dir() / "kubectl"), *config, "get", RESOURCE, *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (ours.code, ours.err) == (0, ""), ours.err
        assert (theirs.returncode, theirs.stderr) == (0, ""), theirs.stderr
        return ours.out, theirs.stdout

    return both


TEMPLATES = [
    "{.items[*].metadata.name}",
    "{.items[0].spec.replicas} {.items[-1].metadata.name}",
    "{.items[1:3].metadata.name}|{.items[::2].metadata.name}|{.items[-2:].metadata.name}",
    "{.items[0,2].metadata.name}",
    "{.items[*]['metadata.name', 'spec.replicas']}",
    '{.items[?(@.status.phase=="Running")].metadata.name}',
    '{.items[?(@.status.phase != "Running")].metadata.name}',
    "{.items[?(@.spec.replicas>2)].metadata.name} {.items[?(@.spec.replicas<=2)].spec.replicas}",
    "{.items[?(@.metadata.labels.env)].metadata.name}",
    '{range .items[*]}{.metadata.name}{"\\t"}{.status.replicas}{"\\n"}{end}',
    "{range .items[*]}{.metadata.name}: {range .spec.providerIDList[*]}[{@}]{end}{'\\n'}{end}",
    "{.items[*]..clusterName}",
    "{.items[0].metadata.labels}",
    "{.items[0].spec.failureDomains} {.items[*].metadata.finalizers}",
    "{.items[0].metadata.annotations}",
    "{.items[0].spec.template.spec.infrastructureRef}",
    "{.items[*].spec.nothing}before {.items[0].metadata.nothing}after",
    "{.kind} {.apiVersion} {.metadata} {$.kind} {@.items[0].kind}",
    "{.items[0].metadata.labels.cluster\\.x-k8s\\.io/cluster-name}",
    "{.items[*].status.nodeRefs[*].name}",
    "{.items[0].metadata.name.*}",
    'text only, {"{"} and a literal',
    "{range .items[*]}{.metadata.name}{end}{.kind}",
    # kubectl's quirks: a range never ended runs what follows it once more, over the List; an
    # existence filter whose path fails (a string indexed) keeps the item.
    "{range .items[*]}[{.metadata.name}]",
    "{.items[?(@.metadata.name[0])].spec.replicas}",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_jsonpath_prints_what_kubectl_prints(compare: Compare, template: str) -> None:
    ours, theirs = compare("-o", f"jsonpath={template}")
    assert ours == theirs


@pytest.mark.parametrize(
    "spec",
    [
        "NAME:.metadata.name,REPLICAS:.spec.replicas,PHASE:.status.phase",
        "NAME:metadata.name,LABELS:{.metadata.labels},FD:{.spec.failureDomains}",
        "NAME:.metadata.name,ENV:.metadata.labels.env,NODES:.status.nodeRefs[*].name",
        "A:.metadata.name,B:.spec.replicas,C:.metadata.labels.tier",
        "NAME:.metadata.name,REF:.spec.template.spec.infrastructureRef",
    ],
)
def test_custom_columns_print_what_kubectl_prints(compare: Compare, spec: str) -> None:
    ours, theirs = compare("-o", f"custom-columns={spec}")
    assert ours == theirs
    ours, theirs = compare("-o", f"custom-columns={spec}", "--no-headers")
    assert ours == theirs


@pytest.mark.parametrize(
    "path", [".metadata.name", "{.spec.replicas}", "status.replicas", ".metadata.labels.order"]
)
def test_sort_by_orders_as_kubectl_orders(compare: Compare, path: str) -> None:
    ours, theirs = compare("-o", "name", f"--sort-by={path}")
    assert ours == theirs
    ours, theirs = compare("-o", "jsonpath={.items[*].metadata.name}", f"--sort-by={path}")
    assert ours == theirs
    ours, theirs = compare("-o", "custom-columns=N:.metadata.name", f"--sort-by={path}")
    assert ours == theirs


def test_label_columns_and_labels_as_kubectl_heads_and_fills_them(compare: Compare) -> None:
    ours, theirs = compare(
        "-L",
        "env",
        "-L",
        "team,cluster.x-k8s.io/cluster-name",
        "--show-labels",
        "--sort-by=.metadata.name",
    )
    our_rows, their_rows = ([line.split() for line in text.splitlines()] for text in (ours, theirs))
    assert our_rows[0][-4:] == their_rows[0][-4:] == ["ENV", "TEAM", "CLUSTER-NAME", "LABELS"]
    # The last cell of each row: every label, k=v sorted by key, as kubectl writes them.
    assert [row[-1] for row in our_rows] == [row[-1] for row in their_rows]
    asg = next(row for row in our_rows if row[0] == "asg-workers")
    assert asg[-4:-1] == ["prod", "infra", "prod"]


@pytest.mark.parametrize(
    ("template", "parses"),
    [
        ("{.items[0}", False),
        ("{.items[0].x == 1}", False),
        ('{.items[?(@.x == "a)]}', False),
        ("{range .items[*]}{.x}{end}{end}", True),
        ("{.items[9]}", True),
        ("{.items[0].metadata[0]}", True),
    ],
)
def test_errors_are_kubectls(mgmt: ManagementCluster, capsys, template: str, parses: bool) -> None:
    """A template kubectl cannot parse or run: the same words (kubectl's execution errors go on
    to dump the whole object given to the template, which ours leave out), nothing printed."""
    namespace = mgmt.new_namespace()
    mgmt.create(list_scenario(mgmt.generation, namespace))
    mgmt.workload_kubeconfig_secret(namespace, "prod")
    config = ["--kubeconfig", str(mgmt.kubeconfig), "-n", namespace, "-o", f"jsonpath={template}"]
    ours = run_cli(capsys, "list", *config)
    theirs = subprocess.run(
        [str(binaries_dir() / "kubectl"), "get", RESOURCE, *config],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (ours.out, theirs.stdout) == ("", "")
    assert ours.code == theirs.returncode == 1
    said, kubectl_said = ours.err.splitlines()[0], theirs.stderr.splitlines()[0]
    if parses:
        prefix = f'error: error executing jsonpath "{template}": '
        assert said.startswith(prefix)
        assert (
            kubectl_said
            == f"{prefix}Error executing template: {said.removeprefix(prefix)}. "
            + ("Printing more information for debugging the template:")
        )
    else:
        assert said == kubectl_said


def test_an_empty_namespace_prints_what_kubectl_prints(mgmt: ManagementCluster, capsys) -> None:
    """No pools: custom columns print their header alone, a template runs on an empty List."""
    namespace = mgmt.new_namespace()
    config = ["--kubeconfig", str(mgmt.kubeconfig), "-n", namespace]
    for output in ("custom-columns=NAME:.metadata.name", "jsonpath={.items}|{.kind}"):
        ours = run_cli(capsys, "list", *config, "-o", output, "--sort-by=.metadata.name")
        theirs = subprocess.run(
            [str(binaries_dir() / "kubectl"), *config, "get", RESOURCE, "-o", output],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (ours.code, ours.out, ours.err) == (0, theirs.stdout, theirs.stderr)
        assert ours.out in ("NAME\n", "[]|List")


def test_watch_prints_the_changed_row_of_a_sorted_table(v1beta2, tmp_path: Path) -> None:
    """-w with --sort-by and -L: the row printed for a change is the changed pool's own."""
    namespace = v1beta2.new_namespace()
    pools = [
        machine_pool("v1beta2", name, namespace, "prod", infra_kind="AWSMachinePool", phase=phase)
        for name, phase in (("a-pool", "Running"), ("b-pool", "ScalingUp"))
    ]
    for pool, rank in zip(pools, ("2", "1"), strict=True):
        pool["metadata"]["labels"]["rank"] = rank
    v1beta2.create(pools)
    args = ["list", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig), "-w"]
    with Lines(
        start_plugin([*args, "--sort-by=.metadata.labels.rank", "-L", "rank"], tmp_path)
    ) as lines:
        table = list(lines.until("a-pool"))
        changed = copy.deepcopy(pools[0])
        changed["status"]["phase"] = "Failed"
        v1beta2.api.set_status(changed)
        row = lines.until("Failed")
        lines.plugin.send_signal(signal.SIGINT)
        _, err = lines.end(timeout=30)
    assert [line.split()[0] for line in table] == ["NAME", "b-pool", "a-pool"]
    assert row[-1].split()[0] == "a-pool"
    assert row[-1].split()[-1] == "2"  # its RANK
    assert "Traceback" not in err
