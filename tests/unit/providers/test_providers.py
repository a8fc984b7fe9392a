"""The provider registry agrees with the delete-machine verdict table (docs/delete-machine.md) and
with the fixture kind list."""

from __future__ import annotations

import re

import pytest
from support.docs import page
from support.kinds import provider_kinds

from kubectl_machinepool.base.fields import field_keys
from kubectl_machinepool.providers.deletion import DeletionVerdict, Verdict, pool_deletion_verdict
from kubectl_machinepool.providers.registry import (
    INFRA_GROUP,
    PROVIDERS,
    annotation_deletes,
    infra_pool,
    instance_deletion,
)

_WORD = {Verdict.SUPPORTED: "supported", Verdict.NOT_SUPPORTED: "refused"}
_WORD[Verdict.UNVERIFIED] = "unverified"


def _table_rows() -> list[list[str]]:
    """The body rows of the delete-machine verdict table, as lists of cells."""
    lines = page("delete-machine").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("**Verdicts**"))
    table = []
    for line in lines[start + 1 :]:
        if table and not line.startswith("|"):
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table[2:]  # past the header and the |---| line


ROWS = _table_rows()


def _row(prefix: str) -> list[str]:
    return next(row for row in ROWS if row[0].startswith(prefix))


def _pairs(cell: str) -> list[tuple[str, str]]:
    """(infra pool, machine kind) pairs of a row: `A, B → M` is two pairs, notes stripped."""
    bare = re.sub(r"\s*\([^)]*\)", "", cell).replace("`", "")
    pairs, pending = [], []
    for item in (part.strip() for part in bare.split(",")):
        if "→" in item:
            pool, machine = (side.strip() for side in item.split("→"))
            pairs += [(kind, machine) for kind in [*pending, pool]]
            pending = []
        else:
            pending.append(item)
    if pending:
        assert "names its own kind" in cell, f"no machine kind for {pending} in {cell!r}"
        pairs += [(kind, kind) for kind in pending]
    return pairs


def _words(row: list[str]) -> tuple[str, str]:
    replace, scale = (re.match(r"[a-z-]+", cell).group() for cell in row[1:3])  # type: ignore[union-attr]
    return replace, replace if scale == "same" else scale


def _expected(verdict: DeletionVerdict) -> tuple[str, str]:
    """The words the table must use: --scale-down also needs the annotated instance to go first."""
    replace = _WORD[verdict.verdict]
    if verdict.verdict is Verdict.SUPPORTED:
        return replace, "supported" if verdict.honours_delete_annotation else "refused"
    return replace, replace


PAIR_ROWS = [row for row in ROWS if "→" in row[0] or "names its own kind" in row[0]]


@pytest.mark.parametrize("row", PAIR_ROWS, ids=[row[0][:40] for row in PAIR_ROWS])
def test_table_row_says_what_the_registry_decides(row: list[str]) -> None:
    for kind, machine_kind in _pairs(row[0]):
        verdict = pool_deletion_verdict(INFRA_GROUP, kind, machine_kind)
        assert _words(row) == _expected(verdict), (kind, machine_kind)
        assert verdict.verdict is not Verdict.UNVERIFIED, f"{kind} → {machine_kind} is unknown"
        deletion = instance_deletion(INFRA_GROUP, kind, machine_kind)
        if deletion and deletion.sticky_when_managed:
            assert "replicas-managed-by" in row[1], kind


def test_every_record_with_a_machine_kind_has_a_table_row() -> None:
    in_table = {pair for row in PAIR_ROWS for pair in _pairs(row[0])}
    in_registry = {(p.kind, p.machine_kind) for p in PROVIDERS if p.machine_kind}
    assert in_registry == in_table


def test_table_no_machine_kind_row_holds_for_every_such_record() -> None:
    row = _row("no machine kind")
    kinds = [p.kind for p in PROVIDERS if p.machine_kind is None]
    # AWSMachinePool sets no machine kind without CAPA's MachinePoolMachines gate.
    for kind in [*kinds, "AWSMachinePool"]:
        assert _words(row) == _expected(pool_deletion_verdict(INFRA_GROUP, kind, None)), kind
    assert "AWSMachinePool without the gate" in row[0]


def test_table_any_other_pair_row_holds_for_unknown_pairs() -> None:
    row = _row("any other pair")
    for kind, machine_kind in [
        ("KarpenterMachinePool", "KarpenterMachine"),
        ("AzureMachinePool", "AWSMachine"),
    ]:
        verdict = pool_deletion_verdict(INFRA_GROUP, kind, machine_kind)
        assert _words(row) == _expected(verdict) == ("unverified", "unverified")


def _fixture_kinds(role: str) -> dict[str, dict[str, str]]:
    return {entry["kind"]: entry for entry in provider_kinds() if entry["role"] == role}


def test_registry_groups_agree_with_provider_kinds_yaml() -> None:
    fixtures = _fixture_kinds("infra-pool")
    shared = [p for p in PROVIDERS if p.kind in fixtures]
    assert shared
    for provider in shared:
        assert provider.group == fixtures[provider.kind]["group"], provider.kind


def test_registry_has_every_infra_pool_kind_of_provider_kinds_yaml() -> None:
    assert set(_fixture_kinds("infra-pool")) <= {p.kind for p in PROVIDERS}


def test_machine_kinds_are_infra_machines_of_the_pool_group() -> None:
    machines = _fixture_kinds("infra-machine")
    for provider in PROVIDERS:
        entry = machines.get(provider.machine_kind or "")
        if entry is not None:
            assert entry["group"] == provider.group, provider.kind


def test_one_record_per_kind() -> None:
    # annotation_deletes() looks kinds up without a group: a kind must not repeat.
    kinds = [p.kind for p in PROVIDERS]
    assert len(kinds) == len(set(kinds))


def test_field_paths_are_object_paths() -> None:
    path = re.compile(r"(spec|status)(\.[a-z][A-Za-z0-9]*(\[\])?)+")
    for provider in PROVIDERS:
        fields = [
            *(f.path for f in provider.version_fields),
            *(provider.zones.fields + provider.zones.placed_by if provider.zones else ()),
            *(provider.zones.rebalance_suspended if provider.zones else ()),
            provider.provisioning_state_field,
        ]
        for field in filter(None, fields):
            assert path.fullmatch(field), (provider.kind, field)


def test_version_fields_name_their_source() -> None:
    for provider in PROVIDERS:
        for field in provider.version_fields:
            assert field.source.endswith(".go"), (provider.kind, field.path)
    deployed = [(p.kind, f.path) for p in PROVIDERS for f in p.version_fields if f.deployed]
    assert deployed == [("OCIManagedMachinePool", "spec.version")]


def test_field_keys_refuses_a_path_through_a_list() -> None:
    assert field_keys("spec.template.image") == ("spec", "template", "image")
    with pytest.raises(ValueError, match="crosses a list"):
        field_keys("spec.placementConfigs[].availabilityDomain")


def test_lookup_needs_group_and_machine_kind() -> None:
    assert infra_pool(INFRA_GROUP, "AzureMachinePool") is not None
    assert infra_pool("infrastructure.example.com", "AzureMachinePool") is None
    assert infra_pool(None, None) is None
    assert instance_deletion(INFRA_GROUP, "AzureMachinePool", "AzureMachinePoolMachine")
    assert instance_deletion(INFRA_GROUP, "AzureMachinePool", "AWSMachine") is None


@pytest.mark.parametrize(
    ("kind", "deletes"),
    [
        ("AzureMachinePool", True),
        ("AWSMachinePool", False),
        ("DevMachinePool", False),
        ("OCIMachinePool", False),
        ("GCPManagedMachinePool", False),
        ("KarpenterMachinePool", False),
        ("", False),
    ],
)
def test_annotation_deletes(kind: str, deletes: bool) -> None:
    assert annotation_deletes(kind) is deletes
