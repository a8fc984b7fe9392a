"""A dump holds only what JSON holds, however its YAML is written.

Fuzzing found eight tracebacks, each from a value only YAML makes: a key that is a number, a
boolean, null or a date (list -o json, diff, delete-machine's hook check), bytes or a set
(list -o json, diff, upgrade's revision record), NaN (list -o json wrote bare NaN), and more.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.run import run_cli

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.offline.dump import read_documents

POOL = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {{name: p, namespace: n, {meta}}}
spec: {{clusterName: c, replicas: 1}}
"""


def test_keys_become_the_text_json_gives_them_each_its_own() -> None:
    [doc] = read_documents("x", "labels: {on: a, 1: b, ~: c, 1.5: d, 2026-01-01: e, s: f}\n")
    # In a Python dict True and 1 are one key: each is made text as it is read.
    assert doc == {
        "labels": {"true": "a", "1": "b", "null": "c", "1.5": "d", "2026-01-01": "e", "s": "f"}
    }


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("2026-01-01", "2026-01-01"),
        ("2026-11-29T15:00:00Z", "2026-11-29T15:00:00Z"),
        ("2026-11-29 15:00:00+01:00", "2026-11-29 15:00:00+01:00"),
        ("!!timestamp 2026-01-01", "2026-01-01"),
    ],
)
def test_a_timestamp_stays_the_text_it_was_written_as(written: str, read: str) -> None:
    assert read_documents("x", f"at: {written}\n") == [{"at": read}]


def test_merge_keys_still_merge() -> None:
    text = "base: &b {x: 1}\nfull:\n  <<: *b\n  y: 2\n"
    assert read_documents("x", text)[0]["full"] == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("!!binary aGk=", "bytes (!!binary)"),
        ("!!set {x}", "a set (!!set)"),
        ("!!omap [a: 1]", "ordered pairs (!!omap)"),
        ("!!pairs [a: 1]", "ordered pairs (!!pairs)"),
        (".nan", "a number JSON cannot hold"),
        ("-.inf", "a number JSON cannot hold"),
    ],
)
def test_what_json_cannot_hold_is_one_error(value: str, said: str) -> None:
    with pytest.raises(MachinePoolError, match="cannot parse x: ") as err:
        read_documents("x", f"a: {value}\n")
    assert said in err.value.message


def test_a_key_that_is_a_list_is_one_error() -> None:
    with pytest.raises(MachinePoolError, match="a mapping key that is not text"):
        read_documents("x", "x: {[1]: a}\n")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999999"])
def test_json_input_holds_no_nan_or_infinity_either(number: str) -> None:
    with pytest.raises(MachinePoolError, match="cannot parse x: "):
        read_documents("x", f'{{"a": {number}}}')


@pytest.mark.parametrize(
    "args",
    [
        ["list", "-o", "json"],
        ["list", "-o", "yaml"],
        ["describe", "p", "-n", "n"],
        ["diagnose", "-o", "json"],
        ["diff-metadata", "p", "-n", "n"],
    ],
)
def test_yaml_only_keys_and_dates_reach_no_command_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    dump = tmp_path / "pool.yaml"
    meta = "labels: {on: x, 1: y, 2026-01-01: d}, annotations: {~: z, at: 2026-01-01}"
    dump.write_text(POOL.format(meta=meta))
    result = run_cli(capsys, *args, "-f", str(dump), "--now", "2026-11-29T15:00:00Z")
    assert result.code == 0, result.err
    if args[-1] == "json" and args[0] == "list":
        [pool] = json.loads(result.out)["items"]
        assert pool["metadata"]["labels"] == {"true": "x", "1": "y", "2026-01-01": "d"}
        assert pool["metadata"]["annotations"] == {"null": "z", "at": "2026-01-01"}


def test_diff_of_yaml_only_keys_and_dates(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """diff sorted mixed int and str keys, and json.dumps'ed a date leaf: both tracebacks."""
    live = tmp_path / "live.yaml"
    live.write_text(POOL.format(meta="labels: {b: c}"))
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        POOL.format(meta="labels: {1: a, b: c}").replace(
            "replicas: 1}", "replicas: 1, failureDomains: [2026-01-01]}"
        )
    )
    for first, second in ((manifest, live), (live, manifest)):
        result = run_cli(capsys, "diff", "-f", str(first), "--against", str(second))
        assert result.code == 0, result.err
        assert "Traceback" not in result.err


def test_a_hook_check_over_a_number_key(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    """delete-machine looked for hook annotations with str.startswith on every key."""
    examples = Path(__file__).resolve().parents[3] / "examples"
    text = (examples / "azure-vmss.yaml").read_text()
    assert "        example.com/owner: ops\n" in text
    dump = tmp_path / "azure.yaml"
    dump.write_text(
        text.replace(
            "        example.com/owner: ops\n", "        example.com/owner: ops\n        1: x\n", 1
        )
    )
    result = run_cli(
        capsys, "delete-machine", "vmss-workers-0", "-n", "capi-prod", "--dry-run=client",
        "-f", str(dump), "--now", "2026-11-29T15:00:00Z",
    )  # fmt: skip
    assert "Traceback" not in result.err
    assert result.code in (0, 3), result.err


def test_a_plain_base_60_number_is_text_and_a_long_one_is_read_at_once() -> None:
    """YAML 1.1 reads 1:30 as 90, in time quadratic in its length (600 KB took 7.8 s)."""
    [doc] = read_documents("x", "a: 1:30\nb: 190:20:30.15\nc: 0x1f\nd: 1_000\n")
    assert doc == {"a": "1:30", "b": "190:20:30.15", "c": 31, "d": 1000}
    [long] = read_documents("x", "a: 1" + ":59" * 200_000 + "\n")
    assert long["a"].startswith("1:59:59")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a: !!bool maybe\n", "a value its YAML tag cannot hold"),
        ("a: !!int\n", "a value its YAML tag cannot hold"),
        ("a: !!float _\n", "a value its YAML tag cannot hold"),
        ("a: !!int 1:30\n", "a base-60 number"),
        ("a:\n\tb: 1\n", "(line 2, column 1)"),
        ('{"a": ' + "9" * 5000 + "}", "a number does not fit in 64 bits"),
    ],
)
def test_what_pyyaml_and_json_refuse_their_own_way_is_one_plain_line(text: str, said: str) -> None:
    """A KeyError, IndexError or OverflowError from PyYAML's constructors was a traceback, and
    Python's own digit-limit text named sys.set_int_max_str_digits."""
    with pytest.raises(MachinePoolError) as err:
        read_documents("x", text)
    assert err.value.message.startswith("cannot parse x: ")
    assert said in err.value.message
    assert "sys." not in err.value.message
