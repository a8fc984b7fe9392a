"""Offline input: objects from `kubectl get -o yaml|json` output instead of a live cluster.

Accepts files (also pipes such as `<(kubectl get …)`), directories (their *.yaml, *.yml and
*.json regular files, not recursive, like kubectl -f) and `-` for stdin, within inputfiles.py's
bounds on bytes and values; multi-document YAML, JSON objects one after another, and `kind:
List` (or `*List`) wrappers, also raw API lists whose items carry no kind. Node objects are the
workload cluster's Nodes.

A dump is untrusted input: whatever it holds must end in objects of bounded size and depth or
in one `error:` line, never in a traceback, a hang or a memory blow-up in a later stage.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import yaml

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, text
from kubectl_machinepool.base.inputfiles import Budget, decoded, read_file, read_stdin
from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.offline.jsonyaml import json_loader

SUFFIXES = (".yaml", ".yml", ".json")
# The parser, C when PyYAML has it; json_loader makes it read only what JSON holds.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Far deeper than any Kubernetes object (a CRD's schema included); the parsers and the YAML
# composer recurse, so past this a dump is refused before any stack runs out.
MAX_DEPTH = 200
# YAML aliases let a few bytes stand for an exponentially large value ("billion laughs"). A
# document may expand to this many times its own length (plus a floor for tiny documents);
# kubectl never writes aliases, so only hand-made input comes near it.
ALIAS_EXPANSION = 10
ALIAS_FLOOR = 100_000
# Kubernetes numbers are int64; Python would carry (and fail to print) far larger ones.
_INT_RANGE = range(-(2**63), 2**63)
# Where a dump's objects say when something happened: their newest is the dump's own time.
_CONDITION_LISTS = (
    ("status", "conditions"),
    ("status", "v1beta2", "conditions"),
    ("status", "deprecated", "v1beta1", "conditions"),
)
_CONDITION_TIMES = ("lastTransitionTime", "lastHeartbeatTime", "lastUpdateTime")
_EVENT_TIMES = ("lastTimestamp", "eventTime", "deprecatedLastTimestamp")
# A real object holds a few dozen conditions or managedFields entries; the rest of a longer
# list is not looked at, so the scan stays a few steps per object whatever a dump holds.
_TIMES_PER_LIST = 64


def _sources(paths: Sequence[str], stdin: TextIO | None) -> Iterator[tuple[str, str]]:
    budget = Budget(paths[0] if len(paths) == 1 else "the -f input")
    for name in paths:
        if name == "-":
            yield "<stdin>", read_stdin(stdin, budget)
            continue
        path = Path(name)
        if path.is_dir():
            for child in sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file()):
                yield str(child), decoded(str(child), read_file(str(child), budget))
        else:
            yield name, decoded(name, read_file(name, budget, named=True))


def _too_deep(source: str) -> MachinePoolError:
    return MachinePoolError(f"cannot parse {source}: nested too deeply (over {MAX_DEPTH} levels)")


def _check_values(doc: Any, source: str, *, shared: bool) -> None:
    """Depth and integer range of a parsed document, a level at a time, without recursion: a
    loop over the values, with no record made per value (ten million took 10 s that way).

    shared: YAML aliases may share a container; each is visited once, since its depth was
    already bounded on the node graph and the first (shallowest) depth seen is enough here.
    """
    seen: set[int] = set()
    level, depth = [doc], 1
    while level:
        below: list[Any] = []
        for value in level:
            kind = type(value)
            if kind is dict or kind is list:
                if shared:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                if depth > MAX_DEPTH:
                    raise _too_deep(source)
                if kind is dict:
                    below.extend(value)
                    below.extend(value.values())
                else:
                    below.extend(value)
            elif kind is int and value not in _INT_RANGE:
                raise MachinePoolError(f"cannot parse {source}: a number does not fit in 64 bits")
        level, depth = below, depth + 1


def _not_a_number(word: str) -> float:
    """Python's JSON reader takes NaN and Infinity, which JSON (and the API server) does not."""
    raise ValueError(f"{word} is no JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is beyond a JSON number's range")
    return value


def _int64(text: str) -> int:
    # Before int(): Python's own refusal past 4300 digits names sys.set_int_max_str_digits.
    if len(text.lstrip("-")) > len(str(2**63)):
        raise ValueError("a number does not fit in 64 bits")
    return int(text)


def _json_stream(content: str) -> Iterator[Any]:
    """JSON values one after another, as `kubectl get -o json a; kubectl get -o json b` writes."""
    decoder = json.JSONDecoder(parse_constant=_not_a_number, parse_float=_finite, parse_int=_int64)
    position = 0
    while True:
        while position < len(content) and content[position].isspace():
            position += 1
        if position == len(content):
            return
        value, position = decoder.raw_decode(content, position)
        yield value


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_size(root: yaml.Node, source: str) -> int:
    """The size of the document once every alias is expanded, computed on the node graph.

    An alias is the same node object as its anchor, so memoising per node keeps this linear in
    the text while the expansion may be exponential. A node that contains its own alias would
    expand forever; the depth is that of the expanded tree.
    """
    sizes: dict[int, int] = {}
    heights: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            children = _children(node)
            scalar = len(node.value) if isinstance(node, yaml.ScalarNode) else 0
            sizes[key] = 1 + scalar + sum(sizes[id(c)] for c in children)
            heights[key] = 1 + max((heights[id(c)] for c in children), default=0)
            if heights[key] > MAX_DEPTH:
                raise _too_deep(source)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise MachinePoolError(f"cannot parse {source}: a YAML alias refers to itself")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def _yaml_stream(content: str, source: str) -> Iterator[Any]:
    """yaml.load_all, except that each document's node graph is measured before it is built."""
    loader = json_loader(_Loader)(content)
    # Without an anchor there is no alias: the graph is a tree, which _check_values measures.
    aliased = "&" in content
    budget = ALIAS_EXPANSION * len(content) + ALIAS_FLOOR
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if aliased:
                budget -= _expanded_size(node, source)
            if budget < 0:
                raise MachinePoolError(
                    f"cannot parse {source}: excessive aliasing (its YAML aliases expand to "
                    f"over {ALIAS_EXPANSION} times its size)"
                )
            yield loader.construct_document(node)
    finally:
        loader.dispose()


def _documents(source: str, content: str) -> Iterator[Any]:
    try:
        if content.lstrip().startswith(("{", "[")):
            documents, shared = _json_stream(content), False
        else:
            # The C or Python SafeLoader; only an anchor lets a container be shared.
            documents, shared = _yaml_stream(content, source), "&" in content
        for doc in documents:
            _check_values(doc, source, shared=shared)
            yield doc
    except RecursionError as err:
        # The parsers recurse per level; a stack that runs out first is the same verdict.
        raise _too_deep(source) from err
    except (ValueError, yaml.YAMLError) as err:
        if "maximum nesting depth" in str(err):  # libyaml's own limit
            raise _too_deep(source) from err
        raise MachinePoolError(f"cannot parse {source}: {_reason(err)}") from err
    except (LookupError, ArithmeticError) as err:
        # PyYAML's own constructors fail so on a tag over what it cannot hold: `!!bool maybe`,
        # an empty `!!int`, a base-60 float past a double.
        raise MachinePoolError(f"cannot parse {source}: a value its YAML tag cannot hold") from err


def _reason(err: Exception) -> str:
    """One line: the problem and where, not the first line of PyYAML's several."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem:
        mark = err.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        return f"{err.problem}{where}"
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def read_documents(source: str, content: str) -> list[Any]:
    """Every document of a YAML or JSON text, within dumps' bounds on nesting and aliases."""
    return list(_documents(source, content))


def _objects(doc: Any, source: str, defaults: dict[str, str] | None = None) -> Iterator[RawObject]:
    if doc is None:
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _objects(item, source, defaults)
        return
    if isinstance(doc, dict) and defaults:
        doc = {**defaults, **doc}  # raw API lists leave kind and apiVersion to the list
    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str) or not doc["kind"]:
        raise MachinePoolError(f"{source} holds something that is not a Kubernetes object")
    kind = doc["kind"]
    if "apiVersion" in doc and not isinstance(doc["apiVersion"], str):
        raise MachinePoolError(f"{source} holds a {kind} whose apiVersion is not a string")
    if kind.endswith("List") and isinstance(doc.get("items"), list):
        item_defaults = {"apiVersion": doc.get("apiVersion", "v1")}
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
        key = (str(obj.get("apiVersion", "")).rpartition("/")[0], obj["kind"],
               text(meta.get("namespace")) or "", text(meta.get("name")) or "")  # fmt: skip
        latest.pop(key, None)
        latest[key] = obj
    return list(latest.values())


def objects_in(source: str, content: str) -> list[RawObject]:
    """The objects of one file's text, within dumps' bounds."""
    return [obj for doc in _documents(source, content) for obj in _objects(doc, source)]


def _head(value: object) -> list[dict[str, object]]:
    return items(value[:_TIMES_PER_LIST] if isinstance(value, list) else None)


def _times(obj: RawObject) -> Iterator[object]:
    meta = mapping(obj.get("metadata"))
    yield meta.get("creationTimestamp")
    yield meta.get("deletionTimestamp")
    for entry in _head(meta.get("managedFields")):
        yield entry.get("time")
    for path in _CONDITION_LISTS:
        for condition in _head(dig(obj, *path)):
            yield from (condition.get(key) for key in _CONDITION_TIMES)
    yield dig(obj, "status", "lastUpdated")  # a Machine's
    if obj.get("kind") == "Event":
        yield from (obj.get(key) for key in _EVENT_TIMES)
        yield dig(obj, "series", "lastObservedTime")


def newest_time(objects: Iterable[RawObject]) -> datetime | None:
    """The newest time a dump's objects record: the nearest it says of when it was taken (a
    Ready Node's heartbeat is minutes old at most, any other time older than the dump)."""
    times = (parse_time(value) for obj in objects for value in _times(obj))
    return max((t for t in times if t is not None), default=None)


def load_dump(
    paths: Sequence[str], stdin: TextIO | None, *, now: datetime | None = None
) -> Snapshot:
    """The objects of -f's paths; an export (kubectl machinepool export) as it was captured.

    A dump records no capture time: unless now (--now) is given, it is read as at its newest
    timestamp, and a note says so."""
    from kubectl_machinepool.offline import bundlefiles

    exports = [p for p in paths if p != "-" and bundlefiles.is_export(p)]
    if exports:
        if len(paths) > 1:
            raise MachinePoolError(
                f"{exports[0]} is an export: it is read on its own",
                hint="pass one export per command, without other -f paths",
            )
        return bundlefiles.load(exports[0], objects_in)
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
    snapshot = replace(Snapshot.of(rest, workloads=[workload]), offline=True)
    newest = None if now is not None else newest_time(objects)
    if newest is None:
        return snapshot
    said = (
        f"the dump has no capture time: ages are as at {format_time(newest)}, its newest "
        "timestamp; give --now to change it"
    )
    return replace(snapshot, captured=newest, notes=(said,), remarks=(said,))
