"""The fleet view against real API servers: two management clusters (the v1.14 and v1.10 CRD
servers) and one that does not answer, under three contexts of one kubeconfig."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.execplugins import FOREVER, FORKS, exec_user, left_running, pids_of, plugin, reap
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.objects import NOW
from support.run import Lines, run_cli, start_plugin
from support.scenarios import SCENARIOS

AT = NOW.isoformat().replace("+00:00", "Z")
# A credential plugin that fails once the test creates its ".go" file: a context that is read
# only when the test says so.
WAITS = 'while [ ! -e "{pids}.go" ]; do sleep 0.05; done\nexit 1\n'


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fleet_kubeconfig(path: Path, members: dict[str, ManagementCluster]) -> Path:
    """One kubeconfig with a context per management cluster, and "gone", which refuses."""
    config: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": []}
    config["contexts"] = []
    for context, cluster in members.items():
        one = cluster.server.kubeconfig_dict(cluster.server.admin, context)
        for section in ("clusters", "users"):
            for entry in one[section]:
                entry["name"] = f"{context}-{entry['name']}"
                config[section].append(entry)
        config["contexts"].append(
            {"name": context, "context": {"cluster": f"{context}-{cluster.server.name}",
                                          "user": f"{context}-{cluster.server.admin.name}"}}
        )  # fmt: skip
    gone = members[next(iter(members))].server.kubeconfig_dict(
        next(iter(members.values())).server.admin, "gone"
    )
    gone["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{closed_port()}"
    gone["clusters"][0]["name"] = "gone-cluster"
    gone["users"][0]["name"] = "gone-user"
    config["clusters"].append(gone["clusters"][0])
    config["users"].append(gone["users"][0])
    config["contexts"].append(
        {"name": "gone", "context": {"cluster": "gone-cluster", "user": "gone-user"}}
    )
    config["current-context"] = next(iter(members))
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def fleet(control_plane, v1beta2, tmp_path) -> Iterator[tuple[str, str]]:
    """The same namespace on both servers: an AWS pool on one, an Azure pool on the other."""
    from support.management import management_cluster

    v1beta1 = management_cluster(control_plane, "v1beta1")
    namespace = v1beta2.new_namespace()
    v1beta1.api.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
    )
    salt = namespace.removeprefix("t-")
    made = [
        (v1beta2, SCENARIOS["aws-asg"]("v1beta2", namespace, salt)),
        (v1beta1, SCENARIOS["azure-vmss"]("v1beta1", namespace, salt + "b")),
    ]
    for cluster, objects in made:
        create_scenario(cluster, objects)
    config = fleet_kubeconfig(tmp_path / "fleet.yaml", {"east": v1beta2, "west": v1beta1})
    yield namespace, str(config)
    for cluster, objects in made:
        delete_nodes(cluster, objects)


def test_diagnose_reads_every_context_and_notes_the_one_that_does_not_answer(fleet, capsys) -> None:
    namespace, config = fleet
    args = ("-n", namespace, "--kubeconfig", config, "--now", AT)

    result = run_cli(capsys, "diagnose", "--contexts", "east,west,gone", *args, "-o", "json")

    assert result.code == 0
    assert result.err.startswith("warning: context gone not read: ")
    document = json.loads(result.out)
    assert document["kind"] == "MachinePoolFleetDiagnosis"
    assert [(c["context"], c["error"] is None) for c in document["contexts"]] == [
        ("east", True),
        ("west", True),
        ("gone", False),
    ]
    # Each context's diagnosis is what diagnosing that context alone gives.
    for entry in document["contexts"][:2]:
        alone = run_cli(capsys, "diagnose", "--context", entry["context"], *args, "-o", "json")
        assert entry["diagnosis"] == json.loads(alone.out)
    pools = [p["name"] for c in document["contexts"][:2] for p in c["diagnosis"]["machinePools"]]
    assert pools == ["asg-workers", "vmss-workers"]
    total = sum(len(c["diagnosis"]["findings"]) for c in document["contexts"][:2])
    assert sum(document["summary"].values()) == total > 0


def test_fail_on_judges_the_whole_fleet_and_text_names_each_context(fleet, capsys) -> None:
    namespace, config = fleet
    args = ("-n", namespace, "--kubeconfig", config, "--now", AT)

    text = run_cli(capsys, "diagnose", "--all-contexts", *args)
    assert text.code == 0
    assert "Context east\nMachinePool " in text.out
    assert "\nContext west\nMachinePool " in text.out
    assert "\nContext gone: not read: " in text.out
    assert text.out.splitlines()[-1].startswith("Fleet: 2 of 3 contexts read; ")

    failing = run_cli(
        capsys,
        "diagnose",
        "--contexts",
        "west",
        "--contexts",
        "gone",
        *args,
        "--fail-on",
        "warning",
    )
    assert failing.code == 4
    assert "(--fail-on)" in failing.err


def test_a_fleet_of_unreachable_contexts_fails_and_bad_flags_are_usage_errors(
    fleet, capsys
) -> None:
    namespace, config = fleet
    args = ("-n", namespace, "--kubeconfig", config)

    nothing = run_cli(capsys, "diagnose", "--contexts", "gone", *args)
    assert nothing.code == 1
    assert nothing.err.splitlines()[-2] == "error: no context could be read"

    for flags, message in (
        (("--contexts", "nope"), 'error: context "nope" does not exist in the kubeconfig'),
        (("--contexts", "east", "--context", "west"), "error: --context names one cluster"),
        (("--contexts", "east", "--all-contexts"), "error: --contexts and --all-contexts exclude"),
        (("--contexts", "east", "-f", "-"), "error: a fleet view reads live clusters"),
        (("--parallel", "2"), "error: --parallel reads a fleet"),
        (("--contexts", "east", "--parallel", "0"), "error: invalid value for '--parallel'"),
    ):
        refused = run_cli(capsys, "diagnose", *flags, *args)
        assert refused.code != 0, flags
        assert message in refused.err, (flags, refused.err)


def test_list_puts_every_context_in_one_table_and_one_document(fleet, capsys) -> None:
    namespace, config = fleet
    args = ("-n", namespace, "--kubeconfig", config, "--now", AT)

    table = run_cli(capsys, "list", "--contexts", "west,gone,east", *args)
    assert table.code == 0
    assert table.err.startswith("warning: context gone not read: ")
    lines = table.out.splitlines()
    assert lines[0].split()[:3] == ["CONTEXT", "NAME", "CLUSTER"]
    assert [line.split()[:2] for line in lines[1:]] == [
        ["west", "vmss-workers"],
        ["east", "asg-workers"],
    ]
    # Without the CONTEXT cell, each row is what listing that context alone prints.
    alone = run_cli(capsys, "list", "--context", "east", *args)
    assert lines[2].split()[1:] == alone.out.splitlines()[1].split()

    document = json.loads(run_cli(capsys, "list", "--all-contexts", *args, "-o", "json").out)
    assert [(i["summary"]["context"], i["metadata"]["name"]) for i in document["items"]] == [
        ("east", "asg-workers"),
        ("west", "vmss-workers"),
    ]
    assert [(c["context"], c["error"] is None) for c in document["contexts"]] == [
        ("east", True),
        ("gone", False),
        ("west", True),
    ]
    sorted_names = run_cli(
        capsys, "list", "--all-contexts", *args, "--sort-by", ".metadata.name",
        "-o", "jsonpath={range .items[*]}{.summary.context}/{.metadata.name} {end}",
    )  # fmt: skip
    assert sorted_names.out == "east/asg-workers west/vmss-workers "
    refused = run_cli(capsys, "list", "--contexts", "east", "-w", *args)
    assert refused.code != 0
    assert refused.err.startswith("error: a fleet view is read once")


def test_diagnose_fails_on_an_unread_context_only_when_asked(fleet, capsys) -> None:
    """A partial fleet exits 0 as before; --fail-on unreadable makes it fail (1), alone or with
    a severity, and a fully read fleet still passes."""
    namespace, config = fleet
    args = ("-n", namespace, "--kubeconfig", config, "--now", AT)

    assert run_cli(capsys, "diagnose", "--contexts", "east,gone", *args).code == 0
    partial = run_cli(
        capsys, "diagnose", "--contexts", "east,gone", *args, "--fail-on", "unreadable"
    )
    assert partial.code == 1
    assert partial.err.splitlines()[-2:] == [
        "error: 1 of 2 contexts not read (--fail-on)",
        "hint: check the warnings above",
    ]
    both = run_cli(
        capsys, "diagnose", "--all-contexts", *args, "--fail-on", "warning", "--fail-on", "unreadable"
    )  # fmt: skip
    assert both.code == 1
    assert both.err.splitlines()[-2].startswith("error: 1 of 3 contexts not read; ")
    assert both.err.splitlines()[-2].endswith(" finding(s) at or above warning (--fail-on)")
    whole = run_cli(capsys, "diagnose", "--contexts", "east,west", *args, "--fail-on", "unreadable")
    assert (whole.code, whole.err) == (0, "")


def test_a_hung_credential_plugin_is_a_warning_and_is_stopped(fleet, tmp_path) -> None:
    """Two contexts whose exec plugins never answer, one sleeping, one having handed its output
    to a sleeping child: the fleet shows the good context, warns of the two, and leaves nothing
    of either plugin running."""
    namespace, config = fleet
    document = yaml.safe_load(Path(config).read_text())
    cluster = document["contexts"][0]["context"]["cluster"]  # east's: never reached
    made = {"exec-forever": FOREVER, "exec-forks": FORKS}
    files = []
    for context, body in made.items():
        script, pids = plugin(tmp_path, context, body)
        files.append(pids)
        document["users"].append({"name": context, "user": exec_user(script)})
        document["contexts"].append(
            {"name": context, "context": {"cluster": cluster, "user": context}}
        )
    Path(config).write_text(yaml.safe_dump(document))
    args = ["list", "-n", namespace, "--kubeconfig", config, "--request-timeout", "2s"]

    tool = start_plugin([*args, "--contexts", "east,exec-forever,exec-forks"], tmp_path)
    try:
        out, err = tool.communicate(timeout=120)  # a guard against a hang, not a bound
    finally:
        tool.kill()
        tool.wait(120)
        started = [pid for pids in files if pids.exists() for pid in pids_of(pids)]
        reap(*files)

    assert tool.returncode == 0, err
    assert [line.split()[:2] for line in out.splitlines()[1:]] == [["east", "asg-workers"]]
    for context in made:
        assert (
            f'warning: context {context} not read: getting credentials for context "{context}" '
            f"failed: the credential plugin {tmp_path / context} gave no credential within 2s "
            "and was stopped"
        ) in err.splitlines()
    assert len(started) == 3  # both plugins ran; one forked a child
    assert left_running(started) == []


def test_credential_files_that_never_end_are_a_warning(fleet, tmp_path) -> None:
    """A context whose token, client certificate or CA file is a FIFO no one writes (or a device
    that never ends) would hold every context of the fleet: each is a warning instead, and the
    good context is shown."""
    namespace, config = fleet
    document = yaml.safe_load(Path(config).read_text())
    east = document["contexts"][0]["context"]
    fifo = tmp_path / "no-writer"
    os.mkfifo(fifo)
    users = {
        "token-fifo": {"tokenFile": str(fifo)},
        "cert-fifo": {"client-certificate": str(fifo), "client-key": str(fifo)},
        "key-device": {"client-certificate": "/dev/zero", "client-key": "/dev/zero"},
    }
    for context, user in users.items():
        document["users"].append({"name": context, "user": user})
        document["contexts"].append({"name": context, "context": {**east, "user": context}})
    ca = next(c for c in document["clusters"] if c["name"] == east["cluster"])
    document["clusters"].append(
        {"name": "ca-fifo", "cluster": {"server": ca["cluster"]["server"],
                                        "certificate-authority": str(fifo)}}
    )  # fmt: skip
    document["contexts"].append(
        {"name": "ca-fifo", "context": {"cluster": "ca-fifo", "user": east["user"]}}
    )
    Path(config).write_text(yaml.safe_dump(document))
    names = ",".join(["east", *users, "ca-fifo"])

    tool = start_plugin(["list", "-n", namespace, "--kubeconfig", config, "--contexts", names],
                        tmp_path)  # fmt: skip
    try:
        out, err = tool.communicate(timeout=120)  # a guard against a hang, not a bound
    finally:
        tool.kill()
        tool.wait(120)

    assert tool.returncode == 0, err
    assert [line.split()[:2] for line in out.splitlines()[1:]] == [["east", "asg-workers"]]
    for context, path in [("token-fifo", fifo), ("cert-fifo", fifo), ("ca-fifo", fifo),
                          ("key-device", "/dev/zero")]:  # fmt: skip
        kind = "a FIFO" if path == fifo else "a character device"
        assert (
            f"warning: context {context} not read: cannot read {path}: it is {kind}, "
            "not a regular file"
        ) in err.splitlines()


def test_diagnose_prints_each_context_as_soon_as_it_and_those_before_it_are_in(
    fleet, tmp_path
) -> None:
    """east's diagnosis is out while the context after it still waits for its credentials
    (each context is read in its own process); the fleet's last line once that one ended."""
    namespace, config = fleet
    document = yaml.safe_load(Path(config).read_text())
    cluster = document["contexts"][0]["context"]["cluster"]
    script, pids = plugin(tmp_path, "exec-waits", WAITS)
    document["users"].append({"name": "exec-waits", "user": exec_user(script)})
    document["contexts"].append(
        {"name": "exec-waits", "context": {"cluster": cluster, "user": "exec-waits"}}
    )
    Path(config).write_text(yaml.safe_dump(document))
    args = ["diagnose", "-n", namespace, "--kubeconfig", config, "--now", AT]
    tool = start_plugin(
        [*args, "--contexts", "east,exec-waits", "--request-timeout", "300s"], tmp_path
    )
    with Lines(tool) as lines:
        east = list(lines.until(" info (Cluster API "))  # east's last line: its count
        Path(f"{pids}.go").touch()
        out, err = lines.end()
    assert tool.returncode == 0, err
    assert east[0] == "Context east"
    assert out[len(east) :] == [
        "",
        "Context exec-waits: not read: " + err.split("not read: ", 1)[1].splitlines()[0],
        "",
        out[-1],
    ]
    assert out[-1].startswith("Fleet: 1 of 2 contexts read; ")
