"""export against the real API server: the export answers as the cluster did, holds no
credential, records what could not be read, and refuses to overwrite."""

from __future__ import annotations

import base64
import json
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.objects import NOW
from support.run import run_cli
from support.scenarios import SCENARIOS

AT = NOW.isoformat().replace("+00:00", "Z")
READ_COMMANDS = [
    ("describe",),
    ("describe", "-o", "json"),
    ("diagnose",),
    ("diagnose", "-o", "json"),
    ("diff-metadata", "-o", "json"),
    ("list", "-o", "wide"),
    ("events",),
]
V1BETA1_COMMANDS = [("describe", "-o", "json"), ("diagnose", "-o", "json")]


@pytest.fixture
def scenario_in(mgmt: ManagementCluster) -> Iterator[Callable[..., tuple[str, list[Any]]]]:
    """Create a scenario in a new namespace; its Nodes are deleted afterwards."""
    made: list[list[dict[str, Any]]] = []

    def create(
        name: str, change: Callable[[list[Any]], None] = lambda _: None
    ) -> tuple[str, list[Any]]:
        namespace = mgmt.new_namespace()
        objects = SCENARIOS[name](mgmt.generation, namespace, namespace.removeprefix("t-"))
        change(objects)
        create_scenario(mgmt, objects)
        made.append(objects)
        return namespace, objects

    yield create
    for objects in made:
        delete_nodes(mgmt, objects)


def export(capsys, mgmt: ManagementCluster, target: Path, *args: str, config: str | None = None):
    return run_cli(
        capsys, "export", *args, "-o", str(target), "--kubeconfig", config or str(mgmt.kubeconfig)
    )


def texts(target: Path) -> dict[str, str]:
    """The export's files by name, from a directory or a tarball."""
    if target.is_dir():
        return {p.name: p.read_text() for p in target.iterdir()}
    with tarfile.open(target) as tar:
        return {m.name: tar.extractfile(m).read().decode() for m in tar if m.isreg()}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_read_command_answers_on_the_export_as_live(
    mgmt, scenario, scenario_in, tmp_path, capsys
) -> None:
    namespace, _ = scenario_in(scenario)
    # Tarballs for half the scenarios, directories for the rest.
    tarball = sorted(SCENARIOS).index(scenario) % 2 == 0
    target = tmp_path / ("export.tar.gz" if tarball else "export")

    done = export(capsys, mgmt, target, "-n", namespace)
    assert done.code == 0, done.err
    assert done.out.startswith("exported ")
    assert f"to {target} (" in done.out

    # On the v1.10 CRDs the two JSON documents carry every generation-specific field; the text
    # views are drawn from the same model (and the suite stays within its 20 minutes).
    commands = READ_COMMANDS if mgmt.generation == "v1beta2" else V1BETA1_COMMANDS
    for command in commands:
        live = run_cli(
            capsys, *command, "-n", namespace, "--kubeconfig", str(mgmt.kubeconfig), "--now", AT
        )
        offline = run_cli(capsys, *command, "-n", namespace, "-f", str(target), "--now", AT)
        assert (offline.code, offline.err) == (live.code, live.err), command
        assert offline.out == live.out, command


def test_manifest_records_capture_versions_and_scope_and_is_the_default_now(
    mgmt, scenario_in, tmp_path, capsys
) -> None:
    namespace, _ = scenario_in("aws-asg")
    target = tmp_path / "one"
    done = export(capsys, mgmt, target, "asg-workers", "-n", namespace)
    assert done.code == 0, done.err

    manifest = yaml.safe_load((target / "manifest.yaml").read_text())
    assert manifest["kind"] == "MachinePoolExport"
    assert manifest["scope"] == {
        "namespace": namespace,
        "names": ["asg-workers"],
        "cluster": None,
        "selector": None,
    }
    assert manifest["pluginVersion"]
    assert manifest["redacted"] is False
    assert [w["cluster"] for w in manifest["workloads"]] == ["prod"]
    assert manifest["workloads"][0]["file"] == "workload-1.json"
    captured = manifest["capturedAt"]

    # Without --now an export is read as at its capture, not as at today.
    plain = run_cli(capsys, "describe", "-n", namespace, "-f", str(target))
    at_capture = run_cli(capsys, "describe", "-n", namespace, "-f", str(target), "--now", captured)
    assert plain.out == at_capture.out
    listed = run_cli(capsys, "list", "-n", namespace, "-f", str(target))
    assert (
        listed.out
        == run_cli(capsys, "list", "-n", namespace, "-f", str(target), "--now", captured).out
    )
    later = run_cli(
        capsys, "list", "-n", namespace, "-f", str(target), "--now", "2099-01-01T00:00:00Z"
    )
    assert later.out != listed.out


@pytest.mark.parametrize(
    ("name", "flags"), [("export.tar.gz", ()), ("export", ("--redact", "vmss-workers"))]
)
def test_no_credential_leaves_the_cluster(mgmt, scenario_in, tmp_path, capsys, name, flags) -> None:
    token_secret = "0123456789abcdef"
    inline = "password=hunter2-very-secret"
    # Fields no reader reads, which a deny-list missed.
    unread = {
        "tlsBootstrapToken": "tls-bootstrap-token-secret",
        "id-token": "eyJhbGciOiJSUzI1NiJ9.id-token-secret",
        "client-secret": "oidc-client-secret",
        "additionalConfig": "passwd: {users: [{name: core, password_hash: ignition-secret}]}",
    }

    def with_credentials(objects: list[Any]) -> None:
        for obj in objects:
            if obj["kind"] == "KubeadmConfig":
                join = obj["spec"]["joinConfiguration"]
                join["discovery"] = {
                    "bootstrapToken": {
                        "token": f"abcdef.{token_secret}",
                        "apiServerEndpoint": "10.0.0.1:6443",
                        "unsafeSkipCAVerification": True,
                    },
                    "tlsBootstrapToken": unread["tlsBootstrapToken"],
                    "file": {
                        "kubeConfig": {
                            "cluster": {"server": "https://10.0.0.1:6443"},
                            "user": {
                                "authProvider": {
                                    "name": "oidc",
                                    "config": {
                                        "id-token": unread["id-token"],
                                        "client-secret": unread["client-secret"],
                                    },
                                }
                            },
                        }
                    },
                }
                obj["spec"]["files"] = [{"path": "/etc/secret.env", "content": inline}]
                obj["spec"]["ignition"] = {
                    "containerLinuxConfig": {"additionalConfig": unread["additionalConfig"]}
                }

    namespace, _ = scenario_in("azure-vmss", with_credentials)
    kubeconfig = mgmt.api.request("GET", f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig")
    secret_value = kubeconfig["data"]["value"]
    private_key = yaml.safe_load(base64.b64decode(secret_value))["users"][0]["user"][
        "client-key-data"
    ]
    target = tmp_path / name

    assert export(capsys, mgmt, target, "-n", namespace, *flags).code == 0

    everything = "\n".join(texts(target).values())
    for leaked in (secret_value, private_key, token_secret, inline, *unread.values()):
        assert leaked not in everything
    management = yaml.safe_load(texts(target)["management.json"])["items"]
    [secret] = [
        o
        for o in management
        if o["kind"] == "Secret" and o["metadata"]["name"].endswith("-kubeconfig")
    ]
    # Listed as metadata only: not even the type comes back.
    assert set(secret) == {"apiVersion", "kind", "metadata"}
    [config] = [o for o in management if o["kind"] == "KubeadmConfig"]
    # The token's id stays: the missing-token rule names its Secret by it.
    token = config["spec"]["joinConfiguration"]["discovery"]["bootstrapToken"]["token"]
    assert token.startswith("abcdef.")


def test_unreadable_parts_are_recorded_and_said_again_offline(
    mgmt, scenario_in, tmp_path, capsys
) -> None:
    namespace, _ = scenario_in("aws-asg")
    viewer = mgmt.server.add_user(f"viewer-{namespace}")
    mgmt.grant(
        viewer.name,
        namespace,
        [
            {
                "apiGroups": [
                    "cluster.x-k8s.io",
                    "infrastructure.cluster.x-k8s.io",
                    "bootstrap.cluster.x-k8s.io",
                ],
                "resources": ["*"],
                "verbs": ["get", "list"],
            }
        ],
    )
    config = str(viewer.kubeconfig)
    target = tmp_path / "partial"

    done = export(capsys, mgmt, target, "-n", namespace, config=config)
    assert done.code == 0
    live = run_cli(capsys, "describe", "-n", namespace, "--kubeconfig", config, "--now", AT)
    offline = run_cli(capsys, "describe", "-n", namespace, "-f", str(target), "--now", AT)
    assert "Nodes of Cluster" in live.err
    assert offline.err == live.err
    assert offline.out == live.out
    manifest = yaml.safe_load((target / "manifest.yaml").read_text())
    assert "secrets" in manifest["workloads"][0]["note"]
    assert manifest["workloads"][0]["file"] is None
    assert ("", "Secret") in {(u["group"], u["kind"]) for u in manifest["unread"]}


def test_redacted_names_are_gone_and_references_still_join(
    mgmt, scenario_in, tmp_path, capsys
) -> None:
    namespace, _ = scenario_in("azure-vmss")
    target = tmp_path / "redacted"
    done = export(
        capsys, mgmt, target, "-n", namespace, "--redact", "vmss-workers", "--redact", "^prod$"
    )
    assert done.code == 0, done.err

    everything = "\n".join(texts(target).values())
    assert "vmss-workers" not in everything
    assert "cluster-name: prod\n" not in everything
    manifest = yaml.safe_load((target / "manifest.yaml").read_text())
    assert manifest["redacted"] is True

    live = run_cli(
        capsys,
        "diagnose",
        "-n",
        namespace,
        "--kubeconfig",
        str(mgmt.kubeconfig),
        "--now",
        AT,
        "-o",
        "json",
    )
    redacted_ns = manifest["scope"]["namespace"]
    offline = run_cli(
        capsys, "diagnose", "-n", redacted_ns, "-f", str(target), "--now", AT, "-o", "json"
    )
    assert offline.code == 0, offline.err
    # The same findings about the same (renamed) objects: the pool, its Nodes, its Cluster joined.
    codes = lambda out: sorted(f["code"] for f in json.loads(out)["findings"])  # noqa: E731
    assert codes(offline.out) == codes(live.out)
    assert json.loads(offline.out)["findings"]


def test_refusals_write_nothing(mgmt, scenario_in, tmp_path, capsys) -> None:
    namespace, _ = scenario_in("aws-asg")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")

    refused = export(capsys, mgmt, busy, "-n", namespace)
    assert refused.code != 0
    assert refused.err.startswith(f'error: "{busy}" already exists and is not an empty directory')
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]

    missing = export(capsys, mgmt, tmp_path / "x.tar.gz", "no-such-pool", "-n", namespace)
    assert missing.code != 0
    assert 'machinepools.cluster.x-k8s.io "no-such-pool" not found' in missing.err
    assert not (tmp_path / "x.tar.gz").exists()

    both = run_cli(capsys, "describe", "-f", str(busy), "-f", str(tmp_path / "x.tar.gz"))
    assert both.code != 0
