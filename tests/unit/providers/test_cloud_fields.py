"""The registry's cloud fields (providers.CloudFields): every template names what the model can
fill, every command is its cloud's own CLI, and describe's Cloud table names every kind's
fields."""

from __future__ import annotations

import pytest
from support.docs import page

from kubectl_machinepool.providers.records import template_fields
from kubectl_machinepool.providers.registry import PROVIDERS

# What model/cloud.py fills a command with: providerID parts, and the pool's name and ID.
COMMAND_PARTS = {"instance", "zone", "region", "project", "group", "scale_set", "vm"}
POOL_PARTS = {"pool", "pool_id"}
CLI = {"AWS": "aws", "Azure": "az", "GCP": "gcloud", "OCI": "oci", "Scaleway": "scw"}
CLI["Docker"] = "docker"
CLOUDED = [p for p in PROVIDERS if p.cloud is not None]


def test_every_kind_but_kwok_says_where_it_lives() -> None:
    assert [p.kind for p in PROVIDERS if p.cloud is None] == ["KwokMachinePool"]


@pytest.mark.parametrize("provider", CLOUDED, ids=[p.kind for p in CLOUDED])
def test_the_templates_name_only_what_can_be_filled(provider) -> None:
    cloud = provider.cloud
    for template in cloud.name:
        for name in template_fields(template):
            assert "." in name or name in {"cluster"} | COMMAND_PARTS, (template, name)
    for template in (*cloud.pool_id, *cloud.instance_type, *(t for _, t in cloud.image)):
        assert all("." in f for f in template_fields(template)), template
    for command in (*cloud.inspect, *cloud.replace):
        assert set(template_fields(command)) <= COMMAND_PARTS | POOL_PARTS, command
        assert command.split(" ")[0] == CLI[cloud.cloud], command
        assert "{instance}" in command or "{vm}" in command, command


def _cloud_table() -> dict[str, str]:
    """describe.md's Cloud table: each kind named in its first cell, with its row."""
    text = page("describe")
    start = text.index("| infra pool | name in the cloud |")
    rows: dict[str, str] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.strip().startswith("|"):
            break
        first = line.strip().strip("|").split("|")[0]
        for kind in first.replace(",", " ").split():
            rows[kind] = line
    return rows


@pytest.mark.parametrize("provider", CLOUDED, ids=[p.kind for p in CLOUDED])
def test_describe_docs_name_each_kinds_fields(provider) -> None:
    row = _cloud_table()[provider.kind]
    for field in provider.cloud.pool_fields:
        # The field, or the object it is in (`status.image`), as the row writes it.
        keys = field.split(".")
        named = {f"`{'.'.join(keys[:n])}`" for n in range(2, len(keys) + 1)}
        assert any(name in row for name in named), (provider.kind, field)
    for command in (*provider.cloud.inspect, *provider.cloud.replace):
        words = [w for w in command.split(" ")[:3] if "{" not in w and not w.startswith("-")]
        assert f"`{' '.join(words)}" in row, (provider.kind, command)
