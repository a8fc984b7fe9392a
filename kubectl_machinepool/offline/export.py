"""An export: what offline mode reads, as files for a support ticket or a CI artifact.

An export is a Snapshot written down: `manifest.yaml` (kind MachinePoolExport: when it was
captured, the versions, the scope, what could not be read and why, which file holds which
workload cluster), `management.json` (a List of the management cluster's objects, continued in
management-2.json and on past OBJECTS_PER_FILE) and one
`workload-N.json` per Cluster (a List of its Nodes and Node Events). Each object keeps only the
fields the readers read (exportfields.py). Read back, it is the same Snapshot to every reader, so
describe, diagnose and diff-metadata answer as they did at capture time; its Nodes are their
states, as read live.

Pure: documents in, documents out. Files are bundlefiles.py's.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, flag, items, mapping, strings, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.model.states import NodeState, node_state
from kubectl_machinepool.offline.exportfields import kept_fields

API_VERSION = "kubectl-machinepool/v1alpha1"
MANIFEST_KIND = "MachinePoolExport"
MANIFEST = "manifest.yaml"
MANAGEMENT = "management.json"
# Cluster names are not file names (they are someone else's text): workloads are numbered.
WORKLOAD_FILE = re.compile(r"workload-[1-9][0-9]{0,5}\.json")
# The management cluster's objects past the first file's share go on in management-2.json and
# on, each far under a file's bound (listfile.py): 50,000 Machines and infra machines take
# 125 MB. A manifest naming more files than MAX_MANAGEMENT_FILES is not an export.
MANAGEMENT_FILE = re.compile(r"management(-[1-9][0-9]{0,2})?\.json")
OBJECTS_PER_FILE = 50_000
MAX_MANAGEMENT_FILES = 100
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
    parts = [
        snapshot.objects[at : at + OBJECTS_PER_FILE]
        for at in range(0, max(len(snapshot.objects), 1), OBJECTS_PER_FILE)
    ]
    management = [MANAGEMENT, *(f"management-{n}.json" for n in range(2, len(parts) + 1))]
    files = {name: _object_list(part) for name, part in zip(management, parts, strict=True)}
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
    if len(management) > 1:  # one file, as earlier versions wrote, needs no list
        manifest["managementFiles"] = management
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


def management_files(manifest: RawObject) -> list[str]:
    """The files of the management cluster's objects, in order (management.json alone unless
    the manifest lists more)."""
    names = manifest.get("managementFiles", [MANAGEMENT])
    if not isinstance(names, list) or not 0 < len(names) <= MAX_MANAGEMENT_FILES:
        raise _invalid(f"managementFiles is not a list of 1 to {MAX_MANAGEMENT_FILES} files")
    for name in names:
        if not isinstance(name, str) or not MANAGEMENT_FILE.fullmatch(name):
            raise _invalid(f"management file {name!r}")
    if len(set(names)) != len(names):
        raise _invalid("managementFiles names a file twice")
    return names


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


@record(slots=False)
class WorkloadFile:
    """What the readers take of a workload file: its Nodes' states and its Events."""

    states: tuple[NodeState, ...]
    events: tuple[RawObject, ...]


def workload_file(objects: Iterable[RawObject]) -> WorkloadFile:
    """A workload file's objects as they are read: each Node made into its state and not kept,
    as live reads do (kube/workload.py), so that a fleet's Nodes are never held all at once."""
    states, events = [], []
    for obj in objects:
        kind = obj.get("kind")
        if kind == "Node" and obj.get("apiVersion") == "v1":
            states.append(node_state(obj))
        elif kind == "Event":
            events.append(obj)
    return WorkloadFile(tuple(states), tuple(events))


def _missing(name: str) -> MachinePoolError:
    return MachinePoolError(f"the export holds no {name}", hint="export again")


def _workload(entry: dict[str, Any], files: Mapping[str, WorkloadFile]) -> WorkloadNodes:
    name = entry.get("file")
    found = None
    if isinstance(name, str):
        if name not in files:
            raise _missing(name)
        found = files[name]
    tokens = entry.get("tokenSecrets")
    return WorkloadNodes(
        text(entry.get("namespace")),
        text(entry.get("cluster")),
        None,
        text(entry.get("note")),
        token_secrets=None if not isinstance(tokens, list) else strings(tokens),
        unreachable=flag(entry.get("unreachable")) is True,
        states=None if found is None else found.states,
        events=found.events if found is not None and entry.get("eventsRead") is True else None,
    )


def _pairs(value: Any, *keys: str) -> Iterator[tuple[str, ...]]:
    for entry in items(value):
        found = tuple(v for k in keys if isinstance(v := entry.get(k), str))
        if len(found) != len(keys):
            raise _invalid(f"an entry without {', '.join(keys)}")
        yield found


def snapshot_of(
    manifest: RawObject,
    management: Mapping[str, Sequence[RawObject]],
    workloads: Mapping[str, WorkloadFile],
) -> Snapshot:
    """The Snapshot an export holds: its manifest, the objects of each management file and
    what was taken of each workload file, by file name."""
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
    objects: list[RawObject] = []
    for name in management_files(manifest):
        if name not in management:
            raise _missing(name)
        objects += management[name]
    read = [_workload(entry, workloads) for entry in items(manifest.get("workloads"))]
    return Snapshot(
        objects=tuple(objects),
        notes=tuple(notes),
        workloads=tuple(read),
        unread=tuple(unread),
        unread_notes=tuple(unread_notes),
        secrets_scope=scope,
        captured=captured,
        extra_notes=tuple(rule_notes),
    )
