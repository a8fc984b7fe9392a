"""diff's input as a user gets it wrong, and as a hostile manifest makes it: one error line or a
usage error, kinds it does not compare named, cluster text escaped; and its flags complete."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.run import run_cli

from kubectl_machinepool.cli.completion import main as complete

ROOT = Path(__file__).resolve().parents[3]
DUMP = str(ROOT / "examples" / "azure-vmss.yaml")
POOL = {
    "apiVersion": "cluster.x-k8s.io/v1beta2",
    "kind": "MachinePool",
    "metadata": {"name": "vmss-workers"},
    "spec": {"clusterName": "prod", "replicas": 4},
}


def _manifest(tmp_path: Path, *objects: dict[str, object]) -> str:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def test_an_object_of_another_namespace_is_kubectls_error(tmp_path, capsys) -> None:
    other = {**POOL, "metadata": {"name": "vmss-workers", "namespace": "elsewhere"}}
    result = run_cli(capsys, "diff", "-f", _manifest(tmp_path, other), "--against", DUMP)
    assert result.code == 1
    assert result.err.splitlines()[0] == (
        'error: the namespace from the provided object "elsewhere" does not match the namespace '
        "\"capi-prod\". You must pass '--namespace=elsewhere' to perform this operation."
    )


def test_an_export_given_as_the_manifest_and_all_namespaces_are_usage_errors(
    tmp_path, capsys
) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "manifest.yaml").write_text("kind: MachinePoolExport\n")
    result = run_cli(capsys, "diff", "-f", str(tmp_path / "e"), "--against", DUMP)
    assert (result.code, result.err.splitlines()[0]) == (
        2,
        f"error: {tmp_path / 'e'} is an export, not a manifest",
    )
    result = run_cli(capsys, "diff", "-f", _manifest(tmp_path, POOL), "-A", "--against", DUMP)
    assert result.code == 2
    assert result.err.startswith("error: unknown shorthand flag: 'A' in -A")


def test_other_kinds_are_named_as_not_compared(tmp_path, capsys) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"}}
    result = run_cli(
        capsys, "diff", "-f", _manifest(tmp_path, POOL, secret), "--against", DUMP,
        "--server-side=false", "--exit-code",
    )  # fmt: skip
    assert (result.code, result.err) == (1, "")
    assert (
        result.out.splitlines()[0]
        == "MachinePool capi-prod/vmss-workers (AzureMachinePool): scales"
    )
    assert result.out.splitlines()[-1].endswith("Secret capi-prod/token")


def test_hostile_text_is_escaped(tmp_path, capsys) -> None:
    hostile = {**POOL, "metadata": {"name": "vmss-workers", "annotations": {"x\x1b[2J": "\x07"}}}
    result = run_cli(capsys, "diff", "-f", _manifest(tmp_path, hostile), "--against", DUMP)
    assert result.code == 0
    assert "\x1b" not in result.out
    assert "\\x1b[2J" in result.out


def test_nothing_to_compare_says_so(tmp_path, capsys) -> None:
    secret = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    result = run_cli(capsys, "diff", "-f", _manifest(tmp_path, secret), "--against", DUMP)
    assert result.out.startswith("not compared (not a MachinePool")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("diff", "-f", ""), [":0"]),
        (("diff", "--against", ""), [":0"]),
        (("diff", "-o", ""), ["text", "json", "yaml", ":4"]),
        (("diff", "--ex"), ["--exit-code", ":4"]),
    ],
)
def test_flags_complete(capsys, words, expected) -> None:
    complete(list(words))
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == expected
