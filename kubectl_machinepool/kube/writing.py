"""Send a batch of writes in order, exactly as planned, and say what state a failure left.

Every write carries preconditions (writes.py). A write is only "not done" when the server said
so (a 4xx answer). After a lost reply, a timeout, a 5xx or a signal during the request, the write
may still be on its way: fencing.py makes sure it can no longer land, and then the object's state
decides. When a write fails, the earlier ones are taken back,
newest first, as far as each can be: a write that cannot be taken back (a scale step, a delete,
an annotation the provider acts on at once) keeps every earlier one in place, since it was made
on top of them. The message names every object left changed, or whose state is unknown.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from kubectl_machinepool.base.errors import (
    ConflictError,
    IncompleteError,
    Interrupted,
    MachinePoolError,
    NotFoundError,
)
from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube import fencing
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.interrupts import Abandon, Signals, Stop, exit_code, signal_name
from kubectl_machinepool.kube.preconditions import still_as_planned
from kubectl_machinepool.plans.writes import (
    FIELD_MANAGER,
    MERGE_PATCH,
    Batch,
    Key,
    ObjectRef,
    Write,
    changed_fields,
    definite,
    identity,
)

Report = Callable[[str], None]
# After a failure or a signal, the longest any request may take, even with --request-timeout 0.
SETTLE_TIMEOUT = 15.0
# A real Machine controller answered a drain-timeout patch with two status updates before the
# delete that followed it (test_live.py); each retry first checks that only status changed.
CONFLICT_RETRIES = 5


@record
class Outcome:
    # kubectl-style lines, one per write: "machine.cluster.x-k8s.io/x deleted".
    lines: tuple[str, ...]


@dataclass
class _Run:
    """One execution: what the server holds of each object as far as this run knows."""

    kube: Kube
    batch: Batch
    dry_run: bool
    signals: Signals
    warn: Report
    versions: dict[Key, str]
    # Per object, what its next write relies on: the plan's view, then what our write left.
    relied: dict[Key, RawObject]
    applied: list[Write] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    # The write being sent or settled, for a report cut short by a second signal.
    current: Write | None = None
    # The object being fenced, whose fence annotation a second signal may leave behind.
    fenced_object: ObjectRef | None = None
    # Why the last settled write's effect is unknown.
    why_unknown: str = ""

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
        dry = {"dryRun": "All"} if self.dry_run else {}
        version = self.versions[ref.key]
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
                "DELETE", ref.path(), dry or None, body=options, timeout=self._timeout
            )
        query = {**dry, "fieldManager": FIELD_MANAGER}
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
        """Send with preconditions. A 409 is retried (CONFLICT_RETRIES times) only while
        nothing but status changed since what this write relies on (owners, finalizers,
        labels, annotations, spec, deletion and uid all as they were; plans/writes.identity
        says what counts as status): a controller answering the previous write may update
        status more than once. The same holds for taking a write back: never on top of
        someone else's change."""
        key = write.target.key
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                answer = self._send(write)
                break
            except ConflictError as err:
                if attempt == CONFLICT_RETRIES:
                    raise
                fresh = self._read(write.target)
                relied = self.relied[key]
                if fresh is None or dig(fresh, "metadata", "uid") != write.target.uid:
                    raise ConflictError(f"{write.target.display} is gone", status=409) from err
                if identity(fresh) != identity(relied):
                    raise ConflictError(
                        f"{write.target.display} changed meanwhile "
                        f"({changed_fields(relied, fresh)})",
                        hint="run the command again to plan from what is there now",
                        status=409,  # the server refused: a definite answer, whatever changed it
                    ) from err
                self.versions[key] = text(dig(fresh, "metadata", "resourceVersion")) or ""
        self._record(write, answer)

    def _record(self, write: Write, answer: RawObject) -> None:
        # A dry run persists nothing: the next write must still name the stored version.
        if self.dry_run or write.verb == "delete":
            return
        key = write.target.key
        if write.subresource == "scale":
            # A Scale, with the object's own resourceVersion: the object holds the new size now,
            # which a later write of the batch (another pool's) and an undo rely on.
            relied = copy.deepcopy(self.relied[key])
            relied.setdefault("spec", {})["replicas"] = dig(answer, "spec", "replicas")
            version = dig(answer, "metadata", "resourceVersion")
            relied.setdefault("metadata", {})["resourceVersion"] = version
            answer = relied
        elif write.subresource:
            return
        self.versions[key] = text(dig(answer, "metadata", "resourceVersion")) or ""
        self.relied[key] = answer

    def settle(self, write: Write) -> bool | None:
        """After an unanswered write: did it take effect? None when that cannot be told.
        The write may still be on its way: fencing.settle makes sure it can no longer land."""
        self.signals.settling = True
        if self.dry_run:
            return False  # nothing persists either way
        key = write.target.key
        self.fenced_object = write.target
        settled = fencing.settle(
            self.kube, write, self.versions[key], self.relied[key], self._timeout
        )
        self.fenced_object = None
        if settled.fence_left:
            self.warn(
                f"{write.target.display} keeps the annotation {fencing.FENCE_ANNOTATION}, "
                "which the tool set to stop its unanswered write; it is safe to remove"
            )
        fresh = settled.fresh
        if fresh is not None and settled.effect:
            self._record(write, fresh)
        elif fresh is not None and settled.fenced:
            # Only the fence changed it since: the next write of it (an undo) relies on that.
            self.versions[key] = text(dig(fresh, "metadata", "resourceVersion")) or ""
            self.relied[key] = fresh
        self.why_unknown = settled.why
        return settled.effect

    # -- the whole plan --------------------------------------------------------------------

    def step(self, index: int, write: Write) -> str:
        return f"step {index} of {len(self.batch.writes)} ({write.summary})"

    def run(self) -> None:
        for index, write in enumerate(self.batch.writes, 1):
            self.current = write
            self._still_as_left(index, write)
            try:
                with self.signals.sending():
                    self.send(write)
            except Stop as stop:
                effect = self.settle(write) if stop.sent else False
                self._stopped(index, write, stop.signum, effect, stop.sent)
            except MachinePoolError as err:
                effect = False if definite(err) else self.settle(write)
                if effect is False and not definite(err):
                    err = err.restated(
                        f"no answer ({err.message}); read back, it did not take effect, "
                        "and it can no longer land"
                    )
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
            done = "; ".join([*self.batch.earlier, *(f"{w.summary}: done" for w in self.applied)])
            raise Interrupted(
                exit_code(self.signals.received),
                f"after the last write; every write was made: {done}",
            )

    def abandoned(self, signum: int) -> Interrupted:
        """A second signal cut the working out short: say what is known, and what is not."""
        known = [*self.batch.earlier, *(f"{w.summary}: done" for w in self.applied)]
        if self.current is not None and self.current not in self.applied:
            known.append(
                f"{self.current.summary}: unknown, {self.current.target.display} must be checked"
            )
        if self.fenced_object is not None:
            known.append(
                f"{self.fenced_object.display} may keep the annotation {fencing.FENCE_ANNOTATION}, "
                "safe to remove"
            )
        return Interrupted(
            exit_code(signum),
            "stopped again before the state was worked out: "
            + ("; ".join(known) or "nothing was written"),
        )

    def _still_as_left(self, index: int, write: Write) -> None:
        """Objects written earlier must still be as this run left them: the next write was
        planned on top of them (a scale step on top of a Machine's annotation, with the Machine
        still the pool's). The server checks the next write's own object; this checks the rest."""
        earlier = {w.target.key: w for w in self.applied if w.target.key != write.target.key}
        for key, done in earlier.items():
            try:
                with self.signals.sending():
                    fresh = self._read(done.target)
            except Stop as stop:
                self._stopped(index, write, stop.signum, False, sent=False)
            except MachinePoolError as err:
                self._failed(index, write, err, False)
            left = self.relied[key]
            if fresh is None or identity(fresh) != identity(left):
                changed = "is gone" if fresh is None else f"changed ({changed_fields(left, fresh)})"
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
                f"{step} got no answer ({err.message}); whether it took effect is unknown "
                f"({self.why_unknown}) and it may still take effect: {self._unknown(write)}"
            )
            if signum is not None:
                raise Interrupted(exit_code(signum), message) from err
            raise IncompleteError(message, hint=self.batch.check_hint) from err
        taken, left = self.take_back()
        message = f"{step} failed: {err.message}. {self._state(taken, left)}"
        if self.signals.received is not None:  # a signal came while taking back
            raise Interrupted(exit_code(self.signals.received), message) from err
        if left or self.batch.earlier:
            raise IncompleteError(message, hint=self.batch.check_hint) from err
        raise err.restated(message) from err

    def _stopped(
        self, index: int, write: Write, signum: int, effect: bool | None, sent: bool
    ) -> NoReturn:
        name = signal_name(signum)
        step = self.step(index, write)
        if effect is None:
            report = (
                f"{name} during {step}; whether it took effect is unknown ({self.why_unknown}) "
                "and it may still take effect: "
            )
            raise Interrupted(exit_code(signum), report + self._unknown(write))
        if effect:
            self.applied.append(write)
        taken, left = self.take_back()
        if not sent:
            when = f"before {step}"
        elif effect:
            when = f"during {step}, which took effect"
        else:
            when = f"during {step}, which did not take effect and can no longer land"
        raise Interrupted(exit_code(signum), f"{name} {when}. {self._state(taken, left)}")

    def _unknown(self, write: Write) -> str:
        kept = [*self.batch.earlier, *(f"{w.summary}: done" for w in self.applied)]
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
            if definite(err) or self.settle(undo) is not True:
                self.warn(f"taking back {write.summary} failed: {err.message}")
                return False
        return True

    def _state(self, taken: list[str], left: list[str]) -> str:
        left = [*self.batch.earlier, *left]
        if left:
            back = f"Taken back: {'; '.join(taken)}. " if taken else ""
            return back + f"Left changed: {'; '.join(left)}"
        if taken:
            return f"Taken back: {'; '.join(taken)}; the cluster is as before"
        return "Nothing was written"


def apply_writes(kube: Kube, batch: Batch, *, dry_run: bool, warn: Report) -> Outcome:
    """Send the batch's writes in order; on a failure or a signal, settle and report the state."""
    with Signals() as signals:
        try:
            with signals.sending():
                still_as_planned(kube, batch)
        except Stop as stop:
            earlier = "; ".join(batch.earlier)
            said = f"Nothing more was written. Left changed: {earlier}" if earlier else None
            raise Interrupted(exit_code(stop.signum), said or "Nothing was written") from None
        relied = {
            w.target.key: next(
                r for r in batch.planned if dig(r, "metadata", "uid") == w.target.uid
            )
            for w in batch.writes
        }
        versions = {w.target.key: w.target.resource_version for w in batch.writes}
        run = _Run(kube, batch, dry_run, signals, warn, versions, relied)
        try:
            run.run()
        except Abandon as stop:
            raise run.abandoned(stop.signum) from None
    suffix = " (server dry run)" if dry_run else ""
    return Outcome(tuple(line + suffix for line in run.lines))
