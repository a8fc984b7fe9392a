"""Carry out a confirmed delete-machine plan, exactly as shown, and follow what happens next.

Every write carries preconditions: a patch or update names the resourceVersion the plan (or the
previous write) saw, a delete names uid and resourceVersion. So a plan made from objects that
changed since fails with 409 instead of touching something the user did not see.

A write is only "not done" when the server said so (a 4xx answer). After a lost reply, a
timeout, a 5xx or a signal during the request, the object is read again and its state decides.
When a write fails, the earlier ones are taken back, newest first, as far as each can be: a
write that cannot be taken back (a scale step, a delete, an annotation the provider acts on at
once) keeps every earlier one in place, since it was made on top of them. The message names
every object left changed, or whose state is unknown.
"""

from __future__ import annotations

import copy
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, NoReturn

from kubectl_machinepool.conditions import read_conditions
from kubectl_machinepool.deleteplan import Mode, ObjectRef, Plan, Write
from kubectl_machinepool.errors import (
    ConflictError,
    ExitCode,
    IncompleteError,
    Interrupted,
    MachinePoolError,
    NotFoundError,
)
from kubectl_machinepool.fields import dig, integer, text
from kubectl_machinepool.kube import Kube, Resource
from kubectl_machinepool.options import parse_duration
from kubectl_machinepool.poolname import CLUSTER_NAME_LABEL, POOL_NAME_LABEL, pool_label_value
from kubectl_machinepool.snapshot import CAPI_GROUP, RawObject

Report = Callable[[str], None]
MERGE_PATCH = "application/merge-patch+json"
# After a failure or a signal, the longest any request may take, even with --request-timeout 0.
SETTLE_TIMEOUT = 15.0
Key = tuple[str, str, str]


def _key(ref: ObjectRef) -> Key:
    return (ref.plural, ref.namespace, ref.name)


def _definite(err: MachinePoolError) -> bool:
    """The server answered and refused: the write did not happen."""
    return err.status is not None and 400 <= err.status < 500


def identity(obj: RawObject) -> RawObject:
    """What a write relies on: everything but status and the bookkeeping that changes with it."""
    kept = {k: v for k, v in obj.items() if k != "status"}
    meta = {
        k: v
        for k, v in (obj.get("metadata") or {}).items()
        if k not in ("resourceVersion", "managedFields", "generation")
    }
    return {**kept, "metadata": meta}


def _changed_fields(before: RawObject, now: RawObject) -> str:
    before, now = identity(before), identity(now)
    changed = []
    for part in ("metadata", "spec"):
        old, new = before.get(part) or {}, now.get(part) or {}
        changed += [
            f"{part}.{k}" for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)
        ]
    return ", ".join(changed) or "its content"


def _same(expected: Any, actual: Any) -> bool:
    if expected == actual:
        return True
    # The server writes a v1beta1 duration back normalised ("300s" comes back as "5m0s").
    if isinstance(expected, str) and isinstance(actual, str):
        try:
            return parse_duration(expected, "") == parse_duration(actual, "")
        except MachinePoolError:
            return False
    return False


def _reflected(patch: dict[str, Any], obj: Any) -> bool:
    """Whether a merge patch's every leaf is what the object holds (null: the key is absent)."""
    for key, value in patch.items():
        present = isinstance(obj, dict) and key in obj and obj[key] is not None
        if value is None:
            if present:
                return False
        elif isinstance(value, dict):
            if not _reflected(value, obj.get(key) if present else None):
                return False
        elif not present or not _same(value, obj[key]):
            return False
    return True


def _deleted(fresh: RawObject | None, ref: ObjectRef) -> bool:
    if fresh is None or dig(fresh, "metadata", "uid") != ref.uid:
        return True
    return bool(dig(fresh, "metadata", "deletionTimestamp"))


def _scaled(write: Write, relied: RawObject, fresh: RawObject) -> bool | None:
    was = integer(dig(relied, "metadata", "generation"))
    now = integer(dig(fresh, "metadata", "generation"))
    if now is not None and now == was:
        return False  # the spec is untouched since the plan
    if now is not None and was is not None and now > was + 1:
        return None  # someone else changed the spec too: its replicas prove nothing
    # Someone else may have scaled it after us: only the replicas we asked for are proof.
    wanted = integer(dig(write.body, "spec", "replicas"))
    return True if integer(dig(fresh, "spec", "replicas")) == wanted else None


class _Abandon(BaseException):
    """A second signal while the state was being worked out: stop at once."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _Stop(BaseException):
    def __init__(self, signum: int, sent: bool) -> None:
        super().__init__(signum)
        self.signum = signum
        # False when the signal was already pending before the request went out.
        self.sent = sent


def _exit_code(signum: int) -> ExitCode:
    return ExitCode.TERMINATED if signum == signal.SIGTERM else ExitCode.INTERRUPTED


class _Signals:
    """SIGINT and SIGTERM while writing: a request in flight is abandoned (its outcome is then
    read back), and further signals wait while the state is worked out and taken back."""

    def __init__(self) -> None:
        self.received: int | None = None
        # Working out the state after a failure or a first signal: a second signal gives up.
        self.settling = False
        self._armed = False
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._saved[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread: signals stay as they are
                break
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        again = self.received is not None
        if not again:
            self.received = signum
        if self._armed:
            self._armed = False
            raise _Stop(signum, sent=True)
        if again and self.settling:
            raise _Abandon(signum)

    @contextmanager
    def sending(self) -> Iterator[None]:
        if self.received is not None:
            raise _Stop(self.received, sent=False)
        self._armed = True
        try:
            yield
        finally:
            self._armed = False


@dataclass
class _Run:
    """One execution: what the server holds of each object as far as this run knows."""

    kube: Kube
    plan: Plan
    dry_run: bool
    signals: _Signals
    warn: Report
    versions: dict[Key, str]
    # Per object, what its next write relies on: the plan's view, then what our write left.
    relied: dict[Key, RawObject]
    applied: list[Write] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    # The write being sent or settled, for a report cut short by a second signal.
    current: Write | None = None

    # -- one request -----------------------------------------------------------------------

    @property
    def _timeout(self) -> float | None:
        """After a failure or a signal every request is bounded, whatever --request-timeout
        says: the state must be reported, not waited for forever."""
        if not self.signals.settling:
            return None  # the connection's own
        own = self.kube.timeout
        return SETTLE_TIMEOUT if own is None else min(own, SETTLE_TIMEOUT)

    def _send(self, write: Write) -> dict[str, Any]:
        ref = write.target
        query = {"dryRun": "All"} if self.dry_run else None
        version = self.versions[_key(ref)]
        if write.verb == "delete":
            options: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "preconditions": {"uid": ref.uid, "resourceVersion": version},
            }
            if self.dry_run:
                # With a body, the server reads DeleteOptions from it and ignores the query.
                options["dryRun"] = ["All"]
            return self.kube.request(
                "DELETE", ref.path(), query, body=options, timeout=self._timeout
            )
        body = copy.deepcopy(write.body or {})
        body.setdefault("metadata", {})["resourceVersion"] = version
        if write.verb == "update":
            return self.kube.request(
                "PUT", ref.path(write.subresource), query, body=body, timeout=self._timeout
            )
        return self.kube.request(
            "PATCH",
            ref.path(write.subresource),
            query,
            body=body,
            content_type=MERGE_PATCH,
            timeout=self._timeout,
        )

    def _read(self, ref: ObjectRef) -> RawObject | None:
        try:
            return self.kube.request("GET", ref.path(), timeout=self._timeout)
        except NotFoundError:
            return None

    def send(self, write: Write) -> None:
        """Send with preconditions. A 409 is retried once, and only when nothing but status
        changed since what this write relies on (owners, finalizers, labels, annotations,
        spec, deletion and uid all as they were). The same holds for taking a write back:
        never on top of someone else's change."""
        key = _key(write.target)
        try:
            answer = self._send(write)
        except ConflictError as err:
            fresh = self._read(write.target)
            relied = self.relied[key]
            if fresh is None or dig(fresh, "metadata", "uid") != write.target.uid:
                raise ConflictError(f"{write.target.display} is gone", status=409) from err
            if identity(fresh) != identity(relied):
                raise ConflictError(
                    f"{write.target.display} changed meanwhile ({_changed_fields(relied, fresh)})",
                    hint="run the command again to plan from what is there now",
                    status=409,  # the server refused: a definite answer, whatever changed it
                ) from err
            self.versions[key] = text(dig(fresh, "metadata", "resourceVersion")) or ""
            answer = self._send(write)
        self._record(write, answer)

    def _record(self, write: Write, answer: RawObject) -> None:
        # A dry run persists nothing: the next write must still name the stored version.
        if self.dry_run or write.verb == "delete" or write.subresource:
            return
        key = _key(write.target)
        self.versions[key] = text(dig(answer, "metadata", "resourceVersion")) or ""
        self.relied[key] = answer

    def settle(self, write: Write) -> bool | None:
        """After an unanswered write: did it take effect? None when that cannot be told."""
        self.signals.settling = True
        if self.dry_run:
            return False  # nothing persists either way
        try:
            fresh = self._read(write.target)
        except MachinePoolError:
            return None
        if write.verb == "delete":
            return _deleted(fresh, write.target)
        if fresh is None or dig(fresh, "metadata", "uid") != write.target.uid:
            return None
        if write.subresource == "scale":
            return _scaled(write, self.relied[_key(write.target)], fresh)
        applied = _reflected(write.body or {}, fresh)
        if applied:
            self._record(write, fresh)
        return applied

    # -- the whole plan --------------------------------------------------------------------

    def step(self, index: int, write: Write) -> str:
        return f"step {index} of {len(self.plan.writes)} ({write.summary})"

    def run(self) -> None:
        for index, write in enumerate(self.plan.writes, 1):
            self.current = write
            self._still_as_left(index, write)
            try:
                with self.signals.sending():
                    self.send(write)
            except _Stop as stop:
                effect = self.settle(write) if stop.sent else False
                self._stopped(index, write, stop.signum, effect)
            except MachinePoolError as err:
                effect = False if _definite(err) else self.settle(write)
                if effect is not True:
                    self._failed(index, write, err, effect)
                self.warn(
                    f"no answer to {self.step(index, write)} ({err.message}); reading "
                    f"{write.target.display} again shows it took effect"
                )
            self.applied.append(write)
            self.lines.append(f"{write.target.kubectl_name} {write.done}")
        self.current = None
        if self.signals.received is not None:
            done = "; ".join(f"{w.summary}: done" for w in self.applied)
            raise Interrupted(
                _exit_code(self.signals.received),
                f"after the last write; every write was made: {done}",
            )

    def abandoned(self, signum: int) -> Interrupted:
        """A second signal cut the working out short: say what is known, and what is not."""
        known = [f"{w.summary}: done" for w in self.applied]
        if self.current is not None and self.current not in self.applied:
            known.append(
                f"{self.current.summary}: unknown, {self.current.target.display} must be checked"
            )
        return Interrupted(
            _exit_code(signum),
            "stopped again before the state was worked out: "
            + ("; ".join(known) or "nothing was written"),
        )

    def _still_as_left(self, index: int, write: Write) -> None:
        """Objects written earlier must still be as this run left them: the next write was
        planned on top of them (a scale step on top of a Machine's annotation, with the Machine
        still the pool's). The server checks the next write's own object; this checks the rest."""
        earlier = {_key(w.target): w for w in self.applied if _key(w.target) != _key(write.target)}
        for key, done in earlier.items():
            try:
                with self.signals.sending():
                    fresh = self._read(done.target)
            except _Stop as stop:
                self._stopped(index, write, stop.signum, False)
            except MachinePoolError as err:
                self._failed(index, write, err, False)
            left = self.relied[key]
            if fresh is None or identity(fresh) != identity(left):
                changed = (
                    "is gone" if fresh is None else f"changed ({_changed_fields(left, fresh)})"
                )
                conflict = ConflictError(
                    f"{done.target.display} {changed} since {done.summary}", status=409
                )
                self._failed(index, write, conflict, False)

    def _failed(
        self, index: int, write: Write, err: MachinePoolError, effect: bool | None
    ) -> NoReturn:
        step = self.step(index, write)
        signum = self.signals.received
        if effect is None:
            message = (
                f"{step} got no answer ({err.message}), and whether it took effect cannot be "
                f"read back: {self._unknown(write)}"
            )
            if signum is not None:
                raise Interrupted(_exit_code(signum), message) from err
            raise IncompleteError(message, hint=self._check_hint()) from err
        taken, left = self.take_back()
        message = f"{step} failed: {err.message}. {self._state(taken, left)}"
        if self.signals.received is not None:  # a signal came while taking back
            raise Interrupted(_exit_code(self.signals.received), message) from err
        if left:
            raise IncompleteError(message, hint=self._check_hint()) from err
        raise err.restated(message) from err

    def _stopped(self, index: int, write: Write, signum: int, effect: bool | None) -> NoReturn:
        name = "SIGTERM" if signum == signal.SIGTERM else "SIGINT"
        step = self.step(index, write)
        if effect is None:
            report = f"{name} during {step}; whether it took effect cannot be read back: "
            raise Interrupted(_exit_code(signum), report + self._unknown(write))
        if effect:
            self.applied.append(write)
        taken, left = self.take_back()
        when = "after" if effect else "before"
        report = f"{name} {when} {step}. {self._state(taken, left)}"
        raise Interrupted(_exit_code(signum), report)

    def _unknown(self, write: Write) -> str:
        kept = [f"{w.summary}: done" for w in self.applied]
        return "; ".join(
            [*kept, f"{write.summary}: unknown, {write.target.display} must be checked"]
        )

    def take_back(self) -> tuple[list[str], list[str]]:
        """Undo applied writes newest first, stopping at the first that cannot be undone:
        older writes stay with it, since it was made on top of them."""
        self.signals.settling = True
        taken: list[str] = []
        done = list(self.applied)
        while done:
            write = done[-1]
            if write.undo is None or not self._undo(write):
                break
            taken.append(f"{write.target.display}: {write.undo_summary}")
            done.pop()
        left = []
        for write in done:
            why = f" ({write.kept_because})" if write.kept_because else ""
            left.append(f"{write.summary}: done{why}")
        return taken, left

    def _undo(self, write: Write) -> bool:
        undo = Write("patch", write.target, write.undo_summary, write.undo)
        try:
            self.send(undo)
        except MachinePoolError as err:
            if _definite(err) or self.settle(undo) is not True:
                self.warn(f"taking back {write.summary} failed: {err.message}")
                return False
        return True

    def _state(self, taken: list[str], left: list[str]) -> str:
        if left:
            back = f"Taken back: {'; '.join(taken)}. " if taken else ""
            return back + f"Left changed: {'; '.join(left)}"
        if taken:
            return f"Taken back: {'; '.join(taken)}; the cluster is as before"
        return "Nothing was written"

    def _check_hint(self) -> str:
        mp = self.plan.target.pool.pool
        return f"check the state with: kubectl machinepool describe {mp.name} -n {mp.namespace}"


def still_as_planned(kube: Kube, plan: Plan) -> None:
    """Re-read every object the plan writes: if one changed, stop before the first write.

    A change of status alone does not count (the same rule as for a 409): controllers rewrite
    conditions all the time, and the live Machine controller did so between a plan and its
    first write. The stale resourceVersion then meets a 409, which send() retries once."""
    planned = {
        text(dig(r, "metadata", "uid")): r
        for r in (plan.target.machine_raw, plan.target.pool_raw)
        if r is not None
    }
    seen: set[Key] = set()
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
        except MachinePoolError as err:
            raise err.restated(f"{err.message}; nothing was written") from err
        uid = text(dig(now, "metadata", "uid"))
        version = text(dig(now, "metadata", "resourceVersion"))
        before = planned.get(ref.uid)
        if uid == ref.uid and before is not None and identity(now) == identity(before):
            continue
        if (uid, version) != (ref.uid, ref.resource_version):
            raise ConflictError(
                f"{ref.display} changed since the plan was made (resourceVersion "
                f"{ref.resource_version} is now {version}); nothing was written",
                hint="run the command again to plan from what is there now",
            )


@dataclass(frozen=True, slots=True)
class Outcome:
    # kubectl-style lines, one per write: "machine.cluster.x-k8s.io/x deleted".
    lines: tuple[str, ...]


def execute(kube: Kube, plan: Plan, *, dry_run: bool, warn: Report) -> Outcome:
    """Send the plan's writes in order; on a failure or a signal, settle and report the state."""
    with _Signals() as signals:
        try:
            with signals.sending():
                still_as_planned(kube, plan)
        except _Stop as stop:
            raise Interrupted(_exit_code(stop.signum), "Nothing was written") from None
        raws = [r for r in (plan.target.machine_raw, plan.target.pool_raw) if r is not None]
        relied = {
            _key(w.target): next(r for r in raws if dig(r, "metadata", "uid") == w.target.uid)
            for w in plan.writes
        }
        run = _Run(
            kube,
            plan,
            dry_run,
            signals,
            warn,
            {_key(w.target): w.target.resource_version for w in plan.writes},
            relied,
        )
        try:
            run.run()
        except _Abandon as stop:
            raise run.abandoned(stop.signum) from None
    suffix = " (server dry run)" if dry_run else ""
    return Outcome(tuple(line + suffix for line in run.lines))


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
