"""Offline input: objects from `kubectl get -o yaml|json` output instead of a live cluster.

Accepts files, directories (their *.yaml, *.yml and *.json files, not recursive, like kubectl
-f) and `-` for stdin; multi-document YAML, JSON, and `kind: List` (or `*List`) wrappers.
Node objects are the workload cluster's Nodes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import yaml

from kubectl_machinepool.errors import MachinePoolError
from kubectl_machinepool.snapshot import RawObject, Snapshot, WorkloadNodes

SUFFIXES = (".yaml", ".yml", ".json")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _sources(paths: Sequence[str], stdin: TextIO) -> Iterator[tuple[str, str]]:
    for name in paths:
        if name == "-":
            yield "<stdin>", stdin.read()
            continue
        path = Path(name)
        if path.is_dir():
            for child in sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file()):
                yield str(child), child.read_text()
        elif path.is_file():
            yield name, path.read_text()
        else:
            raise MachinePoolError(
                f'the path "{name}" does not exist', hint="pass a file, a directory or -"
            )


def _documents(source: str, text: str) -> Iterator[Any]:
    try:
        if text.lstrip().startswith(("{", "[")):
            yield json.loads(text)
        else:
            yield from yaml.load_all(text, Loader=_Loader)  # the C or Python SafeLoader
    except (ValueError, yaml.YAMLError) as err:
        raise MachinePoolError(f"cannot parse {source}: {err}".splitlines()[0]) from err


def _objects(doc: Any, source: str) -> Iterator[RawObject]:
    if doc is None:
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _objects(item, source)
        return
    if not isinstance(doc, dict) or "kind" not in doc:
        raise MachinePoolError(f"{source} holds something that is not a Kubernetes object")
    if str(doc["kind"]).endswith("List") and isinstance(doc.get("items"), list):
        yield from _objects(doc["items"], source)
        return
    yield doc


def load_dump(paths: Sequence[str], stdin: TextIO) -> Snapshot:
    objects: list[RawObject] = []
    for source, text in _sources(paths, stdin):
        for doc in _documents(source, text):
            objects.extend(_objects(doc, source))
    nodes = tuple(o for o in objects if o.get("kind") == "Node" and o.get("apiVersion") == "v1")
    rest = [o for o in objects if not (o.get("kind") == "Node" and o.get("apiVersion") == "v1")]
    if nodes:
        workload = WorkloadNodes(None, None, nodes)
    else:
        note = "the input holds no Node objects, so Nodes are not shown"
        workload = WorkloadNodes(None, None, None, note)
    return Snapshot.of(rest, workloads=[workload])
