"""An export: what offline mode reads, as files for a support ticket or a CI artifact.

An export is a Snapshot written down: `manifest.yaml` (kind MachinePoolExport: when it was
captured, the versions, the scope, what could not be read and why, which file holds which
workload cluster), `management.json` (a List of the management cluster's objects) and one
`workload-N.json` per Cluster (a List of its Nodes and Node Events). Each object keeps only the
fields the readers read (exportfields.py). Read back, it is the same Snapshot to every reader, so
describe, diagnose and diff-metadata answer as they did at capture time.

Pure: documents in, documents out. Files are bundlefiles.py's.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, flag, items, mapping, strings, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.offline.exportfields import kept_fields

API_VERSION = "kubectl-machinepool/v1alpha1"
MANIFEST_KIND = "MachinePoolExport"
MANIFEST = "manifest.yaml"
MANAGEMENT = "management.json"
# Cluster names are not file names (they are someone else's text): workloads are numbered.
WORKLOAD_FILE = re.compile(r"workload-[1-9][0-9]{0,5}\.json")
# Far more Clusters than a management cluster holds: a manifest listing more is not an export.
MAX_WORKLOADS = 5000


@record(slots=False)
class Scope:
    """What was asked for, as the manifest records it."""

    namespace: str | None
    names: tuple[str, ...] = ()
    cluster: str | None = None
    selector: str | None = None


@record(slots=False)
class Versions:
    plugin: str
    capi: str | None
    capi_source: str


def _object_list(objects: Iterable[RawObject]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [kept_fields(o) for o in objects]}


def documents_of(
    snapshot: Snapshot, *, captured: datetime, scope: Scope, versions: Versions
) -> dict[str, dict[str, Any]]:
    """The export's documents by file name."""
    files: dict[str, dict[str, Any]] = {MANAGEMENT: _object_list(snapshot.objects)}
    workloads = []
    for index, workload in enumerate(snapshot.workloads, start=1):
        entry: dict[str, Any] = {
            "namespace": workload.namespace,
            "cluster": workload.cluster,
            "file": None,
            "note": workload.note,
            "unreachable": workload.unreachable,
            "tokenSecrets": None
            if workload.token_secrets is None
            else list(workload.token_secrets),
            "eventsRead": workload.events is not None,
        }
        if workload.read:
            entry["file"] = f"workload-{index}.json"
            files[entry["file"]] = _object_list([*(workload.nodes or ()), *(workload.events or ())])
        workloads.append(entry)
    manifest = {
        "apiVersion": API_VERSION,
        "kind": MANIFEST_KIND,
        "metadata": {"name": "export"},
        "capturedAt": format_time(captured),
        "pluginVersion": versions.plugin,
        "clusterAPIVersion": versions.capi,
        "clusterAPIVersionSource": versions.capi_source,
        "scope": {
            "namespace": scope.namespace,
            "names": list(scope.names),
            "cluster": scope.cluster,
            "selector": scope.selector,
        },
        # An export has its own capture time: a dump's remarks on its time are not its notes.
        "notes": [n for n in snapshot.notes if n not in snapshot.remarks],
        # Which of the notes only reads for rules gave: describe does not say them.
        "ruleNotes": list(snapshot.extra_notes),
        "unread": [{"group": g, "kind": k} for g, k in snapshot.unread],
        "unreadNotes": [{"group": g, "kind": k, "note": n} for g, k, n in snapshot.unread_notes],
        "secretsScope": snapshot.secrets_scope,
        "workloads": workloads,
        "redacted": False,
    }
    return {MANIFEST: manifest, **files}


# -- redaction ---------------------------------------------------------------------------------


def _strings_to_redact(
    documents: dict[str, dict[str, Any]], patterns: Sequence[re.Pattern[str]]
) -> set[str]:
    """The texts the patterns match in names, namespaces and label and annotation values."""
    found: set[str] = set()
    for name, document in documents.items():
        if name == MANIFEST:
            continue
        for obj in items(document.get("items")):
            meta = mapping(obj.get("metadata"))
            values = [text(meta.get("name")), text(meta.get("namespace"))]
            for key in ("labels", "annotations"):
                values += [v for v in mapping(meta.get(key)).values() if isinstance(v, str)]
            for value in values:
                for pattern in patterns:
                    found.update(m.group(0) for m in pattern.finditer(value or "") if m.group(0))
    return found


def _replaced(value: Any, swap: re.Pattern[str], tokens: dict[str, str]) -> Any:
    """Every string value with each redacted text swapped for its token; keys, apiVersions and
    kinds as they are, so that the objects still parse and refer to each other."""
    if isinstance(value, str):
        return swap.sub(lambda m: tokens[m.group(0)], value)
    if isinstance(value, list):
        return [_replaced(v, swap, tokens) for v in value]
    if isinstance(value, dict):
        return {
            k: v if k in ("apiVersion", "kind") else _replaced(v, swap, tokens)
            for k, v in value.items()
        }
    return value


def redacted(
    documents: dict[str, dict[str, Any]], patterns: Sequence[re.Pattern[str]]
) -> dict[str, dict[str, Any]]:
    """The documents with every text the patterns match (in a name, a namespace, a label or
    annotation value) replaced, wherever it appears, by the same token: references still
    join, and the texts cannot be recovered (the tokens are salted per export)."""
    found = _strings_to_redact(documents, patterns)
    salt = secrets.token_bytes(16)
    tokens = {t: "redacted-" + hashlib.sha256(salt + t.encode()).hexdigest()[:10] for t in found}
    result = dict(documents)
    if tokens:
        # Longest first, so that a text inside another is not swapped before it.
        swap = re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))
        result = {name: _replaced(doc, swap, tokens) for name, doc in documents.items()}
    result[MANIFEST] = {**result[MANIFEST], "redacted": True}
    return result


# -- reading back --------------------------------------------------------------------------------


def is_manifest(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("kind") == MANIFEST_KIND
        and obj.get("apiVersion") == API_VERSION
    )


def _invalid(what: str) -> MachinePoolError:
    return MachinePoolError(
        f"the export's {MANIFEST} is not valid: {what}",
        hint="export again with this version of kubectl machinepool",
    )


def workload_files(manifest: RawObject) -> list[str]:
    """The workload files the manifest names (each checked to be a plain numbered name)."""
    workloads = manifest.get("workloads")
    if isinstance(workloads, list) and len(workloads) > MAX_WORKLOADS:
        raise _invalid(f"it lists over {MAX_WORKLOADS} workload clusters")
    names = []
    for entry in items(workloads):
        name = entry.get("file")
        if name is None:
            continue
        if not isinstance(name, str) or not WORKLOAD_FILE.fullmatch(name):
            raise _invalid(f"workload file {name!r}")
        names.append(name)
    return names


def _objects(listed: dict[str, list[RawObject]], name: str) -> list[RawObject]:
    if name not in listed:
        raise MachinePoolError(f"the export holds no {name}", hint="export again")
    return listed[name]


def _workload(entry: dict[str, Any], listed: dict[str, list[RawObject]]) -> WorkloadNodes:
    objects = _objects(listed, entry["file"]) if isinstance(entry.get("file"), str) else None
    nodes = events = None
    if objects is not None:
        nodes = tuple(o for o in objects if o.get("kind") == "Node" and o.get("apiVersion") == "v1")
        if entry.get("eventsRead") is True:
            events = tuple(o for o in objects if o.get("kind") == "Event")
    tokens = entry.get("tokenSecrets")
    return WorkloadNodes(
        text(entry.get("namespace")),
        text(entry.get("cluster")),
        nodes,
        text(entry.get("note")),
        token_secrets=None if not isinstance(tokens, list) else strings(tokens),
        unreachable=flag(entry.get("unreachable")) is True,
        events=events,
    )


def _pairs(value: Any, *keys: str) -> Iterator[tuple[str, ...]]:
    for entry in items(value):
        found = tuple(v for k in keys if isinstance(v := entry.get(k), str))
        if len(found) != len(keys):
            raise _invalid(f"an entry without {', '.join(keys)}")
        yield found


def snapshot_of(manifest: RawObject, listed: dict[str, list[RawObject]]) -> Snapshot:
    """The Snapshot an export holds. listed: each file's objects by file name."""
    captured = parse_time(manifest.get("capturedAt"))
    if captured is None:
        raise _invalid("capturedAt is not an RFC 3339 time")
    scope = manifest.get("secretsScope")
    if scope is not None and not isinstance(scope, str):
        raise _invalid("secretsScope is not a string")
    notes, rule_notes = manifest.get("notes") or [], manifest.get("ruleNotes") or []
    for texts in (notes, rule_notes):
        if not isinstance(texts, list) or not all(isinstance(n, str) for n in texts):
            raise _invalid("notes are not strings")
    unread = [(g, k) for g, k in _pairs(manifest.get("unread"), "group", "kind")]
    unread_notes = [
        (g, k, n) for g, k, n in _pairs(manifest.get("unreadNotes"), "group", "kind", "note")
    ]
    workloads = [_workload(entry, listed) for entry in items(manifest.get("workloads"))]
    return Snapshot(
        objects=tuple(_objects(listed, MANAGEMENT)),
        notes=tuple(notes),
        workloads=tuple(workloads),
        unread=tuple(unread),
        unread_notes=tuple(unread_notes),
        secrets_scope=scope,
        captured=captured,
        extra_notes=tuple(rule_notes),
    )
