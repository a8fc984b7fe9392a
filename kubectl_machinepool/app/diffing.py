"""diff: the manifest's MachinePools, infra pools and bootstrap configs compared with the cluster
(a server-side dry-run apply, else client-side) or with an export, and what applying them does
to each pool.

Library code: no click, no printing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TextIO

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.model.manifestdiff import applied, diff_name, leaf_paths
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.plans.consequences import (
    Compared,
    DiffResult,
    consequences,
    pool_object,
    ref_of,
)
from kubectl_machinepool.plans.rolling import Budgets

_NOT_IN_EXPORT = "against the export {path}: client-side, on the fields an export keeps"
_AGAINST_DUMP = "against {path}: client-side, no defaulting, no webhooks"
_OFFLINE_BUDGETS = Budgets(None, "not read: compared against a file")


@record
class DiffAsked:
    filenames: tuple[str, ...]
    # An export or a dump to compare with, instead of the cluster.
    against: str | None = None
    server_side: bool = True
    workload_kubeconfig: str | None = None


@record
class Diffed:
    result: DiffResult
    # Objects of the manifest diff does not compare (kind namespace/name).
    skipped: tuple[str, ...]
    # What could not be read, for warning lines.
    notes: tuple[str, ...] = ()


def _manifests(asked: DiffAsked, stdin: TextIO | None, namespace: str) -> list[RawObject]:
    from kubectl_machinepool.offline.bundlefiles import is_export

    exports = [f for f in asked.filenames if f != "-" and is_export(f)]
    if exports:
        raise UsageError(
            f"{exports[0]} is an export, not a manifest",
            hint="-f takes the manifests to apply; compare them with an export by --against",
        )
    read = load_dump(asked.filenames, stdin)
    objects = [*read.objects, *(n for w in read.workloads for n in w.nodes or ())]
    return [_in_namespace(o, namespace) for o in sorted(objects, key=diff_name)]


def _in_namespace(obj: RawObject, namespace: str) -> RawObject:
    """kubectl's rule: an object without a namespace goes to -n's (or the context's); one
    naming another is an error."""
    meta = mapping(obj.get("metadata"))
    own = text(meta.get("namespace"))
    if own and own != namespace:
        raise MachinePoolError(
            f'the namespace from the provided object "{own}" does not match the namespace '
            f"\"{namespace}\". You must pass '--namespace={own}' to perform this operation.",
            hint="diff compares one namespace at a time, as kubectl does",
        )
    placed = copy.deepcopy(obj)
    placed.setdefault("metadata", {})["namespace"] = namespace
    return placed


def _ref_key(pool: RawObject, namespace: str) -> tuple[str, str, str, str] | None:
    ref = mapping(dig(pool, "spec", "template", "spec", "infrastructureRef"))
    kind, name = text(ref.get("kind")), text(ref.get("name"))
    if not kind or not name:
        return None
    group = text(ref.get("apiGroup")) or (text(ref.get("apiVersion")) or "").rpartition("/")[0]
    return namespace, group, kind, name


def diff(access: AccessOptions, asked: DiffAsked, stdin: TextIO | None) -> Diffed:
    if asked.against is not None:
        return _offline(access, asked, stdin)
    with Kube.connect(access) as kube:
        namespace = access.namespace or kube.connection.namespace or "default"
        manifests = _manifests(asked, stdin, namespace)
        objects, skipped = _split(manifests)
        notes: list[str] = []
        return Diffed(_live(kube, objects, asked, notes), skipped, tuple(notes))


def _split(manifests: Sequence[RawObject]) -> tuple[list[RawObject], tuple[str, ...]]:
    objects = [m for m in manifests if pool_object(m)]
    skipped = tuple(
        f"{ref.kind} {ref.namespace}/{ref.name}"
        for ref in (ref_of(m) for m in manifests if not pool_object(m))
    )
    return objects, skipped


def _live(
    kube: Kube, objects: Sequence[RawObject], asked: DiffAsked, notes: list[str]
) -> DiffResult:
    from kubectl_machinepool.kube import manifestreads

    compared = [manifestreads.compare(kube, m, server_side=asked.server_side) for m in objects]
    namespaces = {ref_of(m).namespace for m in objects}
    pools = manifestreads.read_machine_pools(kube, namespaces) if objects else []
    infra = {}
    for pool in pools:
        key = _ref_key(pool, ref_of(pool).namespace)
        if key is not None and _touched(pool, compared):
            infra[key], note = manifestreads.read_infra_pool(kube, *key)
            if note:
                notes.append(note)

    def read_budgets(namespace: str, cluster: str) -> Budgets:
        override = asked.workload_kubeconfig
        read = manifestreads.budgets(kube, namespace, cluster, override, kube.timeout)
        if read.note:
            notes.append(read.note)
        return read

    return _judged(compared, pools, infra, read_budgets)


def _touched(pool: RawObject, compared: Sequence[Compared]) -> bool:
    """Whether the manifest holds the pool, its infra pool or its bootstrap config."""
    names = {(ref.kind, ref.name) for ref in (ref_of(c.manifest) for c in compared)}
    spec = mapping(dig(pool, "spec", "template", "spec"))
    refs = (mapping(spec.get("infrastructureRef")), mapping(dig(spec, "bootstrap", "configRef")))
    mine = {(text(r.get("kind")), text(r.get("name"))) for r in refs}
    return ("MachinePool", ref_of(pool).name) in names or bool(mine & names)


def _judged(
    compared: Sequence[Compared],
    pools: Sequence[RawObject],
    infra: dict[tuple[str, str, str, str], RawObject | None],
    read_budgets: Callable[[str, str], Budgets],
) -> DiffResult:
    """Judged once without budgets; the Clusters of the pools that roll have theirs read."""
    first = consequences(compared, pools, infra, {})
    clusters = {
        (p.namespace, _cluster_of(p.namespace, p.name, compared, pools))
        for p in first.pools
        if p.roll is not None
    }
    if not clusters:
        return first
    budgets = {key: read_budgets(*key) for key in sorted(clusters) if key[1]}
    return consequences(compared, pools, infra, budgets)


def _cluster_of(
    namespace: str, name: str, compared: Sequence[Compared], pools: Sequence[RawObject]
) -> str:
    for obj in [*(c.result or c.manifest for c in compared), *pools]:
        ref = ref_of(obj)
        if (ref.group, ref.kind, ref.namespace, ref.name) == (
            CAPI_GROUP,
            "MachinePool",
            namespace,
            name,
        ):
            return text(dig(obj, "spec", "clusterName")) or ""
    return ""


def _offline(access: AccessOptions, asked: DiffAsked, stdin: TextIO | None) -> Diffed:
    """Against an export (only the fields it keeps are compared; the others are said) or a
    dump of whole objects: client-side, with no connection at all."""
    from kubectl_machinepool.offline.bundlefiles import is_export
    from kubectl_machinepool.offline.exportfields import kept_fields

    path = asked.against or ""
    export = is_export(path)
    snapshot = load_dump([path], None)
    namespace = access.namespace or _only_namespace(snapshot) or "default"
    objects, skipped = _split(_manifests(asked, stdin, namespace))
    compared = []
    for manifest in objects:
        ref = ref_of(manifest)
        live = snapshot.find(ref.group, ref.kind, ref.namespace, ref.name)
        if export:
            kept = kept_fields(manifest)
            missing = set(leaf_paths(manifest)) - set(leaf_paths(kept))
            after = kept_fields(applied(live or {}, manifest))
            how = _NOT_IN_EXPORT.format(path=path)
            ordered = tuple(p for p in leaf_paths(manifest) if p in missing)
            compared.append(Compared(manifest, live, after, how, not_compared=ordered))
        else:
            how = _AGAINST_DUMP.format(path=path)
            compared.append(Compared(manifest, live, applied(live or {}, manifest), how))
    pools = [
        p
        for p in snapshot.of_kind(CAPI_GROUP, "MachinePool")
        if text(dig(p, "metadata", "namespace")) == namespace
    ]
    infra: dict[tuple[str, str, str, str], RawObject | None] = {}
    for pool in pools:
        key = _ref_key(pool, namespace)
        if key is not None:
            infra[key] = snapshot.find(key[1], key[2], key[0], key[3])
    result = _judged(compared, pools, infra, lambda _ns, _cluster: _OFFLINE_BUDGETS)
    return Diffed(result, skipped)


def _only_namespace(snapshot: Snapshot) -> str | None:
    """The namespace of an export's or a dump's MachinePools, when they are all in one."""
    found = {
        text(dig(p, "metadata", "namespace")) for p in snapshot.of_kind(CAPI_GROUP, "MachinePool")
    }
    return found.pop() if len(found) == 1 else None
