"""Hypothesis strategies: realistic dumps, then broken the ways real and hostile input breaks.

Every example starts from objects shaped like what Cluster API and its providers write (the
scenarios of tests/support, in both Cluster API generations, and the shipped example dumps) and
applies a few mutations: fields removed, nulled or retyped at any depth, strings replaced by
control characters, escape sequences, lone surrogates or huge text, numbers at and past their
limits, odd timestamps, duplicate objects, ownerReference cycles and shared subtrees (which the
YAML writer turns into anchors and aliases). The result is serialised the ways `kubectl get`
output reaches the tool: a JSON List, concatenated JSON, a YAML List or multi-document YAML.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st
from support.scenarios import SCENARIOS, core_manager

Obj = dict[str, Any]
Path_ = tuple[Any, ...]

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "capi-prod"
GENERATIONS = ("v1beta2", "v1beta1")


def _examples() -> dict[str, list[Obj]]:
    out = {}
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        out[f"examples/{path.name}"] = yaml.safe_load(path.read_text())["items"]
    return out


def _bases() -> dict[str, str]:
    """Each realistic starting point, kept as JSON text so every example gets a fresh copy."""
    bases = {
        f"{name}/{generation}": SCENARIOS[name](generation, NAMESPACE)
        for name in sorted(SCENARIOS)
        for generation in GENERATIONS
    }
    bases.update(_examples())
    return {label: json.dumps(objects) for label, objects in bases.items()}


BASES = _bases()

# -- hostile values -----------------------------------------------------------------------------

C0 = [chr(c) for c in range(0x20)]
C1 = [chr(c) for c in range(0x80, 0xA0)]
SEQUENCES = [
    "\x1b]0;title\x07",  # OSC: set the window title
    "\x1b]52;c;aGFja2Vk\x07",  # OSC 52: write the clipboard
    "\x1b[2J",  # CSI: clear the screen
    "\x1b[31m",
    "\x1b[0m",
    "\x9b2J",  # the same CSI as one C1 character
    "\x1bP1$r\x1b\\",  # DCS
    "\r\x1b[K",
    "\u202e",  # right-to-left override
    "\u2028",
    "\ufeff",
    "\x7f",
]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
NON_ASCII = ["é", "ß", "ü", "日本", "🙂", "\u0301", "Ω", "\u00a0", "٣", "²"]


def hostile_text(surrogates: bool) -> st.SearchStrategy[str]:
    pieces = [*C0, *C1, *SEQUENCES, *NON_ASCII, *(SURROGATES if surrogates else [])]
    part = st.one_of(st.sampled_from(pieces), st.text(max_size=6))
    return st.lists(part, min_size=1, max_size=8).map("".join)


def huge_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(20_000, 120_000).map(lambda n: "x" * n),
        st.integers(5_000, 30_000).map(lambda n: "word " * n),
        st.integers(2_000, 20_000).map(lambda n: "\x1b[2J" * n),
    )


INT_EDGES = [0, -1, 1, 2**31 - 1, 2**31, -(2**31), 2**63 - 1, -(2**63), 2**63, 2**70, 10**30]
FLOAT_EDGES = [0.0, -0.0, 1.5, 1.30, -1.0, 1e300, math.inf, -math.inf, math.nan]
TIME_EDGES = [
    "0001-01-01T00:00:00Z",  # Go's zero time, which objects do carry
    "0001-01-01T00:00:00+23:59",  # out of range once in UTC
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59Z",
    "2026-11-29T15:00:00.123456789Z",
    "2026-11-29T15:00:00+02:00",
    "2026-11-29",
    "2026-13-45T99:99:99Z",
    "yesterday",
    "",
]
STRING_EDGES = [
    "",
    " ",
    "True",
    "False",
    "Unknown",
    "true",
    "null",
    "~",
    "-",
    "0",
    "1.30",
    "*",
    "&a",
    "<<",
    "---",
    "...",
    "%YAML",
    "!!binary",
    "v1.33.4",
    "1.33",
]


EDGES = [None, True, False, *INT_EDGES, *FLOAT_EDGES, *STRING_EDGES, *TIME_EDGES]


def scalar_values(surrogates: bool) -> st.SearchStrategy[Any]:
    # One flat one_of: nested ones of small sampled_from lists make generation ten times slower.
    return st.one_of(
        st.sampled_from(EDGES),
        st.integers(-(2**63), 2**63 - 1),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        hostile_text(surrogates),
    )


def any_values(surrogates: bool) -> st.SearchStrategy[Any]:
    """Any JSON-like value: what a field of the wrong type may hold."""
    return st.recursive(
        scalar_values(surrogates),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(
                st.one_of(st.text(max_size=8), hostile_text(surrogates)), inner, max_size=4
            ),
        ),
        max_leaves=12,
    )


# -- walking the objects ------------------------------------------------------------------------


def paths(value: Any) -> list[Path_]:
    """Every position inside value (not value itself), parents before children. A subtree that
    appears in several places (share_subtree) is entered through the first of them only."""
    out: list[Path_] = []
    entered: set[int] = set()
    stack: list[tuple[Path_, Any]] = [((), value)]
    while stack:
        here, node = stack.pop()
        if isinstance(node, dict | list):
            if id(node) in entered:
                continue
            entered.add(id(node))
        children = (
            list(node.items())
            if isinstance(node, dict)
            else list(enumerate(node))
            if isinstance(node, list)
            else []
        )
        for key, child in children:
            out.append((*here, key))
            stack.append(((*here, key), child))
    return out


def _containers(value: Any) -> set[int]:
    """The ids of value and every container inside it."""
    found: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list) and id(node) not in found:
            found.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return found


def get(value: Any, path: Path_) -> Any:
    for key in path:
        value = value[key]
    return value


def put(root: Any, path: Path_, new: Any) -> None:
    get(root, path[:-1])[path[-1]] = new


def remove(root: Any, path: Path_) -> None:
    del get(root, path[:-1])[path[-1]]


# -- mutations ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    # Lone surrogates survive JSON (as \ud800 escapes) but not every YAML reader.
    surrogates: bool
    # datetime and date values exist only where YAML made them from unquoted timestamps.
    yaml_types: bool


Mutation = Callable[[st.DrawFn, list[Obj], Options], None]


def _pick_path(draw: st.DrawFn, objects: list[Obj], only: Callable[[Any], bool] | None = None):
    candidates = [p for p in paths(objects) if len(p) > 1]
    if only is not None:
        candidates = [p for p in candidates if only(get(objects, p))] or candidates
    return draw(st.sampled_from(candidates)) if candidates else None


def delete_field(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    path = _pick_path(draw, objects)
    if path is not None:
        remove(objects, path)


def null_field(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    path = _pick_path(draw, objects)
    if path is not None:
        put(objects, path, None)


def retype_field(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    path = _pick_path(draw, objects)
    if path is None:
        return
    choices = [any_values(opts.surrogates)]
    if opts.yaml_types:
        choices.append(
            st.sampled_from(
                [datetime(2026, 11, 20, 9, tzinfo=UTC), datetime(2026, 11, 20, 9), date(2026, 1, 1)]
            )
        )
    put(objects, path, draw(st.one_of(*choices)))


def hostile_string(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """A string field (names, messages, labels, providerIDs) made hostile."""
    path = _pick_path(draw, objects, lambda v: isinstance(v, str))
    if path is None:
        return
    old = get(objects, path)
    new = draw(st.one_of(hostile_text(opts.surrogates), st.sampled_from(STRING_EDGES)))
    how = draw(st.sampled_from(["replace", "prefix", "suffix"]))
    old = old if isinstance(old, str) else ""
    put(objects, path, {"replace": new, "prefix": new + old, "suffix": old + new}[how])


def hostile_key(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """A label or annotation key (or any mapping key) made hostile."""
    path = _pick_path(draw, objects, lambda v: isinstance(v, dict) and bool(v))
    if path is None:
        return
    mapping = get(objects, path)
    if not isinstance(mapping, dict) or not mapping:
        return
    key = draw(st.sampled_from(sorted(mapping, key=str)))
    mapping[draw(hostile_text(opts.surrogates))] = mapping.pop(key)


def huge_strings(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    path = _pick_path(draw, objects, lambda v: isinstance(v, str))
    if path is not None:
        put(objects, path, draw(huge_text()))


def edge_number(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    path = _pick_path(
        draw, objects, lambda v: isinstance(v, int | float) and not isinstance(v, bool)
    )
    if path is not None:
        put(objects, path, draw(st.sampled_from([*INT_EDGES, *FLOAT_EDGES, "3", "-3", "²", "--5"])))


def edge_time(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    def is_time(value: Any) -> bool:
        return isinstance(value, str) and value[:2] == "20" and "T" in value

    path = _pick_path(draw, objects, is_time)
    if path is not None:
        put(objects, path, draw(st.sampled_from(TIME_EDGES)))


def duplicate_object(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """The same uid twice: a copy under another name, or in another namespace, or identical."""
    source = draw(st.sampled_from(objects))
    copy = json.loads(json.dumps(source, default=str))
    meta = copy.get("metadata")
    if isinstance(meta, dict):
        how = draw(st.sampled_from(["rename", "renamespace", "same", "new-uid"]))
        if how == "rename":
            meta["name"] = f"{meta.get('name')}-twin"
        elif how == "renamespace":
            meta["namespace"] = "elsewhere"
        elif how == "new-uid":
            meta["uid"] = "00000000-0000-0000-0000-000000000000"
    objects.insert(draw(st.integers(0, len(objects))), copy)


def owner_cycle(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """Two objects that each claim to control the other (or one that controls itself)."""
    first, second = draw(st.sampled_from(objects)), draw(st.sampled_from(objects))
    for owned, owner in ((first, second), (second, first)):
        meta, owner_meta = owned.get("metadata"), owner.get("metadata")
        if not isinstance(meta, dict) or not isinstance(owner_meta, dict):
            continue
        # Copies: a shared subtree may stand where the owner's name is, and the reference
        # must not make the owned object contain itself.
        meta["ownerReferences"] = copy.deepcopy(
            [
                {
                    "apiVersion": owner.get("apiVersion"),
                    "kind": owner.get("kind"),
                    "name": owner_meta.get("name"),
                    "uid": owner_meta.get("uid"),
                    "controller": True,
                }
            ]
        )


def share_subtree(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """One subtree in two places: the YAML writer makes that an anchor and an alias."""
    source = _pick_path(draw, objects, lambda v: isinstance(v, dict | list))
    target = _pick_path(draw, objects)
    if source is None or target is None:
        return
    subtree = get(objects, source)
    if id(get(objects, target[:-1])) in _containers(subtree):
        return  # never put a subtree inside itself: JSON cannot write that, YAML loops
    put(objects, target, subtree)


def cross_link(draw: st.DrawFn, objects: list[Obj], opts: Options) -> None:
    """A value of one object where the same field of another object belongs (a Machine's
    providerID on another pool, a pool name label pointing elsewhere)."""
    source = _pick_path(draw, objects, lambda v: isinstance(v, str))
    if source is None:
        return
    same_field = [p for p in paths(objects) if len(p) > 1 and p[1:] == source[1:]]
    target = draw(st.sampled_from(same_field)) if same_field else source
    put(objects, target, get(objects, source))


MUTATIONS: list[Mutation] = [
    delete_field,
    null_field,
    retype_field,
    hostile_string,
    hostile_string,
    hostile_key,
    huge_strings,
    edge_number,
    edge_time,
    duplicate_object,
    owner_cycle,
    share_subtree,
    cross_link,
]


# -- whole dumps --------------------------------------------------------------------------------

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
FORMATS = ("json-list", "json-stream", "yaml-list", "yaml-documents")


@dataclass(frozen=True)
class Dump:
    base: str
    format: str
    mutations: tuple[str, ...]
    objects: list[Obj]
    text: str

    def __repr__(self) -> str:
        # The text itself can be megabytes; hypothesis prints this for a failing example.
        head = self.text[:600] + ("…" if len(self.text) > 600 else "")
        return (
            f"Dump(base={self.base!r}, format={self.format!r}, mutations={self.mutations!r}, "
            f"{len(self.text)} characters: {head!r})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # noqa: ARG002 - its protocol
        printer.text(repr(self))


def serialise(objects: list[Obj], fmt: str) -> str:
    if fmt == "json-list":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, default=str)
    if fmt == "json-stream":
        return "\n".join(json.dumps(o, indent=1, default=str) for o in objects)
    if fmt == "yaml-list":
        return yaml.dump({"apiVersion": "v1", "kind": "List", "items": objects}, Dumper=DUMPER)
    return yaml.dump_all(objects, Dumper=DUMPER)


@st.composite
def dumps(
    draw: st.DrawFn,
    mutations: st.SearchStrategy[Mutation] | None = None,
    max_mutations: int = 6,
) -> Dump:
    base = draw(st.sampled_from(sorted(BASES)))
    objects: list[Obj] = json.loads(BASES[base])
    if draw(st.booleans()):
        args = draw(
            st.sampled_from(
                [
                    (),
                    ("--additional-sync-machine-labels=^team$",),
                    ("--additional-sync-machine-labels", "^example\\.com/,x"),
                ]
            )
        )
        image = draw(
            st.sampled_from(
                [
                    "registry.example/capi:v1.14.2",
                    "capi:v1.10.0",
                    "capi",
                    "capi:latest@sha256:00",
                    "capi:v" + "9" * 5000 + ".1.1",
                ]
            )
        )
        objects.append(core_manager(NAMESPACE, image=image, args=args))
    fmt = draw(st.sampled_from(FORMATS))
    opts = Options(surrogates=fmt.startswith("json"), yaml_types=fmt.startswith("yaml"))
    chosen = st.sampled_from(MUTATIONS) if mutations is None else mutations
    applied = draw(st.lists(chosen, max_size=max_mutations))
    for mutation in applied:
        if objects:
            mutation(draw, objects, opts)
    names = tuple(m.__name__ for m in applied)
    return Dump(base, fmt, names, objects, serialise(objects, fmt))


# -- YAML text with anchors and aliases, written by hand -----------------------------------------


def alias_bomb(levels: int, width: int, where: str = "labels") -> str:
    """A Node whose label value is a nested alias list: width**levels strings from a few lines."""
    lines = [f"    a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"    a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: bomb\n"
        f"  {where}:\n" + "\n".join(lines) + f"\n    big: *a{levels - 1}\n"
    )


@st.composite
def aliased_yaml(draw: st.DrawFn) -> str:
    """A realistic dump whose YAML uses anchors, aliases and merge keys, some of them hostile."""
    base = draw(st.sampled_from(sorted(BASES)))
    objects: list[Obj] = json.loads(BASES[base])
    for _ in range(draw(st.integers(0, 3))):
        share_subtree(draw, objects, Options(surrogates=False, yaml_types=True))
    fmt = draw(st.sampled_from(["yaml-list", "yaml-documents"]))
    text = serialise(objects, fmt)
    extra = draw(
        st.sampled_from(
            [
                "",
                alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 12))),
                alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 12)), "annotations"),
                # a node that contains its own alias
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: loop\n  labels: &l {a: *l}\n",
                "apiVersion: v1\nkind: Node\nmetadata: &m\n  name: loop\n  labels: [*m]\n",
                # merge keys, fine and recursive
                "kind: X\napiVersion: v1\nmetadata:\n  name: m\n  labels: &base {a: b}\n"
                "  annotations: {<<: *base, c: d}\n",
                "kind: X\napiVersion: v1\nmetadata: &m\n  name: m\n  labels: {<<: *m}\n",
                # an alias before its anchor, and an anchor defined twice
                "kind: X\napiVersion: v1\nmetadata: {name: *nope}\n",
                "kind: X\napiVersion: v1\nmetadata: {name: &a x, uid: &a y, namespace: *a}\n",
                # YAML-only types where strings belong
                "kind: Node\napiVersion: v1\nmetadata:\n  name: !!binary aGk=\n",
                "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  labels: !!set {a, b}\n"
                "  annotations: !!omap [{a: 1}]\n  creationTimestamp: 2026-11-20T09:00:00Z\n",
                "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  labels: {? [a, b] : c}\n",
                "kind: Node\napiVersion: v1\nmetadata:\n  name: n\n  labels: {1: 2, null: ~, "
                "true: false, 1.5: .nan, 2026-01-01: x}\n",
            ]
        )
    )
    if extra:
        text = (
            text.rstrip("\n") + "\n---\n" + extra if draw(st.booleans()) else extra + "---\n" + text
        )
    return text


def nested(depth: int, fmt: str) -> str:
    """A MachinePool whose label value is nested depth levels deep."""
    if fmt == "json":
        value = "[" * depth + "]" * depth
        return (
            '{"kind": "MachinePool", "apiVersion": "cluster.x-k8s.io/v1beta2", '
            f'"metadata": {{"name": "deep", "labels": {{"x": {value}}}}}}}'
        )
    if fmt == "yaml-flow":
        value = "{a: " * depth + "b" + "}" * depth
    else:
        value = "\n" + "".join("  " * (i + 2) + "- \n" for i in range(depth))
        return (
            "kind: MachinePool\napiVersion: cluster.x-k8s.io/v1beta2\nmetadata:\n  name: deep\n"
            f"  labels:\n    x:{value}"
        )
    return (
        "kind: MachinePool\napiVersion: cluster.x-k8s.io/v1beta2\nmetadata:\n  name: deep\n"
        f"  labels: {{x: {value}}}\n"
    )


# -- write commands: flag values and the annotations they judge ----------------------------------


def argv_text() -> st.SearchStrategy[str]:
    """Hostile text as a command line can carry it: no NUL (C strings), and of the surrogates
    only the ones Python makes of bytes that are not UTF-8 (surrogateescape)."""
    return st.one_of(hostile_text(False), st.sampled_from(["\udc80", "\udcff", "x\udce9"])).map(
        lambda value: value.replace("\x00", "")
    )


DURATION_EDGES = ["0", "1s", "10m", "1h30m", "300", "500ms", "1.5m", "-1s", "", " ", "abc", "10x",
                  "1e9h", "2562047h", "2562048h", "9" * 30 + "s", "1m1m", "٣s", "1_0s"]  # fmt: skip
VERSION_EDGES = ["v1.34.1", "1.34.1", "v1.34.0", "v1.33.4", "v1.35.0", "v2.0.0", "v1.34", "v1",
                 "v1.34.0;$(id)", "v1.34.0\x1b[2J", "v1.34.1-rc.1", "v1.34.1+build.1", " v1.34.1",
                 "v01.34.1", "V1.34.1", "v1.34.1\n", "v9999.9999.999999", "v٣.34.1", ""]  # fmt: skip
# Sizes as a command line spells them: kubectl takes an int32, Python's int() a good deal more.
COUNT_EDGES = ["0", "1", "2", "3", "5", "-1", str(2**31 - 1), str(2**31), str(2**63), "9" * 30,
               "-0", "+3", "1.5", "", "abc", "0x10", "1_0", "٣", " 3"]  # fmt: skip
# What the size, pause, restart and autoscaler annotations may hold, well-formed or not.
ANNOTATION_EDGES = ["", "-1", "0", "1", "2", "5", "abc", "1.0", "1e0", "9" * 30, "2099-01-01T00:00:00Z",
                    "2026-11-29T14:00:00Z", "external-autoscaler", "MachinePool/x,Bogus/y"]  # fmt: skip


def _mostly(usual: st.SearchStrategy[str], odd: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Three in four values usual, so that most command lines reach a plan."""
    return st.integers(0, 3).flatmap(lambda n: odd if n == 0 else usual)


def durations() -> st.SearchStrategy[str]:
    return _mostly(
        st.sampled_from(["0", "30s", "5m", "10m", "1h30m", "300"]),
        st.one_of(
            st.sampled_from(DURATION_EDGES),
            st.integers(0, 10**12).map(lambda n: f"{n}m"),
            argv_text(),
        ),
    )


def versions() -> st.SearchStrategy[str]:
    number = st.integers(0, 10**5)
    return _mostly(
        st.sampled_from(["v1.34.1", "v1.34.0", "v1.33.5", "1.35.0", "v1.32.0", "v1.36.2"]),
        st.one_of(
            st.sampled_from(VERSION_EDGES),
            st.tuples(st.sampled_from(["v", ""]), number, number, number).map(
                lambda p: f"{p[0]}{p[1]}.{p[2]}.{p[3]}"
            ),
            argv_text(),
        ),
    )


def counts() -> st.SearchStrategy[str]:
    return _mostly(
        st.integers(0, 6).map(str),
        st.one_of(st.sampled_from(COUNT_EDGES), st.integers(-(2**40), 2**40).map(str), argv_text()),
    )


def annotation_values() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from([*ANNOTATION_EDGES, *TIME_EDGES]),
        st.integers(-5, 10).map(str),
        hostile_text(False),
    )


POOL_ANNOTATIONS = [
    "cluster.x-k8s.io/paused",
    "kubectl-machinepool/paused",
    "kubectl-machinepool/restart-started",
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
    "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
    "cluster.x-k8s.io/replicas-managed-by",
]


def _at(obj: Obj, *path: str) -> Obj:
    """The mapping at path inside obj, made where missing."""
    for key in path:
        obj = obj.setdefault(key, {})
    return obj


def write_state(draw: st.DrawFn, objects: list[Obj]) -> str:
    """What the write commands judge, made odd on one object: an annotation of the pool (its
    autoscaler bounds, pause and restart records...), a pause on the infra pool or the Cluster,
    the pool's version or size, a deletion under way, a Machine already marked for deletion.
    Said back in a few words, for a failing example's report."""
    obj = draw(st.sampled_from(objects))
    kind = str(obj.get("kind"))
    choices = {
        "MachinePool": ["annotation", "version", "replicas", "deleting"],
        "Cluster": ["paused", "spec.paused", "deleting"],
        "Machine": ["marked"],
    }.get(kind, ["paused"])
    what = draw(st.sampled_from(choices))
    value: object
    if what == "annotation":
        where, key = _at(obj, "metadata", "annotations"), draw(st.sampled_from(POOL_ANNOTATIONS))
        value = draw(annotation_values())
    elif what == "paused":
        where, key = _at(obj, "metadata", "annotations"), POOL_ANNOTATIONS[0]
        value = draw(st.sampled_from(["", "true"]))
    elif what == "spec.paused":
        where, key, value = _at(obj, "spec"), "paused", True
    elif what == "marked":
        where, key = _at(obj, "metadata", "annotations"), "cluster.x-k8s.io/delete-machine"
        value = draw(annotation_values())
    elif what == "deleting":
        where, key = _at(obj, "metadata"), "deletionTimestamp"
        value = draw(st.sampled_from(TIME_EDGES))
    elif what == "version":
        where, key, value = _at(obj, "spec", "template", "spec"), "version", draw(versions())
    else:
        # Within 64 bits: a dump with a larger number is refused whole, before any write.
        edges = [n for n in INT_EDGES if abs(n) < 2**63]
        where, key = _at(obj, "spec"), "replicas"
        value = draw(st.sampled_from([*edges, *FLOAT_EDGES, "3", None]))
    where[key] = value
    return f"{kind} {obj['metadata'].get('name')} {key}={value!r}"
