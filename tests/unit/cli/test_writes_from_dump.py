"""The write commands on a dump (-f ... --dry-run=client): the plan the live command would make,
from the shipped examples and from an export of them, with what only a server answers said to
be unasked; refused in one line without --dry-run=client; and never a connection."""

from __future__ import annotations

import shlex
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from support.docs import ROOT, fenced, page, section
from support.run import Result, run_cli

from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.dump import load_dump

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = "2026-11-29T15:00:00Z"
HEADING = (
    f"Planned from {EXAMPLES} as at {NOW} (--now); preconditions and permissions are checked at "
    "write time, not here.\n"
)

# (golden file, command line, exit code): each write command on the examples, a refusal among
# them (the live client dry run exits 3 on the same plan).
PLANS = [
    ("upgrade/eks-default.txt", ["upgrade", "eks-default", "--version", "v1.34.1"], 0),
    ("upgrade/vmss-workers-refused.txt", ["upgrade", "vmss-workers", "--version", "v1.34.1"], 3),
    ("scale/vmss-workers.txt", ["scale", "vmss-workers", "--replicas", "5"], 0),
    ("scale/asg-workers-down.txt", ["scale", "asg-workers", "--replicas", "2"], 0),
    ("rollout-restart/vmss-workers.txt", ["rollout", "restart", "vmss-workers"], 0),
    ("rollout-restart/asg-workers-refused.txt", ["rollout", "restart", "asg-workers"], 3),
    ("rollout-pause/vmss-workers.txt", ["rollout", "pause", "vmss-workers"], 0),
    ("rollout-resume/vmss-workers.txt", ["rollout", "resume", "vmss-workers"], 0),
    ("delete-machine/vmss-workers-1.txt", ["delete-machine", "vmss-workers-1"], 0),
    (
        "delete-machine/vmss-workers-1-scale-down.txt",
        ["delete-machine", "vmss-workers-1", "--scale-down"],
        0,
    ),
]
COMMANDS = [
    ["upgrade", "eks-default", "--version", "v1.34.1"],
    ["scale", "vmss-workers", "--replicas", "5"],
    ["rollout", "restart", "vmss-workers"],
    ["rollout", "pause", "vmss-workers"],
    ["rollout", "resume", "vmss-workers"],
    ["delete-machine", "vmss-workers-1"],
]


def planned(capsys: pytest.CaptureFixture[str], args: list[str], *source: str) -> Result:
    return run_cli(capsys, *args, "-n", "capi-prod", *source, "--dry-run=client")


@pytest.mark.parametrize(("name", "args", "code"), PLANS, ids=[p[0] for p in PLANS])
def test_each_write_plans_from_the_examples(
    name: str, args: list[str], code: int, no_cluster: None, capsys, golden
) -> None:
    result = planned(capsys, args, "-f", str(EXAMPLES), "--now", NOW)
    assert result.code == code, result.err
    assert result.out.startswith(HEADING)
    golden(name, result.out.removeprefix(HEADING))
    if code == 3:
        assert result.err.startswith("error: refused: ")
        assert result.err.rstrip().endswith("nothing was written")


@pytest.mark.parametrize(
    "name", ["upgrade", "scale", "rollout-restart", "rollout-pause", "delete-machine"]
)
def test_each_write_command_page_shows_what_it_plans_from_an_export(
    name: str, no_cluster: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    (block,) = fenced(section(page(name), "## From an export"))
    command, _, shown = block.partition("\n")
    monkeypatch.chdir(ROOT)  # the page names examples/ as the repository holds it
    result = run_cli(capsys, *shlex.split(command.removeprefix("$ kubectl machinepool ")))
    assert (result.code, result.out) == (0, shown), command


def test_what_only_a_server_answers_is_said_to_be_unasked(no_cluster: None, capsys) -> None:
    result = planned(capsys, ["delete-machine", "vmss-workers-1"], "-f", str(EXAMPLES))
    text = " ".join(result.out.split())
    assert "could not check" not in text
    assert "warning not asked, planned from a dump: whether you may delete machines." in text
    assert "PodDisruptionBudgets were not checked: a plan made from a dump asks no" in text


@pytest.fixture
def export_of_examples(tmp_path: Path) -> Path:
    captured = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    documents = export.documents_of(
        load_dump([str(EXAMPLES)], None),
        captured=captured,
        scope=export.Scope("capi-prod"),
        versions=export.Versions("0.0.0", "v1.14.0", "image of Deployment capi-system/x"),
    )
    target = tmp_path / "bundle.tar.gz"
    bundlefiles.write(documents, str(target), captured.timestamp())
    return target


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_an_export_plans_as_the_dump_it_was_made_from(
    args: list[str], export_of_examples: Path, no_cluster: None, capsys
) -> None:
    dump = planned(capsys, args, "-f", str(EXAMPLES), "--now", NOW)
    # No --now: an export is read as at its capture.
    back = planned(capsys, args, "-f", str(export_of_examples))
    assert back.code == dump.code
    first, _, plan = back.out.partition("\n")
    assert first == f"Planned from {export_of_examples} captured at {NOW}; preconditions and " + (
        "permissions are checked at write time, not here."
    )
    assert plan == dump.out.removeprefix(HEADING)


@pytest.mark.parametrize("dry_run", [[], ["--dry-run=none"]])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_without_a_client_dry_run_a_dump_is_refused_in_one_line(
    args: list[str], dry_run: list[str], no_cluster: None, capsys
) -> None:
    result = run_cli(capsys, *args, "-n", "capi-prod", "-f", str(EXAMPLES), "--yes", *dry_run)
    assert result.code == 3
    assert result.out == ""
    command = "rollout " + args[1] if args[0] == "rollout" else args[0]
    assert result.err == (
        f"error: {command} changes a live cluster and cannot act on a dump (-f)\n"
        "hint: add --dry-run=client to see the plan it would make from the dump, or drop -f\n"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_a_server_dry_run_of_a_dump_is_a_usage_error_as_in_fix(
    args: list[str], no_cluster: None, capsys
) -> None:
    """It was exit 3 (refused) here and exit 2 in fix, for the same mistake."""
    result = run_cli(capsys, *args, "-n", "capi-prod", "-f", str(EXAMPLES), "--dry-run=server")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "error: --dry-run=server sends each write to a cluster; -f reads a dump\n"
        "hint: use --dry-run=client to see the plan made from the dump\n"
    )


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_now_without_a_dump_is_a_usage_error(args: list[str], no_cluster: None, capsys) -> None:
    result = run_cli(capsys, *args, "-n", "capi-prod", "--now", NOW, "--dry-run=client")
    assert result.code == 2
    assert result.err == ("error: --now reads a dump as at a time: it needs -f\nhint: drop --now\n")


@pytest.mark.parametrize(
    "args",
    [
        ["upgrade", "nope", "--version", "v1.34.1"],
        ["scale", "nope", "--replicas", "1"],
        ["rollout", "restart", "nope"],
        ["rollout", "pause", "nope"],
        ["rollout", "resume", "vmss-workers", "nope"],
        ["delete-machine", "vmss-workers-1", "--pool", "nope"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_pool_not_in_the_dump_is_not_found(args: list[str], no_cluster: None, capsys) -> None:
    result = planned(capsys, args, "-f", str(EXAMPLES), "--now", NOW)
    assert result.code == 1
    assert result.out == ""
    assert 'machinepools.cluster.x-k8s.io "nope" not found in namespace "capi-prod"' in result.err


def test_a_machine_not_in_the_dump_is_not_found(no_cluster: None, capsys) -> None:
    result = planned(capsys, ["delete-machine", "nope"], "-f", str(EXAMPLES), "--now", NOW)
    assert result.code == 1
    assert 'machines.cluster.x-k8s.io "nope" not found' in result.err
    assert "no instance of" not in result.err


def test_without_n_the_pools_namespace_is_the_dumps_and_must_be_one(
    tmp_path: Path, no_cluster: None, capsys
) -> None:
    docs = list(yaml.safe_load_all((EXAMPLES / "azure-vmss.yaml").read_text()))
    for doc in docs:
        for obj in doc.get("items", [doc]):
            if obj["metadata"].get("namespace") == "capi-prod":
                obj["metadata"]["namespace"] = "capi-dev"
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "dev.yaml").write_text(yaml.safe_dump_all(docs))
    args = ["scale", "vmss-workers", "--replicas", "5", "--dry-run=client", "--now", NOW]
    one = run_cli(capsys, *args, "-f", str(dumps))
    assert one.code == 0, one.err
    assert "Scale MachinePool capi-dev/vmss-workers" in one.out
    two = run_cli(capsys, *args, "-f", str(dumps), "-f", str(EXAMPLES / "azure-vmss.yaml"))
    assert two.code == 2
    assert "several namespaces: capi-dev, capi-prod" in two.err
    assert "hint: pick one with -n NAMESPACE" in two.err
    picked = run_cli(capsys, *args, "-f", str(dumps), "-f", str(EXAMPLES), "-n", "capi-dev")
    assert picked.code == 0, picked.err


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback port that takes connections and never answers: any attempt is counted."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def attempts(sock: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_no_connection_is_attempted(
    args: list[str],
    listener: socket.socket,
    tmp_path: Path,
    no_cluster: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
) -> None:
    port = listener.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    }))  # fmt: skip
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    source = ["-f", str(EXAMPLES), "--now", NOW, "--request-timeout", "2s"]
    by_env = planned(capsys, args, *source)
    by_flag = planned(capsys, args, *source, "--kubeconfig", str(kubeconfig))
    assert (by_env.code, by_flag.code) == (0, 0), by_env.err
    assert by_env.out == by_flag.out
    assert attempts(listener) == 0


HOSTILE = "\x1b]0;owned\x07\u202e"


def _hostile(value: object) -> object:
    if isinstance(value, str):
        for plain in ("vmss-workers-0", "1.33.4"):
            value = value.replace(plain, plain + HOSTILE)
        return value
    if isinstance(value, dict):
        return {_hostile(k): _hostile(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile(v) for v in value]
    return value


def test_hostile_dump_values_are_escaped_in_the_plan(
    tmp_path: Path, no_cluster: None, capsys
) -> None:
    """Every name holding vmss-workers-0 carries controls (the joins still hold), and so do the
    versions and the dump's own path."""
    docs = [_hostile(d) for d in yaml.safe_load_all((EXAMPLES / "azure-vmss.yaml").read_text())]
    path = tmp_path / f"dump{HOSTILE}.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    source = ["-f", str(path), "--now", NOW]
    escaped = "\\x1b]0;owned\\x07\\u202e"
    shown = [  # each shows a hostile value in its plan
        ["upgrade", "vmss-workers", "--version", "v1.34.1", "--force"],
        ["rollout", "restart", "vmss-workers"],
        ["delete-machine", f"vmss-workers-0{HOSTILE}"],
    ]
    for args in [*shown, *COMMANDS[1:-1]]:
        result = planned(capsys, args, *source)
        # The pool's version holds them too: no semantic version, so upgrade refuses (MP1202).
        refused = args[0] == "upgrade"
        assert result.code == (3 if refused else 0), result.err
        assert ("not a semantic version (MP1202)" in result.err) is refused
        text = result.out + result.err
        assert not set("\x1b\x07\u202e") & set(text), args
        heading, _, plan = result.out.partition("\n")
        assert escaped in heading
        assert escaped in plan or args not in shown, args


@pytest.mark.parametrize("scope", [["--pool", "asg-workers"], ["-l", "team=none"]])
def test_a_machine_of_a_pool_the_scope_leaves_out_names_its_pool(
    capsys: pytest.CaptureFixture[str], scope: list[str]
) -> None:
    """It said the Machine was no instance of a MachinePool and hinted at MachineDeployments."""
    result = run_cli(
        capsys, "delete-machine", "vmss-workers-1", *scope, "-f", str(EXAMPLES), "--now", NOW,
        "--dry-run=client",
    )  # fmt: skip
    assert result.code == 1
    [error, hint] = result.err.splitlines()
    assert error.startswith(
        'error: machines.cluster.x-k8s.io "vmss-workers-1" is an instance of MachinePool '
        f"vmss-workers, which {' '.join(scope)} leaves out"
    )
    assert hint == f"hint: name its pool with --pool vmss-workers, or drop {scope[0]}"


def test_an_object_value_in_a_plan_is_json_not_python(capsys, tmp_path: Path) -> None:
    """The upgrade plan printed {'id': '/subscriptions/...'}, Python's spelling."""
    dump = tmp_path / "pool.yaml"
    dump.write_text(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachinePool\nmetadata: {name: p, namespace: n}\n"
        "spec: {clusterName: c, replicas: 1, template: {spec: {version: v1.33.4, infrastructureRef:"
        " {apiGroup: infrastructure.cluster.x-k8s.io, kind: AzureMachinePool, name: p}}}}\n---\n"
        "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: AzureMachinePool\n"
        "metadata: {name: p, namespace: n}\nspec: {template: {image: {id: /subscriptions/x/y}}}\n"
    )
    result = run_cli(
        capsys, "upgrade", "p", "-n", "n", "--version", "v1.34.0", "--set", "spec.template.image=",
        "--dry-run=client", "-f", str(dump), "--now", NOW,
    )  # fmt: skip
    said = " ".join(result.out.split())
    assert 'spec.template.image: {"id":"/subscriptions/x/y"} -> (unset)' in said, result.out
