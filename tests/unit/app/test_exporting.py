"""`export` as app/exporting.py runs it: a live read of fake API servers (support.fakeapi, our
client's boundary) written down, as a directory or a tarball.

tests/unit/test_export_*.py pin the documents, the kept fields and reading exports back within
bounds; this pins the command's own part: no credential the live read meets reaches a file, the
redaction patterns reach every file, the target is refused before anything is read, a pool that
is not there writes nothing, unreadable kinds travel with the export, and an export reads back as
the live view.
"""

from __future__ import annotations

import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.documents import describe_document
from support.fakeapi import MANAGEMENT, WORKLOAD_TOKEN, FakeAPI, FakeServer
from support.objects import NOW

from kubectl_machinepool.app.exporting import Exported, export_pools
from kubectl_machinepool.app.options import PoolScope, Source
from kubectl_machinepool.app.reading import load_description
from kubectl_machinepool.base.errors import NotFoundError, UsageError

NAMESPACE = "capi-prod"
POOL = "dev-mp-0"
TARGETS = ["export", "export.tar.gz"]
# Credentials a live read meets: the bootstrap data Secret's userdata, a bootstrap token, a
# password and a file in the KubeadmConfig, and the workload kubeconfig's token.
USERDATA = "I2Nsb3VkLWNvbmZpZwo="
TOKEN_SECRET = "0123456789abcdef"
PASSWORD = "$6$rounds=4096$s3cr3t-hash"
FILE_CONTENT = "aws_secret_access_key=wJalrXUtnFEMI"


@dataclass
class Export:
    api: FakeAPI
    management: FakeServer
    tmp_path: Path
    progress: list[str] = field(default_factory=list)

    def run(self, target: str, *names: str, patterns: tuple[str, ...] = ()) -> Exported:
        return export_pools(
            self.api.access(self.tmp_path, namespace=NAMESPACE),
            PoolScope(names=names),
            str(self.tmp_path / target),
            patterns=[re.compile(p) for p in patterns],
            clock=lambda: NOW,
            progress=self.progress.append,
        )

    def files(self, target: str) -> dict[str, bytes]:
        """Every file of the export, by name."""
        path = self.tmp_path / target
        if path.is_dir():
            return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
        with tarfile.open(path) as tar:
            return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


@pytest.fixture
def live(fake_api: FakeAPI, tmp_path) -> Export:
    management, workload = fake_api.scenario("capd", NAMESPACE)
    [config] = management.of_kind("KubeadmConfig")
    config["spec"]["files"] = [{"path": "/etc/aws/credentials", "content": FILE_CONTENT}]
    config["spec"]["users"] = [{"name": "ops", "passwd": PASSWORD}]
    join = config["spec"].setdefault("joinConfiguration", {}).setdefault("discovery", {})
    join["bootstrapToken"] = {"token": f"abcdef.{TOKEN_SECRET}", "apiServerEndpoint": "10.0.0.1"}
    management.add(config)
    workload.add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "bootstrap.kubernetes.io/token",
            "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
            "data": {"token-id": "YWJjZGVm", "token-secret": TOKEN_SECRET},
        }
    )
    return Export(fake_api, management, tmp_path)


@pytest.mark.parametrize("target", TARGETS)
def test_an_export_reads_back_as_the_live_view(live: Export, target: str) -> None:
    exported = live.run(target)
    assert (exported.pools, exported.nodes, exported.clusters) == (1, 2, 1)
    assert exported.objects == len(live.management.objects)  # its Secrets by name only
    assert (exported.notes, exported.nothing) == ((), None)
    path = live.tmp_path / target
    written = sum(len(b) for b in live.files(target).values())
    assert exported.size == (path.stat().st_size if path.is_file() else written)
    assert live.progress == [
        f"reading MachinePools in {NAMESPACE}",
        f"writing {live.tmp_path / target}",
    ]
    access = live.api.access(live.tmp_path, namespace=NAMESPACE)
    read = load_description(access, Source(), PoolScope(), NOW, None, report_extras=True)
    source = Source(filenames=(str(live.tmp_path / target),))
    back = load_description(access, source, PoolScope(), NOW, None, report_extras=True)
    assert describe_document(back.description) == describe_document(read.description)


@pytest.mark.parametrize("target", TARGETS)
def test_no_credential_the_live_read_meets_reaches_a_file(live: Export, target: str) -> None:
    live.run(target)
    written = b"".join(live.files(target).values()).decode()
    assert '"kind":"KubeadmConfig"' in written  # exported, less what it must not keep
    for secret in (USERDATA, TOKEN_SECRET, PASSWORD, FILE_CONTENT, WORKLOAD_TOKEN):
        assert secret not in written
    assert "management-token" not in written  # the user's own kubeconfig
    # The token's id stays: the missing-token rule names its Secret by it.
    assert "abcdef" in written
    assert "bootstrap-token-abcdef" in written


def test_redaction_reaches_every_file(live: Export) -> None:
    exported = live.run("export", patterns=(POOL, "^dev$"))
    files = live.files("export")
    assert set(files) == {"manifest.yaml", "management.json", "workload-1.json"}
    for name, content in files.items():
        assert POOL.encode() not in content, name
    assert b"redacted: true" in files["manifest.yaml"]
    assert live.progress[-2:] == ["redacting", f"writing {live.tmp_path / 'export'}"]
    assert exported.pools == 1


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("export", '"{path}" already exists and is not an empty directory'),
        ("export.tar.gz", '"{path}" already exists'),
        ("missing/export", 'the directory "{parent}" does not exist'),
    ],
)
def test_the_target_is_refused_before_anything_is_read(
    live: Export, target: str, message: str
) -> None:
    path = live.tmp_path / target
    if not target.startswith("missing"):
        if target.endswith(".tar.gz"):
            path.write_bytes(b"an earlier export")
        else:
            path.mkdir()
            (path / "notes.txt").write_text("someone's notes")
    with pytest.raises(UsageError) as refused:
        live.run(target)
    assert refused.value.message == message.format(path=path, parent=path.parent)
    assert live.management.asked == []
    if path.exists():
        assert path.is_file() or [p.name for p in path.iterdir()] == ["notes.txt"]


def test_a_pool_asked_for_that_is_not_there_writes_nothing(live: Export) -> None:
    with pytest.raises(NotFoundError) as missing:
        live.run("export", POOL, "gone")
    assert missing.value.message == (
        f'machinepools.cluster.x-k8s.io "gone" not found in namespace "{NAMESPACE}"'
    )
    assert list(live.tmp_path.iterdir()) == [live.tmp_path / "kubeconfig"]


def test_nothing_matched_is_still_written_and_said(fake_api: FakeAPI, tmp_path) -> None:
    empty = Export(fake_api, fake_api.serve(FakeServer(MANAGEMENT, [])), tmp_path)
    exported = empty.run("export")
    assert (exported.pools, exported.nothing) == (0, "No resources found in capi-prod namespace.")
    assert "manifest.yaml" in empty.files("export")


def test_unreadable_kinds_travel_with_the_export(live: Export) -> None:
    live.management.forbidden.add("dockermachines")
    exported = live.run("export")
    [note] = exported.notes
    assert note.startswith("cannot read DockerMachine objects, so instances show without them: ")
    access = live.api.access(live.tmp_path, namespace=NAMESPACE)
    source = Source(filenames=(str(live.tmp_path / "export"),))
    back = load_description(access, source, PoolScope(), NOW, None, report_extras=True)
    assert back.notes == (note,)
