"""Reading `kubectl get -o yaml|json` output as the offline input."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path

import pytest
import yaml
from support.objects import NOW
from support.scenarios import SCENARIOS

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump

OBJECTS = SCENARIOS["aws-asg"]("v1beta2", "capi-prod")
NODES = [o for o in OBJECTS if o["kind"] == "Node"]
REST = [o for o in OBJECTS if o["kind"] != "Node"]


def kinds(snapshot) -> list[str]:
    return sorted(o["kind"] for o in snapshot.objects)


def test_kubectl_list_yaml_splits_nodes_from_management_objects(tmp_path: Path) -> None:
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": OBJECTS}))
    snapshot = load_dump([str(path)], io.StringIO())
    assert kinds(snapshot) == sorted(o["kind"] for o in REST)
    [workload] = snapshot.workloads
    assert (workload.cluster, len(workload.nodes or ())) == (None, 2)
    assert snapshot.nodes_for("capi-prod", "prod") is workload


def test_multi_document_yaml_json_typed_lists_and_directories(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all(REST[:2]))
    (tmp_path / "b.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": NODES})
    )
    (tmp_path / "c.yml").write_text(
        "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": REST[2:]})
    )
    (tmp_path / "notes.txt").write_text("not read")
    snapshot = load_dump([str(tmp_path)], io.StringIO())
    assert kinds(snapshot) == sorted(o["kind"] for o in REST)
    assert len(snapshot.workloads[0].nodes or ()) == 2


def test_stdin_and_repeated_paths(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump_all(NODES))
    snapshot = load_dump(["-", str(path)], io.StringIO(json.dumps({"kind": "List", "items": REST})))
    assert len(snapshot.objects) == len(REST)
    assert len(snapshot.workloads[0].nodes or ()) == 2


def test_a_dump_without_nodes_says_so(tmp_path: Path) -> None:
    path = tmp_path / "mgmt.yaml"
    path.write_text(yaml.safe_dump_all(REST))
    [workload] = load_dump([str(path)], io.StringIO()).workloads
    assert workload.nodes is None
    assert "no Node objects" in (workload.note or "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: [unclosed", "cannot parse"),
        ("- just\n- strings\n", "not a Kubernetes object"),
        ('{"broken": ', "cannot parse"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(MachinePoolError, match=message) as err:
        load_dump([str(path)], io.StringIO())
    assert "\n" not in err.value.message


def test_missing_path() -> None:
    with pytest.raises(MachinePoolError, match=r'the path "nope\.yaml" does not exist'):
        load_dump(["nope.yaml"], io.StringIO())


def test_binary_and_unreadable_files_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    with pytest.raises(MachinePoolError, match="not UTF-8 text"):
        load_dump([str(path)], io.StringIO())


def test_concatenated_json_pipes_raw_lists_and_duplicates(tmp_path: Path) -> None:
    stream = tmp_path / "stream.json"
    stream.write_text(
        json.dumps({"kind": "List", "apiVersion": "v1", "items": REST}) + "\n" + json.dumps(REST[0])
    )
    # `kubectl get --raw /api/v1/nodes` items carry no kind or apiVersion.
    raw_nodes = {
        "kind": "NodeList",
        "apiVersion": "v1",
        "items": [{k: v for k, v in n.items() if k not in ("kind", "apiVersion")} for n in NODES],
    }
    fifo = tmp_path / "nodes.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(json.dumps(raw_nodes)))
    writer.start()
    snapshot = load_dump([str(stream), str(fifo)], io.StringIO())
    writer.join()
    assert kinds(snapshot) == sorted(o["kind"] for o in REST)  # the repeated object counts once
    assert [n["kind"] for n in snapshot.workloads[0].nodes or ()] == ["Node", "Node"]


def test_an_object_without_a_name(tmp_path: Path) -> None:
    path = tmp_path / "noname.yaml"
    path.write_text("apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachinePool\nmetadata: null\n")
    with pytest.raises(MachinePoolError, match=r"holds a MachinePool without metadata\.name"):
        load_dump([str(path)], io.StringIO())


def test_a_kind_left_out_of_the_dump_counts_as_unread_not_missing() -> None:
    pools = [o for o in REST if o["kind"] == "MachinePool"]
    snapshot = load_dump(["-"], io.StringIO(yaml.safe_dump_all(pools)))
    assert not snapshot.was_read("cluster.x-k8s.io", "Cluster")
    assert snapshot.was_read("cluster.x-k8s.io", "MachinePool")
    [cluster] = describe(snapshot, Selection(), NOW).clusters
    assert (cluster.cluster, cluster.cluster_unread) == (None, True)
