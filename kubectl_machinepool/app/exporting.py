"""`export`: read what offline mode reads, live, and write it down (export.py, bundlefiles.py).

Library code: no click, no printing; progress goes to a callback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial

from kubectl_machinepool import __version__
from kubectl_machinepool.app.options import PoolScope
from kubectl_machinepool.app.reading import check_names, nothing_found
from kubectl_machinepool.base.fields import dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_description
from kubectl_machinepool.model.selector import asked_selection, selected
from kubectl_machinepool.offline import bundlefiles, export


@record(slots=False)
class Exported:
    pools: int
    objects: int
    nodes: int
    clusters: int
    size: int
    notes: tuple[str, ...]
    # The "No resources found" line when nothing matched (the export is still written).
    nothing: str | None


def export_pools(
    access: AccessOptions,
    pools: PoolScope,
    path: str,
    *,
    patterns: Sequence[re.Pattern[str]],
    clock: Callable[[], datetime],
    progress: Callable[[str], None],
) -> Exported:
    """Read the pools in scope as describe and diagnose do (Nodes and Events included) and
    write them to path (a directory, or a .tar.gz)."""
    from kubectl_machinepool.diagnostics.rules import capi_version

    bundlefiles.check_target(path)
    selection = asked_selection(names=pools.names, cluster=pools.cluster, selector=access.selector)
    with Kube.connect(access) as kube:
        namespace = access.scope(kube.connection.namespace)
        selection = replace(selection, namespace=namespace)
        in_scope = partial(selected, selection=selection)
        progress(f"reading MachinePools {'in ' + namespace if namespace else 'in every namespace'}")
        captured = clock()
        snapshot = read_description(
            kube,
            namespace,
            selection,
            pools.workload_kubeconfig,
            access.request_timeout,
            diagnosis=True,
            report_extras=True,
            keep_nodes=True,
        )
    chosen = [o for o in snapshot.objects if o.get("kind") == "MachinePool" and in_scope(o)]
    found = {text(dig(o, "metadata", "name")) or "" for o in chosen}
    check_names(selection.names, found, namespace, snapshot)
    capi = capi_version(snapshot, None)
    documents = export.documents_of(
        snapshot,
        captured=captured,
        scope=export.Scope(namespace, pools.names, pools.cluster, access.selector),
        versions=export.Versions(
            __version__, None if capi.version is None else str(capi), capi.source
        ),
    )
    if patterns:
        progress("redacting")
        documents = export.redacted(documents, patterns)
    progress(f"writing {path}")
    size = bundlefiles.write(documents, path, captured.timestamp())
    return Exported(
        pools=len(chosen),
        objects=len(snapshot.objects),
        nodes=sum(len(w.nodes or ()) for w in snapshot.workloads),
        clusters=sum(1 for w in snapshot.workloads if w.read),
        size=size,
        notes=snapshot.notes + tuple(w.note for w in snapshot.workloads if w.note),
        nothing=None if chosen or selection.names else nothing_found(namespace),
    )
