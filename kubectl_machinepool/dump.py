"""Offline input: objects from `kubectl get -o yaml|json` output instead of a live cluster.

Accepts files (also pipes such as `<(kubectl get …)`), directories (their *.yaml, *.yml and
*.json files, not recursive, like kubectl -f) and `-` for stdin; multi-document YAML, JSON
objects one after another, and `kind: List` (or `*List`) wrappers, also raw API lists whose
items carry no kind. Node objects are the workload cluster's Nodes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import yaml

from kubectl_machinepool.errors import MachinePoolError
from kubectl_machinepool.fields import mapping, text
from kubectl_machinepool.snapshot import RawObject, Snapshot, WorkloadNodes

SUFFIXES = (".yaml", ".yml", ".json")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(name: str, path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise MachinePoolError(f"cannot read {name}: not UTF-8 text ({err.reason})") from err
    except OSError as err:
        raise MachinePoolError(f"cannot read {name}: {err.strerror or err}") from err


def _sources(paths: Sequence[str], stdin: TextIO) -> Iterator[tuple[str, str]]:
    for name in paths:
        if name == "-":
            try:
                yield "<stdin>", stdin.read()
            except UnicodeDecodeError as err:
                raise MachinePoolError(f"cannot read stdin: not UTF-8 text ({err.reason})") from err
            continue
        path = Path(name)
        if path.is_dir():
            for child in sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file()):
                yield str(child), _read(str(child), child)
        elif path.exists():
            yield name, _read(name, path)
        else:
            raise MachinePoolError(
                f'the path "{name}" does not exist', hint="pass a file, a directory or -"
            )


def _json_stream(text: str) -> Iterator[Any]:
    """JSON values one after another, as `kubectl get -o json a; kubectl get -o json b` writes."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return
        value, position = decoder.raw_decode(text, position)
        yield value


def _documents(source: str, content: str) -> Iterator[Any]:
    try:
        if content.lstrip().startswith(("{", "[")):
            yield from _json_stream(content)
        else:
            yield from yaml.load_all(content, Loader=_Loader)  # the C or Python SafeLoader
    except (ValueError, yaml.YAMLError) as err:
        raise MachinePoolError(f"cannot parse {source}: {err}".splitlines()[0]) from err


def _objects(doc: Any, source: str, defaults: dict[str, str] | None = None) -> Iterator[RawObject]:
    if doc is None:
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _objects(item, source, defaults)
        return
    if isinstance(doc, dict) and defaults:
        doc = {**defaults, **doc}  # raw API lists leave kind and apiVersion to the list
    if not isinstance(doc, dict) or not text(doc.get("kind")):
        raise MachinePoolError(f"{source} holds something that is not a Kubernetes object")
    kind = str(doc["kind"])
    if kind.endswith("List") and isinstance(doc.get("items"), list):
        item_defaults = {"apiVersion": str(doc.get("apiVersion", "v1"))}
        if kind != "List":
            item_defaults["kind"] = kind.removesuffix("List")
        yield from _objects(doc["items"], source, item_defaults)
        return
    if not text(mapping(doc.get("metadata")).get("name")):
        raise MachinePoolError(f"{source} holds a {kind} without metadata.name")
    yield doc


def _last_of_each(objects: list[RawObject]) -> list[RawObject]:
    """One object per identity: the same object in two files (or twice in one) counts once."""
    latest: dict[tuple[str, str, str, str], RawObject] = {}
    for obj in objects:
        meta = mapping(obj.get("metadata"))
        key = (str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj["kind"]),
               str(meta.get("namespace", "")), str(meta["name"]))  # fmt: skip
        latest.pop(key, None)
        latest[key] = obj
    return list(latest.values())


def load_dump(paths: Sequence[str], stdin: TextIO) -> Snapshot:
    objects: list[RawObject] = []
    for source, content in _sources(paths, stdin):
        for doc in _documents(source, content):
            objects.extend(_objects(doc, source))
    objects = _last_of_each(objects)
    nodes = tuple(o for o in objects if o.get("kind") == "Node" and o.get("apiVersion") == "v1")
    rest = [o for o in objects if not (o.get("kind") == "Node" and o.get("apiVersion") == "v1")]
    if nodes:
        workload = WorkloadNodes(None, None, nodes)
    else:
        note = "the input holds no Node objects, so Nodes are not shown"
        workload = WorkloadNodes(None, None, None, note)
    return replace(Snapshot.of(rest, workloads=[workload]), offline=True)
