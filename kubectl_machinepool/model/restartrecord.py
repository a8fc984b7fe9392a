"""The restart `rollout restart` records on a MachinePool: when it began (STARTED, the tool's own
annotation, RFC 3339) and which instances are older than it, for the restart to go on from and
for rollout status to count."""

from __future__ import annotations

from datetime import datetime

from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.instances import Instance

# When the restart of this MachinePool began: its instances created before it are old.
STARTED = "kubectl-machinepool/restart-started"


def recorded_start(mp: RawObject | None) -> datetime | None:
    """When the restart recorded on the MachinePool began; None: no restart (or unreadable)."""
    return parse_time(mapping(dig(mp, "metadata", "annotations")).get(STARTED))


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
