"""What the read commands look at: the selected pools, live or from a dump, described and judged.

Library code: no click, no printing. Notes come back as data for the caller to show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, TextIO

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.apiversion import CAPI_GROUP, group_of
from kubectl_machinepool.base.errors import MachinePoolError, not_found, pools_not_found
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_description, read_pools, watched
from kubectl_machinepool.kube.reads import template_refs
from kubectl_machinepool.model.selector import Selection, asked_selection, selected
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline.dump import load_dump

if TYPE_CHECKING:
    from kubectl_machinepool.diagnostics.core import CapiVersion, Finding
    from kubectl_machinepool.diagnostics.ignoring import Ignored
    from kubectl_machinepool.kube.changes import Watched
    from kubectl_machinepool.model.changes import Change
    from kubectl_machinepool.model.description import Description


@record(slots=False)
class Loaded:
    snapshot: Snapshot
    description: Description
    selection: Selection
    namespace: str | None
    # The API server's clock as its answers gave it (kube/serverclock.py); None offline.
    server_time: datetime | None = None

    @property
    def notes(self) -> tuple[str, ...]:
        return self.description.all_notes


def load_description(
    access: AccessOptions,
    source: Source,
    pools: PoolScope,
    now: datetime,
    stdin: TextIO | None,
    *,
    report_extras: bool,
    judged: bool = False,
    prepare: Callable[[], None] | None = None,
) -> Loaded:
    """The selected pools, live or from -f, described. prepare: imports what the caller goes
    on with, called while the reads run. judged: the caller's exit code is its verdict on the
    pools (diagnose --fail-on), so -f input that gives it no pool to judge is an error, as it
    is when a pool or a Cluster is named (without_pools, none_selected)."""
    selection = asked_selection(names=pools.names, cluster=pools.cluster, selector=access.selector)
    server_time = None
    if source.filenames:
        namespace = access.scope(None)
        snapshot = load_dump(source.filenames, stdin, now=source.now)
        if not report_extras:
            snapshot = snapshot.without_extra_notes()
        if source.now is None and snapshot.captured is not None:
            now = snapshot.captured  # an export's capture, else the dump's newest timestamp
        asked = judged or bool(pools.names or pools.cluster)
        snapshot = without_pools(snapshot, source.filenames, fatal=asked)
    else:
        with Kube.connect(access) as kube:
            namespace = access.scope(kube.connection.namespace)
            snapshot = read_description(
                kube,
                namespace,
                replace(selection, namespace=namespace),
                pools.workload_kubeconfig,
                access.request_timeout,
                diagnosis=True,
                report_extras=report_extras,
                meanwhile=partial(import_next, prepare),
            )
            server_time = kube.server_clock.time
    from kubectl_machinepool.model.description import describe

    selection = replace(selection, namespace=namespace)
    loaded = Loaded(snapshot, describe(snapshot, selection, now), selection, namespace, server_time)
    if source.filenames and judged and not _found(loaded):
        check_named(loaded)
        raise none_selected(snapshot, source.filenames, selection)
    return loaded


# What -f reads, for a hint: the management cluster's objects and the workload's Nodes.
_DUMP_HINT = (
    "-f reads `kubectl get machinepools,machines,<infra kinds>,... -o yaml` output or an "
    "export (kubectl machinepool export); see docs/describe.md"
)
# Kinds and namespaces named in a sentence about the input; the rest are counted.
_NAMED = 4
# A kind from a dump is shown at most this long (Kubernetes kinds are far shorter).
_KIND_SHOWN = 63


def without_pools(snapshot: Snapshot, filenames: Sequence[str], *, fatal: bool) -> Snapshot:
    """-f input that holds no MachinePool: an error when the command judges or names pools,
    else a note (kubectl's "No resources found" follows it)."""
    if any(snapshot.of_kind(CAPI_GROUP, "MachinePool")):
        return snapshot
    objects = [*snapshot.objects, *(n for w in snapshot.workloads for n in w.nodes or ())]
    kinds = Counter(_shown_kind(o) for o in objects)
    held = _listed([_counted(n, kind) for kind, n in kinds.most_common()], "kinds")
    said = f"no MachinePool in {_inputs(filenames)} ({_holds(filenames)} {held or 'no object'})"
    if fatal:
        raise MachinePoolError(said, hint=_DUMP_HINT)
    return replace(snapshot, notes=(*snapshot.notes, said), remarks=(*snapshot.remarks, said))


def none_selected(
    snapshot: Snapshot, filenames: Sequence[str], selection: Selection
) -> MachinePoolError:
    """Judged -f input whose MachinePools the scope leaves out: a verdict on no pool is none."""
    namespaces = Counter(
        text(dig(p, "metadata", "namespace")) or ""
        for p in snapshot.of_kind(CAPI_GROUP, "MachinePool")
    )
    scope = [
        *([f"-n {selection.namespace}"] if selection.namespace is not None else []),
        *([f"-l {selection.selector}"] if selection.selector else []),
        *([f"--cluster {selection.cluster}"] if selection.cluster else []),
    ]
    pools = _counted(namespaces.total(), "MachinePool")
    where = _listed(sorted(namespaces), "more namespaces")
    return MachinePoolError(
        f"no MachinePool in {_inputs(filenames)} is selected by {' '.join(scope)} "
        f"({_holds(filenames)} {pools}, in {where})",
        hint="a verdict on no pool passes nothing: change the scope (-A, -n, -l, --cluster)",
    )


def _inputs(filenames: Sequence[str]) -> str:
    return _listed(["<stdin>" if f == "-" else f for f in filenames], "more")


def _holds(filenames: Sequence[str]) -> str:
    return "it holds" if len(filenames) == 1 else "they hold"


def _shown_kind(obj: RawObject) -> str:
    kind = str(obj.get("kind"))
    return kind if len(kind) <= _KIND_SHOWN else kind[: _KIND_SHOWN - 3] + "..."


def _counted(n: int, kind: str) -> str:
    if n == 1:
        return f"1 {kind}"
    if kind.endswith(("s", "x", "ch", "sh")):
        return f"{n} {kind}es"
    if kind.endswith("y") and kind[-2:-1] not in tuple("aeiou"):
        return f"{n} {kind[:-1]}ies"
    return f"{n} {kind}s"


def _listed(named: Sequence[str], rest: str) -> str:
    """'a', 'a and b', 'a, b, c, d and 3 more kinds'."""
    shown, more = list(named[:_NAMED]), len(named) - _NAMED
    if more > 0:
        shown.append(f"{more} {rest}")
    return ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)


# list's scope without names: every pool in scope, its Nodes through its kubeconfig Secret.
EVERY_POOL = PoolScope()


def load_pools(
    access: AccessOptions,
    source: Source,
    stdin: TextIO | None,
    pools: PoolScope = EVERY_POOL,
) -> tuple[Snapshot, Selection]:
    """For `list`: the MachinePools in scope, the infra pools and Nodes of those selected (of
    pools.names, when given), and what was selected. A dump is cut to what list reads live,
    so that it judges a dump as it would judge the cluster."""
    if source.filenames:
        selection = asked_selection(access.scope(None), pools.names, selector=access.selector)
        dump = load_dump(source.filenames, stdin, now=source.now)
        dump = without_pools(dump, source.filenames, fatal=bool(pools.names))
        return list_kinds(dump, selection), selection
    with Kube.connect(access) as kube:
        selection = asked_selection(
            access.scope(kube.connection.namespace), pools.names, selector=access.selector
        )
        override, timeout = pools.workload_kubeconfig, access.request_timeout
        return read_pools(kube, selection.namespace, selection, override, timeout), selection


def list_kinds(dump: Snapshot, selection: Selection) -> Snapshot:
    """A dump's MachinePools in the selection's scope (named or not), the infra pools those
    selected refer to, and its Nodes."""
    scope = replace(selection, names=())
    pools = [p for p in dump.of_kind(CAPI_GROUP, "MachinePool") if selected(p, scope)]
    kinds = template_refs([p for p in pools if selected(p, selection)], "infrastructureRef")
    infra = [
        o for o in dump.objects if (group_of(str(o.get("apiVersion", ""))), o.get("kind")) in kinds
    ]
    nodes_notes = tuple(w.note for w in dump.workloads if w.note)
    return replace(dump, objects=(*pools, *infra), notes=(*dump.notes, *nodes_notes))


def import_next(prepare: Callable[[], None] | None) -> None:
    """What a description goes on with. Imported while the reads run rather than before them:
    the first request goes out ~40 ms sooner (measured on the 1000-instance pool of
    tests/benchmarks/scale.py). A fleet imports it before its children start, so that each
    does not import it again."""
    from kubectl_machinepool.diagnostics import rules  # noqa: F401
    from kubectl_machinepool.model import description  # noqa: F401

    if prepare is not None:
        prepare()


def judge(loaded: Loaded, rules: RuleOptions) -> tuple[CapiVersion, list[Finding]]:
    """Every rule over the description, at the Cluster API version in use (or the one given):
    the findings the ignores do not cover."""
    capi, findings, _ = judged(loaded, rules)
    return capi, findings


def judged(loaded: Loaded, rules: RuleOptions) -> tuple[CapiVersion, list[Finding], Ignored]:
    """judge(), and the findings the ignores set aside."""
    from kubectl_machinepool.diagnostics.rules import capi_version, diagnosis

    capi = capi_version(loaded.snapshot, rules.capi_version)
    findings, ignored = diagnosis(
        loaded.description, loaded.snapshot, capi, rules.thresholds, rules.ignores
    )
    return capi, findings, ignored


def nothing_found(namespace: str | None) -> str:
    return f"No resources found{' in ' + namespace + ' namespace' if namespace else ''}."


def _found(loaded: Loaded) -> set[str]:
    return {p.pool.name for c in loaded.description.clusters for p in c.pools}


def check_found(loaded: Loaded) -> str | None:
    """kubectl's way, after printing what was found: raise naming each name that was not (or
    the Cluster --cluster names, when there is none); with no names asked for and no pool
    matched, the "No resources found" line to print."""
    check_named(loaded)
    nothing = not _found(loaded) and not loaded.selection.names
    return nothing_found(loaded.namespace) if nothing else None


def check_named(loaded: Loaded) -> None:
    """Raise naming each pool asked for by name that is not there, or the Cluster --cluster
    names when it is not there either (a Cluster without pools is still described)."""
    selection = loaded.selection
    check_names(selection.names, _found(loaded), loaded.namespace, loaded.snapshot)
    cluster = selection.cluster
    if not cluster or selection.names or selection.selector:
        return  # a Cluster is read by name only when nothing else narrows the pools
    if not loaded.snapshot.was_read(CAPI_GROUP, "Cluster"):
        return  # not read proves nothing; the warning says why
    if all(c.name != cluster for c in loaded.description.clusters):
        raise not_found("clusters.cluster.x-k8s.io", [cluster], loaded.namespace)


def check_names(
    names: Sequence[str], found: set[str], namespace: str | None, read: Snapshot | None = None
) -> None:
    """read: what the names were looked for in, whose pools the hint offers the nearest of."""
    missing = [name for name in names if name not in found]
    if missing:
        present = pools_in(read, namespace) if read is not None else []
        raise pools_not_found(missing, namespace, present)


def pools_in(snapshot: Snapshot, namespace: str | None) -> list[str]:
    """The names of the MachinePools a read listed in the namespace (every one without it):
    every pool in scope, named or not."""
    return [
        text(dig(p, "metadata", "name")) or ""
        for p in snapshot.of_kind(CAPI_GROUP, "MachinePool")
        if namespace is None or dig(p, "metadata", "namespace") == namespace
    ]


def follow_description(
    access: AccessOptions,
    pools: PoolScope,
    *,
    report_extras: bool,
    show: Callable[[Loaded, tuple[Change, ...]], None],
    warn: Callable[[str], None],
    clock: Callable[[], datetime],
    events: bool = False,
) -> None:
    """describe -w and diagnose -w: the pools described, and again on each change (until
    Ctrl-C). What is watched is what the view showed (fetch.watched)."""
    from kubectl_machinepool.app import following

    named = [False]

    def read() -> Loaded:
        loaded = load_description(
            access, Source(), pools, clock(), None, report_extras=report_extras
        )
        if not named[0]:  # as kubectl get -w: not found first, a pool deleted later just goes
            check_named(loaded)
            named[0] = True
        return loaded

    def watches(kube: Kube, loaded: Loaded) -> list[Watched]:
        return description_watches(kube, loaded, access, pools, events=events)

    def shown(loaded: Loaded, changes: tuple[Change, ...]) -> bool:
        show(loaded, changes)
        return False

    following.follow(access, read=read, watches=watches, show=shown, warn=warn)


def description_watches(
    kube: Kube, loaded: Loaded, access: AccessOptions, pools: PoolScope, *, events: bool = False
) -> list[Watched]:
    """What a followed description watches: what it showed, the Nodes of the Clusters whose
    Nodes it read included (and the namespace's Events, for events -w)."""
    clusters = [(c.namespace, c.name) for c in loaded.description.clusters if c.nodes_read]
    return watched(
        kube,
        loaded.snapshot,
        loaded.namespace,
        node_clusters=clusters,
        override=pools.workload_kubeconfig,
        timeout=access.request_timeout,
        events=events,
    )


def follow_pools(
    access: AccessOptions,
    *,
    show: Callable[[Snapshot, Selection, tuple[Change, ...]], None],
    warn: Callable[[str], None],
    pools: PoolScope = EVERY_POOL,
) -> None:
    """list -w: the MachinePools, their infra pools and their Clusters' Nodes, and again on
    each change of any."""
    from kubectl_machinepool.app import following

    def read() -> tuple[Snapshot, Selection]:
        return load_pools(access, Source(), None, pools)

    def watches(kube: Kube, view: tuple[Snapshot, Selection]) -> list[Watched]:
        snapshot, selection = view
        return watched(
            kube,
            snapshot,
            selection.namespace,
            node_clusters=[
                (w.namespace or "", w.cluster or "") for w in snapshot.workloads if w.read
            ],
            override=pools.workload_kubeconfig,
            timeout=access.request_timeout,
            instances=False,
        )

    def shown(view: tuple[Snapshot, Selection], changes: tuple[Change, ...]) -> bool:
        show(view[0], view[1], changes)
        return False

    following.follow(access, read=read, watches=watches, show=shown, warn=warn)
