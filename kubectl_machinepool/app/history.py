"""rollout history as a library: the revisions recorded on one MachinePool, read live with one
GET of it (no Machine, infra or Node read: a pool of thousands costs what a pool of one does)
or from a dump. No click, no printing."""

from __future__ import annotations

from typing import TextIO

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import MachinePoolError, UsageError, pools_not_found
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.model.revisions import ANNOTATION, History, Revision, read_history


@record
class PoolHistory:
    namespace: str
    name: str
    history: History

    @property
    def unusable(self) -> MachinePoolError:
        return MachinePoolError(
            f"MachinePool {self.namespace}/{self.name} holds no usable revision history: "
            f"{self.history.unusable}",
            hint=f"its {ANNOTATION} annotation is not as this tool writes it; remove it to "
            f"begin afresh: kubectl annotate machinepool {self.name} -n {self.namespace} "
            f"{ANNOTATION}-",
        )

    def revision(self, number: int) -> Revision:
        """Revision number, or an error naming the revisions kept."""
        found = self.history.find(number)
        if found is not None:
            return found
        numbers = [r.number for r in self.history.revisions]
        kept = f"it keeps {', '.join(map(str, numbers))}" if numbers else "it keeps none"
        raise MachinePoolError(
            f"revision {number} is not in the history of MachinePool "
            f"{self.namespace}/{self.name}: {kept}",
            hint=f"kubectl machinepool rollout history {self.name} -n {self.namespace}",
        )


def _of(pool: RawObject) -> PoolHistory:
    meta = pool.get("metadata")
    return PoolHistory(
        text(dig(meta, "namespace")) or "", text(dig(meta, "name")) or "", read_history(pool)
    )


def live(access: AccessOptions, name: str) -> PoolHistory:
    """One GET of the MachinePool, in -n's namespace or the context's."""
    from kubectl_machinepool.kube.client import Kube
    from kubectl_machinepool.kube.poolread import read_pool

    with Kube.connect(access) as kube:
        return _of(read_pool(kube, access.namespace or kube.connection.namespace, name))


def from_dump(
    source: Source, namespace: str | None, name: str, stdin: TextIO | None
) -> PoolHistory:
    """The pool in a dump or export: in -n's namespace, else in the one namespace that has it."""
    from kubectl_machinepool.offline.dump import load_dump

    snapshot = load_dump(source.filenames, stdin, now=source.now)
    found = [
        pool
        for pool in snapshot.of_kind(CAPI_GROUP, "MachinePool")
        if dig(pool, "metadata", "name") == name
        and (namespace is None or dig(pool, "metadata", "namespace") == namespace)
    ]
    if not found:
        raise pools_not_found([name], namespace)
    if len(found) > 1:
        spaces = sorted(str(dig(p, "metadata", "namespace")) for p in found)
        raise UsageError(
            f"MachinePool {name} is in several namespaces of the dump: {', '.join(spaces)}",
            hint="pick one with -n NAMESPACE",
        )
    return _of(found[0])
