"""An export the tool wrote is read back whatever its size (issue 49): each file and each object
is bounded on its own, not the bundle as a whole; the workload files are read one at a time and
kept as their Nodes' states. A file of the layout export writes that is hostile is refused in
one line, at bounded memory."""

from __future__ import annotations

import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.hostilebundles import (
    MANIFEST_ONLY,
    MiB,
    as_written,
    export_directory,
    header,
    padded,
    real_documents,
    real_members,
    write,
)
from support.run import run_cli
from support.scenarios import SCENARIOS, node
from test_export_bounds import MEMORY_BOUND, peak_memory

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.inputfiles import values_in
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.model.states import node_state
from kubectl_machinepool.offline import bundlefiles, export, listfile
from kubectl_machinepool.offline.dump import objects_in
from kubectl_machinepool.offline.exportfields import kept_fields

CAPTURED = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
CLUSTERS = 18
# Nodes no pool holds, in every Cluster: what makes a workload file large.
SPARE_NODES = 120


def _is_node_event(obj: dict) -> bool:
    return obj["kind"] == "Event" and obj.get("involvedObject", {}).get("kind") == "Node"


def fleet() -> Snapshot:
    """Every scenario of the suite in turn, each a Cluster in a namespace of its own, with its
    Nodes, their Events and SPARE_NODES more Nodes in its workload cluster."""
    objects, workloads = [], []
    names = sorted(SCENARIOS)
    for i in range(CLUSTERS):
        ns = f"team-{i:02d}"
        built = SCENARIOS[names[i % len(names)]]("v1beta2", ns)
        cluster = next(o for o in built if o["kind"] == "Cluster")["metadata"]["name"]
        spares = [
            node(f"spare-{j}", f"aws:///eu-west-1a/i-0{i:02d}{j:06x}", "v1.33.4", ns, cluster, "x")
            for j in range(SPARE_NODES)
        ]
        nodes = [o for o in built if o["kind"] == "Node"] + spares
        events = [o for o in built if _is_node_event(o)]
        objects += [o for o in built if o["kind"] != "Node" and not _is_node_event(o)]
        workloads.append(WorkloadNodes(ns, cluster, tuple(nodes), events=tuple(events)))
    return Snapshot.of(objects, workloads=workloads)


def documents(snapshot: Snapshot) -> dict[str, dict]:
    return export.documents_of(
        snapshot,
        captured=CAPTURED,
        scope=export.Scope(None),
        versions=export.Versions(
            "0.0.0", None, "the capi-controller-manager Deployment was not read"
        ),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Snapshot, Path]:
    snapshot = fleet()
    path = tmp_path_factory.mktemp("fleet") / "export"
    bundlefiles.write(documents(snapshot), str(path), CAPTURED.timestamp())
    return snapshot, path


def test_a_large_export_is_read_back_as_it_was_written(written, tmp_path) -> None:
    snapshot, path = written
    tarball = tmp_path / "export.tar.gz"
    bundlefiles.write(documents(snapshot), str(tarball), CAPTURED.timestamp())
    for read in (
        bundlefiles.load(str(path), objects_in),
        bundlefiles.load(str(tarball), objects_in),
    ):
        assert read.objects == tuple(kept_fields(o) for o in snapshot.objects)
        assert len(read.workloads) == CLUSTERS
        for back, source in zip(read.workloads, snapshot.workloads, strict=True):
            # The Nodes are kept as their states only, as live reads keep them.
            assert back.nodes is None
            assert back.states == tuple(node_state(kept_fields(n)) for n in source.nodes or ())
            assert back.events == tuple(kept_fields(e) for e in source.events or ())
            assert (back.namespace, back.cluster) == (source.namespace, source.cluster)
    assert sum(len(w.states or ()) for w in read.workloads) > CLUSTERS * SPARE_NODES


def test_each_file_is_one_object_a_line_and_one_json_document(written) -> None:
    _, path = written
    lines = (path / "workload-1.json").read_bytes().split(b"\n")
    assert lines[0] == listfile.HEADER
    assert lines[-2:] == [listfile.FOOTER, b""]
    assert all(json.loads(line.rstrip(b","))["kind"] for line in lines[1:-2])
    assert json.loads((path / "workload-1.json").read_bytes())["kind"] == "List"


def test_an_export_of_an_earlier_layout_describes_the_same(written, tmp_path, capsys) -> None:
    """Files as earlier versions wrote them (one line each) are parsed whole, and say the same."""
    snapshot, path = written
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    for name, document in documents(snapshot).items():
        (earlier / name).write_bytes(as_written(name, document))
    now = run_cli(capsys, "describe", "-A", "-f", str(path))
    before = run_cli(capsys, "describe", "-A", "-f", str(earlier))
    assert now.code == before.code == 0
    assert now.out == before.out
    assert now.out.count("MachinePool team-") >= CLUSTERS


def test_the_bounds_are_each_files_not_the_bundles(written, monkeypatch) -> None:
    """A bundle whose files together pass a file's bound is read; the bundle's bound is far
    above, and refuses with what to do."""
    _, path = written
    counts = {p.name: values_in(p.read_bytes()) for p in path.iterdir()}
    largest = max(counts.values())
    assert sum(counts.values()) > 2 * largest
    monkeypatch.setattr(listfile, "MAX_LINED_VALUES", largest)
    assert bundlefiles.load(str(path), objects_in).objects
    monkeypatch.setattr(bundlefiles, "MAX_BUNDLE_VALUES", sum(counts.values()) // 2)
    with pytest.raises(MachinePoolError) as refused:
        bundlefiles.load(str(path), objects_in)
    assert refused.value.message.startswith(f"cannot read {path}: over ")
    assert refused.value.hint == "export fewer pools at a time: by namespace, Cluster or name"
    monkeypatch.setattr(listfile, "MAX_LINED_VALUES", largest // 4)
    with pytest.raises(MachinePoolError, match=r"cannot read .*\.json: over [0-9,]+ JSON or YAML"):
        bundlefiles.load(str(path), objects_in)


def test_a_tarball_with_its_manifest_last_is_read_in_a_second_pass(written, tmp_path) -> None:
    """tar puts a directory's files in the order the directory lists them."""
    _, path = written
    tarball = tmp_path / "retarred.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        for name in sorted(p.name for p in path.iterdir()):  # management, manifest, workload-*
            tar.add(path / name, arcname=name)
        tar.add(path / export.MANIFEST, arcname="notes.yaml")
    assert bundlefiles.load(str(tarball), objects_in) == bundlefiles.load(str(path), objects_in)


def test_the_management_objects_go_on_in_more_files(written, monkeypatch, tmp_path) -> None:
    snapshot, path = written
    monkeypatch.setattr(export, "OBJECTS_PER_FILE", len(snapshot.objects) // 3)
    split = documents(snapshot)
    names = ["management.json", "management-2.json", "management-3.json", "management-4.json"]
    assert split[export.MANIFEST]["managementFiles"] == names
    for target in (tmp_path / "split", tmp_path / "split.tar.gz"):
        bundlefiles.write(split, str(target), CAPTURED.timestamp())
        assert bundlefiles.load(str(target), objects_in) == bundlefiles.load(str(path), objects_in)
    (tmp_path / "split" / "management-3.json").unlink()
    with pytest.raises(MachinePoolError, match=r"management-3\.json\" does not exist"):
        bundlefiles.load(str(tmp_path / "split"), objects_in)


@pytest.mark.parametrize(
    "listed",
    [["../management.json"], ["management.json", "management.json"], [], "management.json",
     [f"management-{n}.json" for n in range(2, 103)]],
    ids=["traversal", "twice", "none", "not a list", "101 files"],
)  # fmt: skip
def test_a_manifest_naming_management_files_it_cannot_is_refused(listed, tmp_path) -> None:
    directory = export_directory(tmp_path / "export")
    manifest = real_documents()[export.MANIFEST]
    (directory / export.MANIFEST).write_bytes(
        as_written(export.MANIFEST, {**manifest, "managementFiles": listed})
    )
    with pytest.raises(MachinePoolError, match=r"manifest\.yaml is not valid: management"):
        bundlefiles.load(str(directory), objects_in)


OBJECT = b'{"kind":"ConfigMap","metadata":{"name":"a"}'


def lined(*items: bytes, end: bytes = listfile.FOOTER + b"\n") -> bytes:
    return listfile.HEADER + b"\n" + b"\n".join(items) + b"\n" + end


HOSTILE = {
    "one object of 5 MiB": (
        lined(OBJECT + b',"x":"' + b"a" * (5 * MiB) + b'"}'),
        "a line is over 4 MiB, larger than any object an export holds",
    ),
    "one object of 1,200,000 values": (
        lined(OBJECT + b',"x":[' + b"0," * 1_200_000 + b"0]}"),
        "a line holds over 1,000,000 values",
    ),
    "an object nested 300 deep": (
        lined(OBJECT + b',"x":' + b"[" * 300 + b"]" * 300 + b"}"),
        "nested too deeply (over 200 levels)",
    ),
    "a number past 64 bits": (lined(OBJECT + b',"n":99999999999999999999}'), "64 bits"),
    "a List that ends early": (lined(OBJECT + b"},", end=b""), "ends before its List does"),
    "an object without a comma": (lined(OBJECT + b"}", OBJECT + b"}"), "without a comma"),
    "a comma before the end": (lined(OBJECT + b"},"), "a comma before its end"),
    "something after the end": (lined(OBJECT + b"}", end=b"]}\n{}\n"), "after its end"),
    "an object that is not JSON": (lined(OBJECT + b"},", b"{]"), "lines 2 to 3: Expecting"),
    "an object split over two lines": (lined(OBJECT + b',"x":[1,', b"2]}"), "an object each"),
    "a number for an object": (lined(b"1"), "not a Kubernetes object"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=str)
def test_a_hostile_file_of_the_layout_export_writes_is_refused(case: str, tmp_path) -> None:
    content, refusal = HOSTILE[case]
    directory = export_directory(tmp_path / "export")
    (directory / export.MANAGEMENT).write_bytes(content)
    with peak_memory() as peak, pytest.raises(MachinePoolError) as refused:
        bundlefiles.load(str(directory), objects_in)
    assert refusal in refused.value.message
    assert "\n" not in refused.value.message
    assert peak[0] < MEMORY_BOUND, peak


@pytest.mark.parametrize(
    ("claimed", "refusal"),
    [(600, "the archive ends inside a member"), (-100, "ends before its List does")],
)
def test_a_member_lying_about_its_size_is_refused(claimed: int, refusal: str, tmp_path) -> None:
    content = listfile.written(real_documents()[export.MANAGEMENT]["items"])
    lying = header(export.MANAGEMENT, len(content) + claimed) + padded(content)
    path = write(tmp_path / "lying.tar.gz", real_members(names=MANIFEST_ONLY), lying)
    with pytest.raises(MachinePoolError) as refused:
        bundlefiles.load(str(path), objects_in)
    assert refusal in refused.value.message
    assert "\n" not in refused.value.message


def test_written_objects_keep_every_line_end_inside_their_strings() -> None:
    objects = [{"kind": "Event", "message": "a\nb\r\u2028c\u0085", "n": 1}, {"kind": "Node"}]
    content = listfile.written(objects)
    assert content.count(b"\n") == 4
    assert json.loads(content) == {"apiVersion": "v1", "kind": "List", "items": objects}
    assert json.loads(listfile.written([])) == {"apiVersion": "v1", "kind": "List", "items": []}
