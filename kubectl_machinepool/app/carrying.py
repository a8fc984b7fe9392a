"""What every write command does between its plan and the write engine: refuse with what the
plan found, show a client dry run, ask, and send the writes (kube/writing.py), the same way for
delete-machine, upgrade and the whole-pool writes after them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum

from kubectl_machinepool.base.errors import RefusedError
from kubectl_machinepool.base.records import record
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.writing import Outcome, apply_writes
from kubectl_machinepool.plans.writes import Batch, Write

Report = Callable[[str], None]


class DryRun(Enum):
    NONE = "none"
    CLIENT = "client"
    SERVER = "server"


@record
class Callbacks:
    report: Report  # a result, for standard output
    inform: Report  # progress, for standard error
    warn: Report
    # Asked once, before the first write that persists; False cancels with nothing written.
    confirm: Callable[[], bool]


def refuse(refusals: Sequence[str]) -> None:
    """The plan's first refusal as the command's error, the rest counted (shown in the plan)."""
    if refusals:
        more = f" (and {len(refusals) - 1} more above)" if len(refusals) > 1 else ""
        raise RefusedError(f"refused: {refusals[0]}{more}; nothing was written")


def listed(writes: tuple[Write, ...], ui: Callbacks) -> None:
    """A client dry run: each write named kubectl's way, none sent."""
    for write in writes:
        ui.report(f"{write.target.kubectl_name} {write.done} (dry run)")


def send(
    kube: Kube, writes: tuple[Write, ...], batch: Batch, dry_run: DryRun, ui: Callbacks
) -> Outcome | None:
    """The writes of a plan with no refusal: listed for a client dry run, else confirmed (a
    server dry run needs no confirmation) and sent. None: nothing was sent."""
    if dry_run is DryRun.CLIENT:
        listed(writes, ui)
        return None
    server = dry_run is DryRun.SERVER
    if not server and not ui.confirm():
        ui.inform("Cancelled: nothing was written.")
        return None
    return apply_writes(kube, batch, dry_run=server, warn=ui.warn)
