"""Where each label and annotation of a MachinePool template did, or could not, arrive.

Cluster API's rules (its machine controller's Node sync; docs/diff-metadata.md): without
MachinePool Machines nothing of the template reaches Nodes. With them, every template label and
annotation is applied to the Machines, and from a Machine only these reach its Node: labels in
node-role.kubernetes.io, node-restriction.kubernetes.io or node.cluster.x-k8s.io (and their
subdomains, except for node-role) or matching a regex of --additional-sync-machine-labels;
annotations in node.cluster.x-k8s.io or matching
--additional-sync-machine-annotations. The regexes are unanchored, as Go's MatchString is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.fields import (
    RawObject,
    dig,
    mapping,
    string_map,
    text,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.controllers import args as container_args
from kubectl_machinepool.model.controllers import flag_values, manager, split_arg
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.goregex import unsafe_reason
from kubectl_machinepool.model.states import MachineState, NodeState

Kind = Literal["label", "annotation"]
State = Literal["present", "missing", "different", "never"]

LABELS_FROM_MACHINE = "cluster.x-k8s.io/labels-from-machine"
ANNOTATIONS_FROM_MACHINE = "cluster.x-k8s.io/annotations-from-machine"
LABELS_FLAG = "--additional-sync-machine-labels"
ANNOTATIONS_FLAG = "--additional-sync-machine-annotations"

# What Cluster API (or ClusterClass) writes on its own: not the user's to diff.
_OWN_KEYS = frozenset(
    {
        "cluster.x-k8s.io/cluster-name",
        "cluster.x-k8s.io/pool-name",
        "kubectl.kubernetes.io/last-applied-configuration",
    }
)
_OWN_PREFIXES = ("topology.cluster.x-k8s.io/",)


def users_key(key: str) -> bool:
    return key not in _OWN_KEYS and not key.startswith(_OWN_PREFIXES)


def _domain(key: str) -> str:
    return key.split("/", maxsplit=1)[0]


def _in(domain: str, zone: str) -> bool:
    return domain == zone or domain.endswith("." + zone)


@record
class SyncRules:
    """The core manager's extra sync regexes, and where they were learnt."""

    labels: tuple[str, ...] = ()
    annotations: tuple[str, ...] = ()
    source: str = "defaults only: the capi-controller-manager Deployment was not read"

    def label_synced(self, key: str) -> bool:
        domain = _domain(key)
        if domain == "node-role.kubernetes.io":  # this one without subdomains
            return True
        if _in(domain, "node-restriction.kubernetes.io") or _in(domain, "node.cluster.x-k8s.io"):
            return True
        return any(re.search(pattern, key) for pattern in self.labels)

    def annotation_synced(self, key: str) -> bool:
        if _in(_domain(key), "node.cluster.x-k8s.io"):
            return True
        return any(re.search(pattern, key) for pattern in self.annotations)


def sync_args(args: Sequence[str]) -> list[str]:
    """The args sync_rules reads of these: each that holds a sync flag or a sync flag's value
    (an export keeps these alone; the others may carry anything)."""
    flags = (LABELS_FLAG, ANNOTATIONS_FLAG)
    kept: list[str] = []
    after_flag = False
    for arg in args:
        wanted = False
        for token in split_arg(arg) if " " in arg else [arg]:
            wanted = wanted or after_flag or token.startswith(tuple(f + "=" for f in flags))
            after_flag = token in flags
            wanted = wanted or after_flag
        if wanted:
            kept.append(arg)
    return kept


def sync_rules(
    core_controller: RawObject | None,
    labels_override: Sequence[str] | None,
    annotations_override: Sequence[str] | None,
) -> SyncRules:
    """From the flags when given, else the manager container's args of the core controller."""
    args: list[str] = []
    source = SyncRules().source
    if core_controller is not None:
        args = container_args(manager(core_controller) or {})
        meta = mapping(core_controller.get("metadata"))
        source = f"args of Deployment {text(meta.get('namespace'))}/{text(meta.get('name'))}"
    if labels_override or annotations_override:
        source = "command-line flags" + ("" if core_controller is None else f" (over the {source})")
    ignored: list[str] = []
    labels = _patterns(labels_override, flag_values(args, LABELS_FLAG), ignored)
    annotations = _patterns(annotations_override, flag_values(args, ANNOTATIONS_FLAG), ignored)
    if ignored:
        source += "; ignored: " + "; ".join(ignored)
    return SyncRules(tuple(labels), tuple(annotations), source)


def _patterns(given: Sequence[str] | None, deployed: list[str], ignored: list[str]) -> list[str]:
    """The flag's regexes (a bad one is the user's error), else the Deployment's: one this
    process cannot compile (Go's syntax differs a little) or may not run safely is left out and
    named, not fatal."""
    if given:
        for pattern in given:
            why = _unusable(pattern)
            if why:
                raise UsageError(f"invalid sync regex {pattern!r}: {why}")
        return list(given)
    usable = []
    for pattern in deployed:
        why = _unusable(pattern)
        if why:
            ignored.append(f"{pattern!r} ({why})")
        else:
            usable.append(pattern)
    return usable


def _unusable(pattern: str) -> str | None:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        return f"Python cannot compile it: {err}"
    return unsafe_reason(pattern)


@record
class Arrival:
    """One template key on one object."""

    target: str  # "Machine ns/name" or "Node name"
    state: State
    actual: str | None = None


@record
class KeyReport:
    kind: Kind
    key: str
    value: str
    # None: expected on the pool's Nodes (or unknown, see nodes); else why it never gets there.
    never_reason: str | None
    machines: tuple[Arrival, ...]
    # None when the Nodes could not be compared (PoolPropagation.nodes_unknown says why).
    nodes: tuple[Arrival, ...] | None

    @property
    def everywhere(self) -> bool:
        if self.nodes is None and self.never_reason is None:
            return False  # not known for the Nodes
        return all(
            a.state == "present"
            for a in (*self.machines, *(self.nodes or ()))
            if a.state != "never"
        )

    @property
    def short(self) -> tuple[Arrival, ...]:
        return tuple(
            a for a in (*self.machines, *(self.nodes or ())) if a.state in ("missing", "different")
        )


@record
class Leftover:
    """A key Cluster API put on a Node (its tracking annotation says) the template no longer has."""

    kind: Kind
    key: str
    node: str
    value: str | None


@record
class PoolPropagation:
    pool: PoolDescription
    keys: tuple[KeyReport, ...]
    leftovers: tuple[Leftover, ...]
    rules: SyncRules
    # Why the Nodes were not compared (not read, or whether Cluster API syncs to them unknown).
    nodes_unknown: str | None = None

    @property
    def summary(self) -> str:
        everywhere = sum(1 for k in self.keys if k.everywhere and k.never_reason is None)
        short = [k for k in self.keys if k.short]
        objects = {a.target for k in short for a in k.short}
        never = sum(1 for k in self.keys if k.never_reason is not None)
        parts = [f"{everywhere} key{'s' if everywhere != 1 else ''} propagated everywhere"]
        if self.nodes_unknown:
            on_machines = sum(1 for k in self.keys if all(a.state == "present" for a in k.machines))
            parts = [f"{on_machines} key{'s' if on_machines != 1 else ''} on every Machine"]
        if short:
            nodes = sum(1 for o in objects if o.startswith("Node "))
            machines = len(objects) - nodes
            where = " and ".join(
                f"{n} {w}{'s' if n != 1 else ''}"
                for n, w in ((machines, "Machine"), (nodes, "Node"))
                if n
            )
            parts.append(f"{len(short)} missing or different on {where}")
        parts.append(f"{never} will never reach Nodes")
        if self.nodes_unknown:
            parts.append(f"Nodes not compared: {self.nodes_unknown}")
        if self.leftovers:
            parts.append(f"{len(self.leftovers)} left on Nodes from an older template")
        return ", ".join(parts)


def _arrival(target: str, have: dict[str, str], key: str, value: str) -> Arrival:
    if key not in have:
        return Arrival(target, "missing")
    if have[key] != value:
        return Arrival(target, "different", have[key])
    return Arrival(target, "present", value)


def _nodes_unknown(pool: PoolDescription) -> str | None:
    if not pool.uses_machines and pool.pool.has_machines is None:
        found = "not readable" if pool.infra_unread else "not found"
        return f"whether the pool has MachinePool Machines is unknown (its infra pool is {found})"
    if pool.counts.nodes_matched is None:
        return "the Nodes of the workload cluster were not read"
    return None


def _never_reason(kind: Kind, key: str, pool: PoolDescription, rules: SyncRules) -> str | None:
    if not pool.uses_machines and pool.pool.has_machines is None:
        return None  # without the infra pool, nothing says whether Nodes get template metadata
    if not pool.uses_machines:
        return (
            "the pool has no MachinePool Machines: Cluster API copies no template metadata "
            "to its Nodes"
        )
    if kind == "label" and not rules.label_synced(key):
        return (
            "label outside the synced domains node-role.kubernetes.io, "
            "node-restriction.kubernetes.io and node.cluster.x-k8s.io, "
            f"and no {LABELS_FLAG} regex matches"
        )
    if kind == "annotation" and not rules.annotation_synced(key):
        return f"annotation outside node.cluster.x-k8s.io, and no {ANNOTATIONS_FLAG} regex matches"
    return None


def _tracked(node_annotations: dict[str, str], name: str) -> list[str]:
    return [k for k in node_annotations.get(name, "").split(",") if k]


def _meta(obj: MachineState | NodeState, kind: Kind) -> dict[str, str]:
    return obj.labels if kind == "label" else obj.annotations


def propagation(pool: PoolDescription, raw_pool: RawObject, rules: SyncRules) -> PoolPropagation:
    """The diff of one pool's template metadata against its Machines and Nodes."""
    template = dig(raw_pool, "spec", "template", "metadata")
    wanted: dict[Kind, dict[str, str]] = {
        "label": {k: v for k, v in string_map(dig(template, "labels")).items() if users_key(k)},
        "annotation": {
            k: v for k, v in string_map(dig(template, "annotations")).items() if users_key(k)
        },
    }
    machines = [i.machine for i in pool.instances if i.machine]
    unknown = _nodes_unknown(pool)
    nodes = [i.node for i in pool.instances if i.node and i.listed] if unknown is None else []
    reports = []
    for kind, keys in wanted.items():
        for key, value in sorted(keys.items()):
            never = _never_reason(kind, key, pool, rules)
            on_machines = tuple(
                _arrival(
                    f"Machine {m.object.namespace}/{m.object.name}", _meta(m, kind), key, value
                )
                for m in machines
            )
            on_nodes = tuple(
                Arrival(f"Node {n.name}", "never", _meta(n, kind).get(key))
                if never
                else _arrival(f"Node {n.name}", _meta(n, kind), key, value)
                for n in nodes
            )
            reports.append(
                KeyReport(kind, key, value, never, on_machines, None if unknown else on_nodes)
            )
    leftovers = []
    trackers: tuple[tuple[Kind, str], ...] = (
        ("label", LABELS_FROM_MACHINE),
        ("annotation", ANNOTATIONS_FROM_MACHINE),
    )
    for node in nodes:
        for kind, tracker in trackers:
            for key in _tracked(node.annotations, tracker):
                if key not in wanted[kind] and users_key(key):
                    leftovers.append(Leftover(kind, key, node.name, _meta(node, kind).get(key)))
    return PoolPropagation(pool, tuple(reports), tuple(leftovers), rules, unknown)
