from __future__ import annotations

import json

import pytest
import yaml
from support.objects import NOW, list_scenario

from kubectl_machinepool.color import Palette
from kubectl_machinepool.model import machine_pools
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView
from kubectl_machinepool.snapshot import Snapshot


def view(generation: str = "v1beta2", **kwargs: object) -> ListView:
    pools = machine_pools(Snapshot.of(list_scenario(generation, "capi-prod")))
    return ListView(
        pools=pools, now=NOW, palette=Palette(bool(kwargs.pop("color", False))), **kwargs
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml", "name"])
def test_list_formats(fmt: str, golden) -> None:
    golden(f"list/{fmt}.txt", LIST_FORMATS[fmt](view()))


@pytest.mark.parametrize("fmt", ["table", "wide", "json", "yaml", "name"])
def test_v1beta1_renders_like_v1beta2_apart_from_api_version(fmt: str) -> None:
    v2 = LIST_FORMATS[fmt](view("v1beta2"))
    v1 = LIST_FORMATS[fmt](view("v1beta1"))
    assert v1 == v2.replace("cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta1")


def test_all_namespaces_adds_a_namespace_column_and_no_headers_drops_headers(golden) -> None:
    golden(
        "list/wide-all-namespaces-no-headers.txt",
        LIST_FORMATS["wide"](view(all_namespaces=True, no_headers=True)),
    )


def test_colour_marks_only_phase_and_short_ready(golden) -> None:
    text = LIST_FORMATS["table"](view(color=True))
    golden("list/table-color.txt", text)
    plain = LIST_FORMATS["table"](view())
    assert "\x1b[" not in plain
    assert "\x1b[" not in LIST_FORMATS["json"](view(color=True))


def test_structured_output_is_a_documented_list() -> None:
    doc = json.loads(LIST_FORMATS["json"](view()))
    assert doc["kind"] == "MachinePoolSummaryList"
    assert yaml.safe_load(LIST_FORMATS["yaml"](view())) == doc
    asg = next(i for i in doc["items"] if i["name"] == "asg-workers")
    assert asg["replicas"] == {"desired": 3, "current": 3, "ready": 2, "available": 2}
    assert asg["infrastructure"] == {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "AWSMachinePool",
        "name": "asg-workers",
        "machineKind": None,
    }


def test_an_empty_list_renders_nothing_as_table() -> None:
    empty = ListView(pools=[], now=NOW, palette=Palette(False))
    assert LIST_FORMATS["table"](empty) == ""
    assert json.loads(LIST_FORMATS["json"](empty))["items"] == []
