"""Follow a Machine's deletion: its stages, its Node going, a replacement appearing.

Stopping to follow never stops the deletion: it goes on in the cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubectl_machinepool.conditions import read_conditions
from kubectl_machinepool.deletetarget import Mode, Plan
from kubectl_machinepool.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.fields import dig, text
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.snapshot import CAPI_GROUP
from kubectl_machinepool.writes import ObjectRef

Report = Callable[[str], None]


def _deleting_state(machine: dict[str, Any]) -> str | None:
    """The Machine's deletion stage: v1beta2 Deleting reason, else the first false legacy step."""
    conditions = read_conditions(machine)
    deleting = conditions.get("Deleting")
    if deleting is not None and deleting.status == "True":
        detail = deleting.message.splitlines()[0] if deleting.message else ""
        return deleting.reason + (f": {detail}" if detail else "")
    for kind in ("DrainingSucceeded", "VolumeDetachSucceeded", "PreTerminateDeleteHookSucceeded"):
        cond = conditions.get(kind)
        if cond is not None and cond.status == "False":
            return f"{kind} False ({cond.reason})"
    return None


@dataclass
class _Watch:
    """What has been reported so far while following one Machine's deletion."""

    kube: Kube
    workload: Kube | None
    plan: Plan
    report: Report
    warn: Report
    stage: str | None = None
    node_gone: bool = False
    seen: set[str] = field(default_factory=set)

    @property
    def machine(self) -> ObjectRef:
        return next(w.target for w in self.plan.writes if w.target.plural == "machines")

    def _pool_machines(self) -> dict[str, str]:
        """The pool's Machines now, name to providerID."""
        mp = self.plan.target.pool.pool
        resource = Resource(CAPI_GROUP, self.machine.version, "Machine", "machines")
        selector = (
            f"{POOL_NAME_LABEL}={pool_label_value(mp.name)},{CLUSTER_NAME_LABEL}={mp.cluster}"
        )
        return {
            text(dig(m, "metadata", "name")) or "": text(dig(m, "spec", "providerID")) or ""
            for m in self.kube.list(resource, mp.namespace, selector)
        }

    def start(self) -> None:
        self.seen = set(self._pool_machines())

    def machine_present(self) -> bool:
        try:
            current = self.kube.request("GET", self.machine.path())
        except NotFoundError:
            return False
        stage = _deleting_state(current)
        if stage and stage != self.stage:
            self.report(f"{self.machine.display}: {stage}")
            self.stage = stage
        return True

    def check_node(self) -> None:
        instance = self.plan.target.instance
        node = instance.machine.node_name if instance.machine else None
        if self.node_gone or self.workload is None or not node:
            return
        try:
            self.workload.request("GET", f"/api/v1/nodes/{node}")
        except NotFoundError:
            self.report(f"Node {node} deleted")
            self.node_gone = True
        except MachinePoolError as err:
            self.warn(f"Node {node} is no longer followed: {err.message}")
            self.node_gone = True

    def check_replacement(self) -> None:
        if self.plan.request.mode is not Mode.REPLACE:
            return
        for name, provider_id in sorted(self._pool_machines().items()):
            if name not in self.seen:
                self.seen.add(name)
                where = provider_id or "no providerID yet"
                self.report(
                    f"replacement Machine {self.machine.namespace}/{name} appeared ({where})"
                )


def follow(
    kube: Kube,
    workload: Kube | None,
    plan: Plan,
    *,
    timeout: float | None,
    report: Report,
    warn: Report,
    interval: float = 1.0,
) -> None:
    """Report the Machine's deletion stages, its Node going, and a replacement appearing, until
    the Machine is gone; raise when the timeout passes first."""
    watch = _Watch(kube, workload, plan, report, warn)
    watch.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        present = watch.machine_present()
        watch.check_node()
        watch.check_replacement()
        if not present:
            return
        if deadline is not None and time.monotonic() > deadline:
            mp = plan.target.pool.pool
            raise MachinePoolError(
                f"timed out waiting for {watch.machine.display} to go (last stage: "
                f"{watch.stage or 'none reported'}); the deletion goes on in the cluster",
                hint=f"follow it with: kubectl machinepool describe {mp.name} -n {mp.namespace}",
            )
        time.sleep(interval)
