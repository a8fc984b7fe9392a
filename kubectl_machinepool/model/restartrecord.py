"""The restart `rollout restart` records on a MachinePool: when it began (STARTED, the tool's own
annotation, an RFC 3339 time the API server's clock gave) and which instances are older than it,
for the restart to go on from and for rollout status to count."""

from __future__ import annotations

import re
from datetime import datetime

from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.kubeversion import shown
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.instances import Instance

# When the restart of this MachinePool began: its instances created before it are old.
STARTED = "kubectl-machinepool/restart-started"
# RFC 3339's date-time, as the tool writes it (or with a fraction or an offset): a date alone,
# ISO 8601's other forms or anything trailing is no start, never read as the part that parses.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})", re.A)


@record
class RestartRecord:
    """The annotation as read: its value (None: there is none) and the start it names (None:
    none, or a value that is no RFC 3339 time)."""

    value: str | None
    started: datetime | None

    @property
    def unparseable(self) -> bool:
        return self.value is not None and self.started is None

    @property
    def shown(self) -> str:
        """The value for a line of text: quoted, its control characters escaped, bounded."""
        return shown(self.value or "")


def read_record(mp: RawObject | None) -> RestartRecord:
    value = mapping(dig(mp, "metadata", "annotations")).get(STARTED)
    if value is None:
        return RestartRecord(None, None)
    if isinstance(value, datetime):  # a dump's YAML reads an unquoted time as one
        return RestartRecord(str(value), parse_time(value))
    if not isinstance(value, str):
        return RestartRecord(str(value), None)
    return RestartRecord(value, parse_start(value))


def parse_start(value: str) -> datetime | None:
    """An RFC 3339 time as the tool writes one; None for anything else."""
    return parse_time(value) if _RFC3339.fullmatch(value) else None


def recorded_start(mp: RawObject | None) -> datetime | None:
    """When the restart recorded on the MachinePool began; None: no restart (or unreadable)."""
    return read_record(mp).started


def made_before(instances: tuple[Instance, ...], started: datetime) -> list[Instance]:
    """The instances whose Machine was created before the start and is not going yet, oldest
    first (their names break ties)."""
    old = [
        (i.machine.object.created, i.machine.object.name, i)
        for i in instances
        if i.machine is not None
        and i.machine.object.created is not None
        and i.machine.object.created < started
        and i.machine.object.deleting_since is None
    ]
    return [i for _, _, i in sorted(old, key=lambda entry: entry[:2])]
