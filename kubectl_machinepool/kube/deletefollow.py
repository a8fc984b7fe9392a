"""Follow a Machine's deletion: its stages, its Node going, a replacement appearing.

One watch of the namespace's Machines tells all three: the Machine's own events (its stages, its
going), and new Machines of the pool. The Node is looked at on each event, since Cluster API
deletes it just before it lets the Machine go. Stopping to follow never stops the deletion.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.resource import Resource
from kubectl_machinepool.kube.watch import WATCH_WINDOW
from kubectl_machinepool.model.changes import LISTED
from kubectl_machinepool.model.conditions import read_conditions
from kubectl_machinepool.model.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.plans.deletetarget import Mode, Plan
from kubectl_machinepool.plans.writes import ObjectRef

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


def _name(obj: RawObject) -> str:
    return text(dig(obj, "metadata", "name")) or ""


@dataclass
class _Follower:
    """What has been reported so far while following one Machine's deletion."""

    workload: Kube | None
    plan: Plan
    report: Report
    warn: Report
    stage: str | None = None
    node_gone: bool = False
    # Names of the pool's Machines seen so far; None before the first list.
    seen: set[str] | None = None

    @property
    def machine(self) -> ObjectRef:
        return next(w.target for w in self.plan.writes if w.target.plural == "machines")

    def _ours(self, obj: RawObject) -> bool:
        return bool(dig(obj, "metadata", "uid") == self.machine.uid)

    def _of_pool(self, obj: RawObject) -> bool:
        mp = self.plan.target.pool.pool
        labels = mapping(dig(obj, "metadata", "labels"))
        return (
            labels.get(POOL_NAME_LABEL) == pool_label_value(mp.name)
            and labels.get(CLUSTER_NAME_LABEL) == mp.cluster
        )

    def on(self, kind: str, obj: RawObject) -> bool:
        """Report what this event shows; False once the Machine is gone."""
        if kind == LISTED:
            present = self._listed(items(obj.get("items")))
        elif self._ours(obj):
            present = kind != "DELETED"
            if present:
                self._stage(obj)
        else:
            if kind != "DELETED":
                self._replacement(obj)
            return True  # other Machines' events say nothing about this one's Node
        self.check_node()
        return present

    def _listed(self, machines: list[RawObject]) -> bool:
        """Every Machine as of now: the first list, or a new one after the watch expired."""
        if self.seen is None:
            self.seen = {_name(m) for m in machines if self._of_pool(m)}
        ours = next((m for m in machines if self._ours(m)), None)
        if ours is not None:
            self._stage(ours)
        for machine in machines:
            self._replacement(machine)
        return ours is not None

    def _stage(self, machine: RawObject) -> None:
        stage = _deleting_state(machine)
        if stage and stage != self.stage:
            self.report(f"{self.machine.display}: {stage}")
            self.stage = stage

    def _replacement(self, machine: RawObject) -> None:
        name = _name(machine)
        if self.plan.request.mode is not Mode.REPLACE or self.seen is None:
            return
        if name in self.seen or self._ours(machine) or not self._of_pool(machine):
            return
        self.seen.add(name)
        where = text(dig(machine, "spec", "providerID")) or "no providerID yet"
        self.report(f"replacement Machine {self.machine.namespace}/{name} appeared ({where})")

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


def follow(
    kube: Kube,
    workload: Kube | None,
    plan: Plan,
    *,
    timeout: float | None,
    report: Report,
    warn: Report,
    window: float = WATCH_WINDOW,
) -> None:
    """Report the Machine's deletion stages, its Node going, and a replacement appearing, until
    the Machine is gone; raise when the timeout passes first."""
    follower = _Follower(workload, plan, report, warn)
    machine = follower.machine
    resource = Resource(CAPI_GROUP, machine.version, "Machine", "machines")
    # Closed on return: a watch left to the collector keeps its socket open until then.
    with closing(kube.watch(resource, machine.namespace, timeout=timeout, window=window)) as events:
        for kind, obj in events:
            if not follower.on(kind, obj):
                return
    mp = plan.target.pool.pool
    raise MachinePoolError(
        f"timed out waiting for {machine.display} to go (last stage: "
        f"{follower.stage or 'none reported'}); the deletion goes on in the cluster",
        hint=f"follow it with: kubectl machinepool describe {mp.name} -n {mp.namespace}",
    )
