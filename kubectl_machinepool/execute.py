"""Carry out a confirmed delete-machine plan, exactly as shown, and follow what happens next.

Every write carries preconditions: a patch or update names the resourceVersion the plan (or the
previous write) saw, a delete names uid and resourceVersion. So a plan made from objects that
changed since fails with 409 instead of touching something the user did not see. When a later
write fails, the earlier ones are taken back and the message says exactly what state is left.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubectl_machinepool.conditions import read_conditions
from kubectl_machinepool.deleteplan import Mode, ObjectRef, Plan, Write
from kubectl_machinepool.errors import ConflictError, MachinePoolError, NotFoundError
from kubectl_machinepool.fields import dig, text
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.snapshot import CAPI_GROUP

Report = Callable[[str], None]
MERGE_PATCH = "application/merge-patch+json"


def _key(ref: ObjectRef) -> tuple[str, str, str]:
    return (ref.plural, ref.namespace, ref.name)


def still_as_planned(kube: Kube, plan: Plan) -> None:
    """Re-read every object the plan writes: if one changed, stop before the first write."""
    seen: set[tuple[str, str, str]] = set()
    for write in plan.writes:
        ref = write.target
        if _key(ref) in seen:
            continue
        seen.add(_key(ref))
        try:
            now = kube.request("GET", ref.path())
        except NotFoundError:
            raise ConflictError(
                f"{ref.display} is gone since the plan was made; nothing was written"
            ) from None
        uid = text(dig(now, "metadata", "uid"))
        version = text(dig(now, "metadata", "resourceVersion"))
        if (uid, version) != (ref.uid, ref.resource_version):
            raise ConflictError(
                f"{ref.display} changed since the plan was made (resourceVersion "
                f"{ref.resource_version} is now {version}); nothing was written",
                hint="run the command again to plan from what is there now",
            )


def _send(
    kube: Kube, write: Write, versions: dict[tuple[str, str, str], str], dry_run: bool
) -> dict[str, Any]:
    ref = write.target
    query = {"dryRun": "All"} if dry_run else None
    version = versions[_key(ref)]
    if write.verb == "delete":
        options: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": ref.uid, "resourceVersion": version},
        }
        if dry_run:
            # With a body, the server reads DeleteOptions from it and ignores the query.
            options["dryRun"] = ["All"]
        return kube.request("DELETE", ref.path(), query, body=options)
    body = copy.deepcopy(write.body or {})
    body.setdefault("metadata", {})["resourceVersion"] = version
    if write.verb == "update":
        return kube.request("PUT", ref.path(write.subresource), query, body=body)
    return kube.request(
        "PATCH", ref.path(write.subresource), query, body=body, content_type=MERGE_PATCH
    )


@dataclass
class _Run:
    """The objects as this run last wrote them: resourceVersion and generation per object."""

    kube: Kube
    dry_run: bool
    versions: dict[tuple[str, str, str], str]
    # What each of our own writes left: (generation, labels, annotations).
    ours: dict[tuple[str, str, str], tuple[Any, Any, Any]] = field(default_factory=dict)

    def send(self, write: Write) -> dict[str, Any]:
        """Send with preconditions; after our own write, a controller that only touched the
        status meanwhile (same generation, labels, annotations) is no reason to fail."""
        try:
            answer = _send(self.kube, write, self.versions, self.dry_run)
        except ConflictError:
            fresh = self._only_status_changed(write.target)
            if fresh is None:
                raise
            self.versions[_key(write.target)] = fresh
            answer = _send(self.kube, write, self.versions, self.dry_run)
        version = text(dig(answer, "metadata", "resourceVersion"))
        # A dry run persists nothing: the next write must still name the stored version.
        if version and write.verb != "delete" and not self.dry_run:
            self.versions[_key(write.target)] = version
            meta = answer.get("metadata") or {}
            self.ours[_key(write.target)] = (
                meta.get("generation"),
                meta.get("labels"),
                meta.get("annotations"),
            )
        return answer

    def _only_status_changed(self, ref: ObjectRef) -> str | None:
        left = self.ours.get(_key(ref))
        if left is None:
            return None
        try:
            now = self.kube.request("GET", ref.path())
        except MachinePoolError:
            return None
        meta = now.get("metadata") or {}
        same = (meta.get("generation"), meta.get("labels"), meta.get("annotations")) == left
        if not same or meta.get("uid") != ref.uid or meta.get("deletionTimestamp"):
            return None
        return text(meta.get("resourceVersion"))

    def take_back(self, done: list[Write]) -> list[str]:
        """Undo what was written, newest first; one sentence per write on what state is left."""
        state = []
        for write in reversed(done):
            if write.undo is None:
                state.append(f"{write.summary}: done, and cannot be taken back")
                continue
            try:
                self.send(Write("patch", write.target, write.undo_summary, write.undo))
            except MachinePoolError as err:
                state.append(
                    f"{write.summary}: done, and taking it back failed ({err.message}); "
                    f"{write.target.display} still has it"
                )
                continue
            state.append(f"{write.target.display}: {write.undo_summary}")
        return state


@dataclass(frozen=True, slots=True)
class Outcome:
    # kubectl-style lines, one per write: "machine.cluster.x-k8s.io/x deleted".
    lines: tuple[str, ...]


def execute(kube: Kube, plan: Plan, *, dry_run: bool) -> Outcome:
    """Send the plan's writes in order; on a failure, undo the earlier ones and raise."""
    still_as_planned(kube, plan)
    run = _Run(kube, dry_run, {_key(w.target): w.target.resource_version for w in plan.writes})
    done: list[Write] = []
    lines = []
    suffix = " (server dry run)" if dry_run else ""
    for write in plan.writes:
        try:
            run.send(write)
        except MachinePoolError as err:
            state = run.take_back(done)
            left = "; ".join(state) if state else "nothing had been written"
            raise type(err)(
                f"{write.summary} failed: {err.message}. {left}", hint=err.hint
            ) from err
        done.append(write)
        lines.append(f"{write.target.kubectl_name} {write.done}{suffix}")
    return Outcome(tuple(lines))


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
