"""The export's documents, its files and reading them back: credentials, redaction, hostile
archives and manifests."""

from __future__ import annotations

import io
import json
import re
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from support.hostilebundles import as_written
from support.run import run_cli

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline import tarball as tarball_reader
from kubectl_machinepool.offline.dump import load_dump, objects_in
from kubectl_machinepool.offline.exportfields import LAST_APPLIED, REMOVED, kept_fields

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
CAPTURED = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
VERSIONS = export.Versions(
    "0.0.0", "v1.14.0", "image of Deployment capi-system/capi-controller-manager"
)


def documents(path: Path) -> dict:
    snapshot = load_dump([str(path)], None)
    return export.documents_of(
        snapshot, captured=CAPTURED, scope=export.Scope("capi-prod"), versions=VERSIONS
    )


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
@pytest.mark.parametrize("name", ["bundle", "bundle.tar.gz"])
def test_an_example_written_and_read_back_describes_and_diagnoses_the_same(
    example, name, tmp_path, capsys
) -> None:
    target = tmp_path / name
    bundlefiles.write(documents(EXAMPLES / example), str(target), CAPTURED.timestamp())
    for command in (("describe",), ("diagnose", "-o", "json"), ("diff-metadata",), ("list",)):
        dump = run_cli(
            capsys, *command, "-A", "-f", str(EXAMPLES / example), "--now", "2026-11-29T15:00:00Z"
        )
        # No --now: the capture time is the export's own.
        back = run_cli(capsys, *command, "-A", "-f", str(target))
        assert (back.code, back.out) == (dump.code, dump.out), command


def test_secrets_keep_their_name_only() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "cluster.x-k8s.io/secret",
        "metadata": {
            "name": "prod-kubeconfig",
            "namespace": "capi-prod",
            "labels": {"cluster.x-k8s.io/cluster-name": "prod"},
            "annotations": {LAST_APPLIED: '{"data":{"value":"c2VjcmV0"}}'},
        },
        "data": {"value": "c2VjcmV0"},
        "stringData": {"value": "secret"},
    }
    assert kept_fields(secret) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "prod-kubeconfig", "namespace": "capi-prod"},
    }


def test_credentials_are_not_kept_and_the_token_id_is() -> None:
    config = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmConfig",
        "metadata": {
            "name": "workers",
            "annotations": {LAST_APPLIED: "abcdef.0123456789abcdef", "team": "a"},
        },
        "spec": {
            "joinConfiguration": {
                "discovery": {"bootstrapToken": {"token": "abcdef.0123456789abcdef"}}
            },
            "files": [{"path": "/etc/x", "content": "s3cr3t", "owner": "root"}],
            "users": [{"name": "ops", "passwd": "$6$hash"}],
        },
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "capi-controller-manager"},
        "spec": {"template": {"spec": {"containers": [{
            "name": "manager",
            "image": "registry.example/cluster-api-controller:v1.14.0",
            "args": ["--feature-gates=MachinePool=true", "--additional-sync-machine-labels", "a.*", "--token=t0ps3cret"],
            "env": [{"name": "TOKEN", "value": "t0ps3cret"}, {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "x", "key": "y"}}}],
        }]}}},
    }  # fmt: skip
    kept = kept_fields(config)
    assert kept == {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmConfig",
        "metadata": {"name": "workers", "annotations": {"team": "a"}},
        # The token's id stays: the missing-token rule names its Secret by it.
        "spec": {
            "joinConfiguration": {"discovery": {"bootstrapToken": {"token": f"abcdef.{REMOVED}"}}}
        },
    }
    assert config["spec"]["files"][0]["content"] == "s3cr3t"  # the input is not changed

    # The manager's image says the Cluster API version, its sync flags what reaches Nodes.
    [manager] = kept_fields(deployment)["spec"]["template"]["spec"]["containers"]
    assert manager == {
        "name": "manager",
        "image": "registry.example/cluster-api-controller:v1.14.0",
        "args": ["--additional-sync-machine-labels", "a.*"],
    }


def test_redaction_swaps_each_text_everywhere_for_one_token() -> None:
    docs = documents(EXAMPLES / "azure-vmss.yaml")
    result = export.redacted(docs, [re.compile("vmss-workers"), re.compile("^prod$")])
    text = yaml.safe_dump(result)
    assert "vmss-workers" not in text
    assert result[export.MANIFEST]["redacted"] is True
    pool = next(o for o in result[export.MANAGEMENT]["items"] if o["kind"] == "MachinePool")
    token = pool["metadata"]["name"]
    assert re.fullmatch(r"redacted-[0-9a-f]{10}", token)
    # The infra pool keeps its kind and apiVersion, and its owner reference names the same token.
    infra = next(o for o in result[export.MANAGEMENT]["items"] if o["kind"] == "AzureMachinePool")
    assert infra["apiVersion"].startswith("infrastructure.cluster.x-k8s.io/")
    assert token in yaml.safe_dump(infra)
    assert (
        pool["spec"]["clusterName"] == pool["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"]
    )
    assert pool["spec"]["clusterName"].startswith("redacted-")
    # Another export salts differently: the tokens cannot be matched across exports.
    again = export.redacted(docs, [re.compile("vmss-workers")])
    assert (
        next(o for o in again[export.MANAGEMENT]["items"] if o["kind"] == "MachinePool")[
            "metadata"
        ]["name"]
        != token
    )


def test_a_redacted_export_still_joins_every_instance(tmp_path, capsys) -> None:
    docs = export.redacted(documents(EXAMPLES / "azure-vmss.yaml"), [re.compile("vmss-workers")])
    bundlefiles.write(docs, str(tmp_path / "r"), 0)
    example = str(EXAMPLES / "azure-vmss.yaml")
    plain = run_cli(
        capsys, "diagnose", "-A", "-f", example, "-o", "json", "--now", "2026-11-29T15:00:00Z"
    )
    redacted = run_cli(capsys, "diagnose", "-A", "-f", str(tmp_path / "r"), "-o", "json")
    assert redacted.code == plain.code == 0
    assert "vmss-workers" not in redacted.out

    def found(out: str) -> list[tuple[str, str]]:
        return [(f["code"], f["severity"]) for f in json.loads(out)["findings"]]

    assert found(redacted.out) == found(plain.out)


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for info, content in members:
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return str(path)


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def real_files() -> dict[str, bytes]:
    docs = documents(EXAMPLES / "aws-asg.yaml")
    return {name: as_written(name, doc) for name, doc in docs.items()}


def test_a_tarball_is_read_in_memory_and_only_its_own_names(tmp_path) -> None:
    files = real_files()
    outside = tmp_path / "outside"
    path = tarball(
        tmp_path / "hostile.tar.gz",
        [
            (member("../outside"), b"escaped"),
            (member("/tmp/absolute"), b"escaped"),
            (member("workload-9.json", tarfile.SYMTYPE, "/etc/passwd"), b""),
            *((member(name), content) for name, content in files.items()),
        ],
    )
    snapshot = bundlefiles.load(path, objects_in)
    assert not outside.exists()
    assert len(snapshot.objects) == len(yaml.safe_load(files[export.MANAGEMENT])["items"])


def test_hostile_manifests_and_archives_are_one_error(tmp_path) -> None:
    files = real_files()
    manifest = yaml.safe_load(files[export.MANIFEST])
    cases = {
        "traversal": {**manifest, "workloads": [{"file": "../../etc/passwd"}]},
        "time": {**manifest, "capturedAt": "yesterday"},
        "notes": {**manifest, "notes": [{"x": 1}]},
        "unread": {**manifest, "unread": [{"group": 1, "kind": "Secret"}]},
        "missing file": {**manifest, "workloads": [{"file": "workload-7.json"}]},
    }
    for name, bad in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        for file, content in files.items():
            (directory / file).write_bytes(content)
        (directory / export.MANIFEST).write_text(yaml.safe_dump(bad))
        with pytest.raises(MachinePoolError):
            bundlefiles.load(str(directory), objects_in)

    (tmp_path / "plain.tar.gz").write_bytes(b"not gzip at all")
    many = tarball(
        tmp_path / "many.tar.gz",
        [(member(f"f{i}"), b"") for i in range(tarball_reader.MAX_MEMBERS + 1)],
    )
    no_manifest = tarball(tmp_path / "empty.tar.gz", [(member("management.json"), b"")])
    for path in (str(tmp_path / "plain.tar.gz"), many, no_manifest):
        with pytest.raises(MachinePoolError):
            bundlefiles.load(path, objects_in)


def test_an_export_is_read_alone(tmp_path, capsys) -> None:
    bundlefiles.write(documents(EXAMPLES / "aws-asg.yaml"), str(tmp_path / "e"), 0)
    both = run_cli(
        capsys, "describe", "-A", "-f", str(tmp_path / "e"), "-f", str(EXAMPLES / "aws-asg.yaml")
    )
    assert both.code != 0
    assert both.err.startswith(f"error: {tmp_path / 'e'} is an export: it is read on its own")
    assert "Traceback" not in both.err


def test_progress_is_one_line_rewritten_in_place_with_cluster_text_escaped() -> None:
    from kubectl_machinepool.cli.environment import Environment

    stderr = io.StringIO()
    env = Environment(io.StringIO(), io.StringIO(), stderr, {}, False, False, None, True)
    env.progress("reading MachinePools in evil\x1b]0;owned\x07ns")
    env.progress("writing out.tar.gz")
    env.progress("")
    assert stderr.getvalue() == (
        "\r\x1b[Kreading MachinePools in evil\\x1b]0;owned\\x07ns..."
        "\r\x1b[Kwriting out.tar.gz..."
        "\r\x1b[K"
    )
