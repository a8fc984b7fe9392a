"""Defects the property tests (or the issue) found in the dump reader, the model and diagnose,
each pinned by the smallest input that showed it."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml
from pipeline import DESCRIBE_SCHEMA, NOW, check_documents, run_pipeline, snapshot_from
from strategies import BASES, alias_bomb, nested
from support.run import run_cli

from kubectl_machinepool.base.apiversion import version_priority
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import integer, string_map
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.diagnostics.rules import capi_version, core_controller
from kubectl_machinepool.model.description import node_available
from kubectl_machinepool.model.pool import machine_pool
from kubectl_machinepool.model.poolname import pool_label_value
from kubectl_machinepool.model.propagation import sync_rules
from kubectl_machinepool.model.selector import selector_matches
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import node_state
from kubectl_machinepool.offline import dump
from kubectl_machinepool.offline.dump import load_dump

LOADERS = [getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader]
AWS = json.loads(BASES["aws-asg/v1beta2"])


def refusal(content: str) -> str:
    with pytest.raises(MachinePoolError) as err:
        load_dump(["-"], io.StringIO(content))
    assert "\n" not in err.value.message
    return err.value.message


def objects_with(change) -> list[dict]:
    objects = json.loads(BASES["azure-vmss/v1beta2"])
    for obj in objects:
        change(obj)
    return objects


# -- -f: nesting ------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deeply_nested_json_is_one_error_line(depth: int) -> None:
    assert "nested too deeply" in refusal(nested(depth, "json"))


@pytest.mark.parametrize("loader", LOADERS, ids=lambda loader: loader.__name__)
@pytest.mark.parametrize("fmt", ["yaml-flow", "yaml-block"])
@pytest.mark.parametrize("depth", [300, 999, 1000, 5000])
def test_deeply_nested_yaml_is_one_error_line_with_either_loader(
    monkeypatch: pytest.MonkeyPatch, loader: type, fmt: str, depth: int
) -> None:
    monkeypatch.setattr(dump, "_Loader", loader)
    assert "nested too deeply" in refusal(nested(depth, fmt))


def test_the_cli_says_nested_too_deeply(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text(nested(1000, "json"))
    result = run_cli(capsys, "describe", "-f", str(path))
    assert (result.code, result.out) == (1, "")
    assert result.err == f"error: cannot parse {path}: nested too deeply (over 200 levels)\n"


# -- -f -: stdin ------------------------------------------------------------------------------


def closed_stream() -> io.StringIO:
    stream = io.StringIO("kind: List\nitems: []\n")
    stream.close()
    return stream


@pytest.mark.parametrize("stdin", [None, closed_stream()], ids=["None", "closed"])
def test_a_closed_stdin_is_one_error_line(stdin: io.StringIO | None) -> None:
    with pytest.raises(MachinePoolError, match="cannot read stdin: it is closed"):
        load_dump(["-"], stdin)


def test_the_cli_with_stdin_closed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What Python makes of a process started with file descriptor 0 closed (`<&-`).
    monkeypatch.setattr(sys, "stdin", None)
    result = run_cli(capsys, "list", "-f", "-")
    assert result.code == 1
    assert result.err.startswith("error: cannot read stdin: it is closed\n")


# -- -f: YAML aliases -------------------------------------------------------------------------


def test_a_billion_laughs_label_is_refused_before_anything_expands_it() -> None:
    """A 32 KB dump (a real one plus a Node whose label value is a nested alias list) used to
    cost 15 s and 300 MB once the label was read; one more level, over a minute."""
    realistic = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": AWS})
    content = realistic + "---\n" + alias_bomb(levels=7, width=10)
    content += "#" * (32 * 1024 - len(content)) + "\n"
    assert "excessive aliasing" in refusal(content)


def test_aliases_that_expand_modestly_still_read() -> None:
    snapshot = snapshot_from(alias_bomb(levels=3, width=5))
    [node] = snapshot.workloads[0].nodes or ()
    assert len(node["metadata"]["labels"]["big"]) == 5


@pytest.mark.parametrize(
    "content",
    [
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: loop\n  labels: &l {a: *l}\n",
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: loop\n  labels: &l [*l]\n",
        "apiVersion: v1\nkind: Node\nmetadata: &m\n  name: m\n  labels: {<<: *m}\n",
    ],
)
def test_a_yaml_alias_inside_its_own_anchor_is_refused(content: str) -> None:
    assert "refers to itself" in refusal(content)


def test_label_and_annotation_values_of_the_wrong_type_read_as_absent() -> None:
    huge = [["lol"] * 10] * 10
    raw = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "n",
            "labels": {
                "list": huge,
                "map": {"a": "b"},
                "flag": True,
                "null": None,
                "ok": "v",
                "number": 5,
                ("tuple",): "x",
            },
            "annotations": {"a": huge},
        },
    }
    state = node_state(raw)
    assert state.labels == {"ok": "v", "number": "5"}
    assert state.annotations == {}
    assert string_map({"a": {"b": "c"}}) == {}


# -- numbers, times and text no real object holds ---------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["²", "--5", "٣", "1" * 5000, "9223372036854775808", 2**63, True],
    ids=lambda v: repr(v)[:12],
)
def test_integers_that_are_not_int64_read_as_absent(value: object) -> None:
    assert integer(value) is None


def test_a_number_past_64_bits_in_a_dump_is_one_error_line() -> None:
    # YAML hex has no digit limit; str() of the result would raise where it is printed.
    content = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  uid: 0x" + "f" * 4000 + "\n"
    assert "does not fit in 64 bits" in refusal(content)


@pytest.mark.parametrize(
    "value",
    ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59Z", 10**5000],
    ids=["late-offset", "early-offset", "year-9999", "huge-int"],
)
def test_timestamps_that_cannot_be_shown_in_utc_read_as_absent(value: object) -> None:
    assert parse_time(value) is None


def test_go_zero_time_still_reads() -> None:
    assert format_time(parse_time("0001-01-01T00:00:00Z")) == "0001-01-01T00:00:00Z"


def test_a_huge_min_ready_seconds_does_not_overflow_availability() -> None:
    [raw] = [o for o in AWS if o["kind"] == "MachinePool"]
    raw["spec"]["template"]["spec"]["minReadySeconds"] = 2**62
    pool = machine_pool(raw, Snapshot())
    [node] = [node_state(o) for o in AWS if o["kind"] == "Node"][:1]
    assert node_available(node, pool.min_ready_seconds, NOW) is False


def test_negative_counters_keep_describe_within_its_schema() -> None:
    def change(obj: dict) -> None:
        if obj["kind"] == "MachinePool":
            obj["spec"]["replicas"] = -1
            obj["status"]["replicas"] = -3
            obj["status"]["deprecated"]["v1beta1"]["readyReplicas"] = -2

    out = run_pipeline(snapshot_from(json.dumps(objects_with(change))))[1]
    check_documents(out)
    [cluster] = out.documents["describe-json"][0]["clusters"]
    counts = cluster["machinePools"][0]["counts"]
    assert (counts["desired"], counts["providerReported"], counts["statusReady"]) == (None, 0, 0)


# -- conditions -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["Maybe", "true", "FALSE", 5, None, ["True"], ""])
def test_describe_json_reads_any_other_condition_status_as_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, status: object
) -> None:
    def change(obj: dict) -> None:
        for holder in (
            obj.get("status", {}),
            obj.get("status", {}).get("deprecated", {}).get("v1beta1", {}),
        ):
            for cond in holder.get("conditions", []):
                cond["status"] = status

    path = tmp_path / "dump.json"
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": objects_with(change)}))
    result = run_cli(
        capsys, "describe", "-f", str(path), "--now", "2026-11-29T15:00:00Z", "-o", "json"
    )
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert not list(DESCRIBE_SCHEMA.iter_errors(document))
    pool = document["clusters"][0]["machinePools"][0]
    assert {c["status"] for c in pool["conditions"]} == {"Unknown"}


# -- the core controller's Deployment ---------------------------------------------------------


def manager_deployment(**container: object) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "capi-controller-manager",
            "namespace": "capi-system",
            "labels": {"cluster.x-k8s.io/provider": "cluster-api"},
        },
        "spec": {"template": {"spec": {"containers": [{"name": "manager", **container}]}}},
    }


def test_a_manager_image_tag_of_thousands_of_digits_is_an_unknown_version() -> None:
    deployment = manager_deployment(image="capi:v" + "9" * 5000 + ".1.1")
    assert capi_version(Snapshot.of([deployment]), None).version is None


@pytest.mark.parametrize(
    "args",
    [5, "--additional-sync-machine-labels=^a$", [["nested"]], ['--x="unbalanced'], {"a": 1}],
)
def test_manager_args_of_any_shape_read_without_crashing(args: object) -> None:
    rules = sync_rules(manager_deployment(args=args), (), ())
    assert rules.labels in ((), ("^a$",))


def test_a_deployment_whose_labels_are_a_list_is_not_the_core_controller() -> None:
    deployment = manager_deployment()
    deployment["metadata"] = {"name": "other", "labels": ["cluster.x-k8s.io/provider"]}
    assert core_controller(Snapshot.of([deployment])) is None


# -- names and selectors ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pool\n", "pool\ud800", "p" * 64])
def test_pool_names_that_are_no_label_value_are_hashed(name: str) -> None:
    value = pool_label_value(name)
    assert value.startswith("hash_")
    assert value.endswith("_z")


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": 5}]},
        {"matchExpressions": [{"key": ["a"], "operator": "Exists"}]},
        {"matchLabels": {"a": ["b"]}},
    ],
)
def test_malformed_label_selectors_match_nothing(selector: dict) -> None:
    assert selector_matches(selector, {"a": "b"}) is False


def test_taints_with_a_key_of_the_wrong_type_are_left_out() -> None:
    node = node_state(
        {
            "metadata": {"name": "n"},
            "spec": {"taints": [{"key": ["k"] * 3, "effect": "NoSchedule"}, {"key": "k"}]},
        }
    )
    assert node.taints == ("k:",)


def test_a_manager_regex_python_cannot_compile_is_left_out_and_named() -> None:
    # The user did not pass it: diff-metadata must not fail as if a flag were wrong.
    deployment = manager_deployment(args=["--additional-sync-machine-labels=*,^ok$,\\pL"])
    rules = sync_rules(deployment, (), ())
    assert rules.labels == ("^ok$",)
    assert "ignored: '*' (Python cannot compile it" in rules.source
    assert "'\\\\pL' (Python cannot compile it" in rules.source


def test_an_api_version_of_thousands_of_digits_sorts_last() -> None:
    assert version_priority("v" + "1" * 5000) == (-1, 0, 0)
    assert version_priority("v1beta2") == (1, 1, 2)
