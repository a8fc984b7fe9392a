"""The pure pipeline every command runs on a dump, and the invariants of what comes out.

load_dump → describe → diagnose → every renderer in every output format of list, describe,
diagnose and diff-metadata, the way the commands call them (colour off).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from support.documents import describe_document

from kubectl_machinepool.app.listing import listed_pools
from kubectl_machinepool.app.reading import list_kinds
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import dig, text
from kubectl_machinepool.diagnostics.rules import capi_version, core_controller, diagnose
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import Description, describe
from kubectl_machinepool.model.propagation import propagation, sync_rules
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.findings import DiagnosisView, diagnosis_document, render_diagnosis
from kubectl_machinepool.render.glyphs import ASCII, UNICODE
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView, list_document
from kubectl_machinepool.render.propagation import propagation_document, render_propagation
from kubectl_machinepool.render.structured import to_json, to_yaml
from kubectl_machinepool.render.tree import TreeOptions, render_tree

NOW = datetime(2026, 11, 29, 15, 0, 0, tzinfo=UTC)
SCHEMA_PATH = (
    Path(__file__).resolve().parents[2] / "kubectl_machinepool" / "schemas" / "describe.json"
)
DESCRIBE_SCHEMA = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))

# What text output must never carry raw: C0 but newline, DEL, C1 (ESC is C0). Lone surrogates
# cannot even be encoded for a terminal.
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


# More address space than any example may take on top of what the test process holds.
MEMORY_HEADROOM = 1024 * 1024 * 1024


@contextmanager
def memory_guard(headroom: int = MEMORY_HEADROOM) -> Iterator[None]:
    """A blow-up fails the example with MemoryError instead of the machine's OOM killer ending
    the whole run (and whatever else shares the machine). Linux only; elsewhere a no-op."""
    try:
        import resource

        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = in_use + headroom
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    except MemoryError:
        raise AssertionError(f"the example needed over {headroom >> 20} MiB") from None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@dataclass
class Outputs:
    """Everything the commands would print, by name: text, and parsed documents."""

    texts: dict[str, str] = field(default_factory=dict)
    documents: dict[str, tuple[Any, str, str]] = field(default_factory=dict)


def snapshot_from(content: str) -> Snapshot:
    return load_dump(["-"], io.StringIO(content))


def _list_outputs(snapshot: Snapshot, out: Outputs) -> None:
    # As `list -f`: the dump cut to what list reads, each pool judged by the rules list covers.
    selection = Selection()
    pools = listed_pools(list_kinds(snapshot, selection), NOW, selection)
    for all_namespaces in (True, False):
        view = ListView(pools, NOW, Palette(False), all_namespaces, no_headers=not all_namespaces)
        for fmt, render in LIST_FORMATS.items():
            if fmt not in ("json", "yaml"):
                out.texts[f"list-{fmt}-{all_namespaces}"] = render(view)
            elif all_namespaces:  # the documents do not depend on it
                out.documents[f"list-{fmt}"] = (list_document(view), render(view), fmt)


def _describe_outputs(description: Description, findings: list[Any], out: Outputs) -> None:
    variants = [
        TreeOptions(now=NOW, palette=Palette(False), findings=tuple(findings)),
        TreeOptions(
            now=NOW,
            palette=Palette(False),
            show_all=True,
            show_conditions=frozenset({"all"}),
            glyphs=ASCII,
            no_headers=True,
            findings=tuple(findings),
        ),
        TreeOptions(
            now=NOW,
            palette=Palette(False),
            show_conditions=frozenset({"machinepool", "node"}),
            glyphs=UNICODE,
        ),
    ]
    for index, opts in enumerate(variants):
        out.texts[f"describe-tree-{index}"] = render_tree(description, opts)
    document = describe_document(description, findings)
    out.documents["describe-json"] = (document, to_json(document), "json")
    out.documents["describe-yaml"] = (document, to_yaml(document), "yaml")


def _diagnose_outputs(description: Description, snapshot: Snapshot, out: Outputs) -> list[Any]:
    capi = capi_version(snapshot, None)
    findings = diagnose(description, snapshot, capi, Thresholds())
    view = DiagnosisView(description, findings, capi, Thresholds(), Palette(False))
    out.texts["diagnose-text"] = render_diagnosis(view)
    document = diagnosis_document(view)
    out.documents["diagnose-json"] = (document, to_json(document), "json")
    out.documents["diagnose-yaml"] = (document, to_yaml(document), "yaml")
    return findings


def _metadata_outputs(description: Description, snapshot: Snapshot, out: Outputs) -> None:
    rules = sync_rules(core_controller(snapshot), (), ())
    results = [
        propagation(
            pool,
            snapshot.find(CAPI_GROUP, "MachinePool", pool.pool.namespace, pool.pool.name) or {},
            rules,
        )
        for cluster in description.clusters
        for pool in cluster.pools
    ]
    out.texts["diff-metadata-text"] = render_propagation(results, Palette(False))
    document = propagation_document(results)
    out.documents["diff-metadata-json"] = (document, to_json(document), "json")
    out.documents["diff-metadata-yaml"] = (document, to_yaml(document), "yaml")


def run_pipeline(snapshot: Snapshot) -> tuple[Description, Outputs]:
    out = Outputs()
    _list_outputs(snapshot, out)
    description = describe(snapshot, Selection(), NOW)
    findings = _diagnose_outputs(description, snapshot, out)
    _describe_outputs(description, findings, out)
    _metadata_outputs(description, snapshot, out)
    return description, out


# -- invariants ---------------------------------------------------------------------------------


def short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


def first_difference(got: Any, want: Any, where: str = "") -> str:
    """Where two documents first differ, in a line (pytest's own diff of megabytes would not)."""
    if type(got) is not type(want):
        return f"{where or '.'}: {short(got, 120)} instead of {short(want, 120)}"
    if isinstance(want, dict):
        if list(got) != list(want):
            return (
                f"{where or '.'}: keys {short(list(got), 200)} instead of {short(list(want), 200)}"
            )
        for key in want:
            if got[key] != want[key]:
                return first_difference(got[key], want[key], f"{where}.{key}")
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where or '.'}: {len(got)} items instead of {len(want)}"
        for index, (a, b) in enumerate(zip(got, want, strict=True)):
            if a != b:
                return first_difference(a, b, f"{where}[{index}]")
    return f"{where or '.'}: {short(got, 120)} instead of {short(want, 120)}"


def parse_output(rendered: str, fmt: str) -> Any:
    if fmt == "json":
        return json.loads(rendered)
    try:
        return yaml.load(rendered, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        # libyaml refuses \uD800 escapes that PyYAML itself writes for lone surrogates.
        return yaml.safe_load(rendered)


def nan_named(value: Any) -> Any:
    """The document with each NaN as a string: list's items are the objects as read, and a dump
    may hold NaN, which equals nothing, not even the NaN it parses back to."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: nan_named(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nan_named(v) for v in value]
    return value


def check_documents(out: Outputs) -> None:
    """JSON and YAML parse back to exactly the document; describe's matches its schema."""
    for name, (document, rendered, fmt) in out.documents.items():
        # A bool, not `assert a == b`: pytest's diff of two huge documents can take gigabytes.
        same = nan_named(parse_output(rendered, fmt)) == nan_named(document)
        assert same, (
            f"{name} does not round-trip: {first_difference(parse_output(rendered, fmt), document)}"
        )
    document = out.documents["describe-json"][0]
    errors = sorted(DESCRIBE_SCHEMA.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "describe -o json breaks its schema: " + "; ".join(
        f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:3]
    )


def check_identities(snapshot: Snapshot, out: Outputs) -> None:
    """Every MachinePool of the input is described under its own names, unmodified."""
    expected = sorted(
        (
            text(dig(raw, "metadata", "namespace")) or "",
            text(dig(raw, "metadata", "name")) or "",
            text(dig(raw, "metadata", "uid")) or "",
        )
        for raw in snapshot.of_kind(CAPI_GROUP, "MachinePool")
    )
    document = parse_output(out.documents["describe-json"][1], "json")
    described = sorted(
        (pool["namespace"], pool["name"], pool["uid"])
        for cluster in document["clusters"]
        for pool in cluster["machinePools"]
    )
    same = described == expected
    assert same, f"describe shows {short(described)}, the input holds {short(expected)}"
    listed = parse_output(out.documents["list-json"][1], "json")
    summaries = [p["summary"] for p in listed["items"]]
    items = sorted((p["namespace"], p["name"], p["uid"]) for p in summaries)
    same = items == expected
    assert same, f"list shows {short(items)}, the input holds {short(expected)}"


def control_characters(out: Outputs) -> dict[str, str]:
    """Text outputs holding a raw control character, with the first offending line."""
    bad = {}
    for name, rendered in out.texts.items():
        found = FORBIDDEN.search(rendered)
        if found:
            start = rendered.rfind("\n", 0, found.start()) + 1
            end = rendered.find("\n", found.start())
            bad[name] = rendered[start : end if end >= 0 else None][:300]
    return bad
