"""What every whole-pool write does around its plans: read the named pools of one namespace,
described as describe shows them, with the snapshot they were read from (a pool not found, or a
read that fails, ends the command saying that nothing was written); then carry the plans out as
one batch of the write engine.

Plans are made on a ground: the cluster itself (Live), or a dump or export of it (Dump), which
holds no connection at all, so that nothing made from a dump can reach a server, let alone
write: what only the server can answer (permissions, PodDisruptionBudgets) is said to be
unasked in the plan's checks, and its writes are only listed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, TextIO, TypeVar

from kubectl_machinepool.app.carrying import Callbacks, DryRun, listed, refuse, send
from kubectl_machinepool.app.reading import pools_in
from kubectl_machinepool.base.apiversion import crd_plural
from kubectl_machinepool.base.errors import (
    ClusterAccessError,
    MachinePoolError,
    UsageError,
    pools_not_found,
)
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.fetch import read_description
from kubectl_machinepool.kube.permissions import may, permissions
from kubectl_machinepool.kube.workload import workload_disruption
from kubectl_machinepool.kube.writing import Outcome
from kubectl_machinepool.model.description import PoolDescription, describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline.dump import load_dump
from kubectl_machinepool.plans.checks import UNANSWERED, Check, Level, Rereads, unread_checks
from kubectl_machinepool.plans.disruption import Disruption
from kubectl_machinepool.plans.ownerchecks import owner_checks
from kubectl_machinepool.plans.writes import Access, Batch, Write

if TYPE_CHECKING:
    from kubectl_machinepool.app.options import Source

Permissions = Callable[[tuple[Write, ...]], dict[Access, bool | None]]
# Said of what a plan made from a dump could not ask, in its checks and its first line.
AT_WRITE_TIME = "preconditions and permissions are checked at write time, not here"


class Checked(Protocol):
    """Any write's plan: its checks and the writes they guard."""

    @property
    def checks(self) -> tuple[Check, ...]: ...
    @property
    def writes(self) -> tuple[Write, ...]: ...


C = TypeVar("C", bound=Checked)


def _wall() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class Ground(Protocol):
    """Where plans are made from: what is read, and what only a server answers."""

    @property
    def now(self) -> datetime: ...
    @property
    def timeout(self) -> float | None:
        """Each request's timeout, where requests are made."""
        ...

    def read(
        self, selection: Selection, workload_kubeconfig: str | None, *, diagnosis: bool
    ) -> Snapshot: ...
    def permissions(self, writes: tuple[Write, ...]) -> dict[Access, bool | None]: ...
    def may(self, access: Access) -> bool | None:
        """Whether the user may do what the run does beyond its writes (watch what it
        follows); None: not asked."""
        ...

    def plural(self, group: str, kind: str) -> str: ...
    def disruption(
        self, namespace: str, cluster: str, workload_kubeconfig: str | None, node: str
    ) -> Disruption:
        """The PodDisruptionBudgets a drain of the Node would meet."""
        ...

    def said(self, plan: C) -> C:
        """The plan, with what this ground could not ask said in its checks."""
        ...


@record
class Live:
    """The cluster: read now, asked for permissions, the workload cluster's budgets read, and
    the objects that apply the pools from outside (kube/owners.py) read beside the pools."""

    kube: Kube
    now: datetime = dataclasses.field(default_factory=_wall)

    @property
    def timeout(self) -> float | None:
        return self.kube.timeout

    def read(
        self, selection: Selection, workload_kubeconfig: str | None, *, diagnosis: bool
    ) -> Snapshot:
        return read_description(
            self.kube,
            selection.namespace,
            selection,
            workload_kubeconfig,
            self.kube.timeout,
            diagnosis=diagnosis,
            owners=True,
        )

    def permissions(self, writes: tuple[Write, ...]) -> dict[Access, bool | None]:
        return permissions(self.kube, writes)

    def may(self, access: Access) -> bool | None:
        return may(self.kube, access)

    def plural(self, group: str, kind: str) -> str:
        return self.kube.resource(group, kind).plural

    def disruption(
        self, namespace: str, cluster: str, workload_kubeconfig: str | None, node: str
    ) -> Disruption:
        return workload_disruption(
            self.kube, namespace, cluster, workload_kubeconfig, self.kube.timeout, node=node
        )

    def said(self, plan: C) -> C:
        return plan


@record
class Dump:
    """A dump or export (-f), read as at its capture (or --now): no server is asked anything."""

    snapshot: Snapshot
    now: datetime
    paths: tuple[str, ...]
    # An export records when it was captured; a dump does not (snapshot.captured is then its
    # newest timestamp, when it has one).
    export: bool = False
    # --now was given: the time is the user's, not the dump's.
    now_given: bool = False
    timeout: float | None = None  # no request is made

    @classmethod
    def load(cls, source: Source, stdin: TextIO | None, clock: Callable[[], datetime]) -> Dump:
        from kubectl_machinepool.offline.bundlefiles import is_export

        paths = source.filenames
        snapshot = load_dump(paths, stdin, now=source.now).without_extra_notes()
        now = source.now or snapshot.captured or clock()
        export = len(paths) == 1 and paths[0] != "-" and is_export(paths[0])
        return cls(snapshot, now, paths, export, now_given=source.now is not None)

    @property
    def heading(self) -> str:
        """The first line of a plan made from a dump: from which, as at when."""
        at = format_time(self.now)
        if self.now_given:
            when = f"as at {at} (--now)"
            if self.export:
                when = f"captured at {format_time(self.snapshot.captured)}, {when}"
        elif self.export:
            when = f"captured at {at}"
        else:
            which = "its newest timestamp" if self.snapshot.captured else "the current time"
            when = f"as at {at}, {which} (a dump holds no capture time; --now sets one)"
        return f"Planned from {' '.join(self.paths)} {when}; {AT_WRITE_TIME}."

    def read(
        self,
        selection: Selection,  # noqa: ARG002
        workload_kubeconfig: str | None,  # noqa: ARG002
        *,
        diagnosis: bool,  # noqa: ARG002
    ) -> Snapshot:
        # All of it: describe keeps to the selection.
        return self.snapshot

    def permissions(self, writes: tuple[Write, ...]) -> dict[Access, bool | None]:  # noqa: ARG002
        return {}  # none asked: said() tells the checks so

    def may(self, access: Access) -> bool | None:  # noqa: ARG002
        return None

    def plural(self, group: str, kind: str) -> str:  # noqa: ARG002
        # Cluster API's rule for its CRDs' plurals, which every infra pool kind follows: only
        # the server's discovery could say otherwise.
        return crd_plural(kind)

    def disruption(
        self,
        namespace: str,  # noqa: ARG002
        cluster: str,  # noqa: ARG002
        workload_kubeconfig: str | None,  # noqa: ARG002
        node: str,  # noqa: ARG002
    ) -> Disruption:
        return Disruption(None, "a plan made from a dump asks no workload cluster")

    def said(self, plan: C) -> C:
        # No permission is asked here: each unanswered check is one a dump cannot ask, the
        # plan's own writes' and the run's later ones' (a restart's record removed) alike.
        checks = tuple(
            Check(Level.WARNING, f"not asked, planned from a dump: {_question(c)}")
            if c.level is Level.WARNING and c.message.startswith(UNANSWERED)
            else c
            for c in plan.checks
        )
        # Every plan is a record, which a protocol cannot say.
        return dataclasses.replace(plan, checks=checks)  # type: ignore[type-var]


def _question(check: Check) -> str:
    """An unanswered permission check's question: "whether you may patch ..."."""
    return check.message.removeprefix("could not check ")


@contextmanager
def nothing_written() -> Iterator[None]:
    """A failure while planning says that nothing was written."""
    try:
        yield
    except MachinePoolError as err:
        raise err.restated(f"{err.message}; nothing was written") from err


def read_pools(
    ground: Ground,
    namespace: str | None,
    names: tuple[str, ...],
    *,
    workload_kubeconfig: str | None,
    warn: Callable[[str], None] | None,
) -> tuple[Snapshot, tuple[PoolDescription, ...]]:
    """The pools in the order named, each once (a name given twice would plan its writes
    twice); what could not be read is warned about. namespace None (a dump without -n): the
    namespace that holds them, which must be one."""
    names = tuple(dict.fromkeys(names))
    selection = Selection(namespace, names)
    snapshot = ground.read(selection, workload_kubeconfig, diagnosis=True)
    description = describe(snapshot, selection, ground.now)
    for note in description.notes:
        if warn is not None:
            warn(note)
    found = [p for c in description.clusters for p in c.pools]
    spaces = sorted({p.pool.namespace for p in found})
    if len(spaces) > 1:
        raise UsageError(
            f"the MachinePools named are in several namespaces: {', '.join(spaces)}",
            hint="pick one with -n NAMESPACE",
        )
    pools = {p.pool.name: p for p in found}
    missing = [n for n in names if n not in pools]
    if missing:
        raise pools_not_found(missing, namespace, pools_in(snapshot, namespace))
    return snapshot, tuple(pools[n] for n in names)


class PoolPlan(Protocol):
    """A whole-pool write's plan for one pool, as carry_out sends it."""

    @property
    def pool(self) -> PoolDescription: ...
    @property
    def refusals(self) -> tuple[str, ...]: ...
    @property
    def writes(self) -> tuple[Write, ...]: ...
    @property
    def planned(self) -> tuple[RawObject, ...]: ...


def _refusals(plans: Sequence[PoolPlan]) -> list[str]:
    """Each refusal, with its pool's name when several pools were asked for."""
    named = len(plans) > 1
    return [
        f"MachinePool {plan.pool.pool.name}: {r}" if named else r
        for plan in plans
        for r in plan.refusals
    ]


def carry_out(
    kube: Kube, plans: Sequence[PoolPlan], dry_run: DryRun, ui: Callbacks
) -> Outcome | None:
    """Refuse, or confirm and send every plan's writes as one batch (undone together)."""
    refuse(_refusals(plans))
    writes = tuple(w for plan in plans for w in plan.writes)
    planned = tuple(r for plan in plans for r in plan.planned)
    names = " ".join(p.pool.pool.name for p in plans)
    namespace = plans[0].pool.pool.namespace
    hint = f"check the state with: kubectl machinepool describe {names} -n {namespace}"
    outcome = send(kube, writes, Batch(writes, planned, hint), dry_run, ui)
    for line in outcome.lines if outcome else ():
        ui.report(line)
    return outcome


def preview(plans: Sequence[PoolPlan], ui: Callbacks) -> None:
    """A client dry run with no cluster to send to (plans made from a dump): refuse as
    carry_out refuses, else list the writes as it lists them."""
    refuse(_refusals(plans))
    listed(tuple(w for plan in plans for w in plan.writes), ui)


def infra_plural(ground: Ground, pool: PoolDescription) -> str:
    """How the API names the pool's infra pool kind, for writes to it."""
    ref = pool.pool.infrastructure_ref
    if ref is None:
        raise ClusterAccessError(
            f"MachinePool {pool.pool.namespace}/{pool.pool.name} names no infra pool"
        )
    return ground.plural(ref.api_group, ref.kind)


class Asked(Protocol):
    """Which pools a whole-pool write was asked for, and where their Nodes come from."""

    @property
    def names(self) -> tuple[str, ...]: ...
    @property
    def namespace(self) -> str | None:
        """None: a dump's, wherever the pools are."""
        ...

    @property
    def workload_kubeconfig(self) -> str | None: ...
    @property
    def ignore_owner(self) -> bool:
        """--ignore-owner: a GitOps owner that reverts the writes is a warning, not a refusal."""
        ...


def plan_each(
    ground: Ground,
    asked: Asked,
    plan: Callable[[PoolDescription, Snapshot, Permissions], C],
    *,
    warn: Callable[[str], None] | None,
    rereads: Rereads | None = None,
) -> tuple[C, ...]:
    """Read the pools and plan each with the user's permissions at hand, what could not be read
    said first (refused where the command's run reads it again: rereads), who applies the
    fields it writes from outside last (plans/ownerchecks.py); a failure says that nothing was
    written."""
    with nothing_written():
        snapshot, pools = read_pools(
            ground,
            asked.namespace,
            asked.names,
            workload_kubeconfig=asked.workload_kubeconfig,
            warn=warn,
        )
        return tuple(
            ground.said(
                owned(
                    _first(
                        plan(pool, snapshot, ground.permissions),
                        unread_checks(pool, snapshot, rereads or Rereads()),
                    ),
                    snapshot,
                    ignore_owner=asked.ignore_owner,
                )
            )
            for pool in pools
        )


def owned(plan: C, snapshot: Snapshot, *, ignore_owner: bool) -> C:
    """The plan with the owner checks of its writes after its own."""
    checks = owner_checks(plan.writes, snapshot, ignore_owner=ignore_owner)
    if not checks:
        return plan
    # Every plan is a record, which a protocol cannot say.
    return dataclasses.replace(plan, checks=(*plan.checks, *checks))  # type: ignore[type-var]


def _first(plan: C, checks: list[Check]) -> C:
    """The plan with these checks before its own: they say what its own were made without."""
    if not checks:
        return plan
    # Every plan is a record, which a protocol cannot say.
    return dataclasses.replace(plan, checks=(*checks, *plan.checks))  # type: ignore[type-var]
