"""describe's Cloud line (where the pool lives in its provider's cloud) and, for each instance
that never joined, the commands to look at it and replace it by hand, wrapped as a shell
continues them."""

from __future__ import annotations

from kubectl_machinepool.model.cloud import InstanceCloud, PoolCloud

# Instances that never joined, each with its commands, before the rest are only counted.
SHOWN = 3
# Room a continued command line is indented by, under its first.
CONTINUED = "  "


def cloud_line(cloud: PoolCloud | None) -> str | None:
    """`AWS Auto Scaling Group asg-workers, m6i.large, launch template lt-0abc (version 3)`."""
    if cloud is None:
        return None
    kind = cloud.kind
    if not kind.lower().startswith(cloud.cloud.lower()):
        kind = f"{cloud.cloud} {kind}"
    head = " ".join(p for p in (kind, cloud.name, cloud.pool_id and f"({cloud.pool_id})") if p)
    parts = [head, *([cloud.instance_type] if cloud.instance_type else [])]
    return ", ".join([*parts, *(f"{label} {value}" for label, value in cloud.images)])


def never_joined_sentence(instance: InstanceCloud, cloud: PoolCloud) -> str:
    where = f" ({instance.zone})" if instance.zone else ""
    what = f"{instance.id or 'an instance'}{where}"
    why = (
        "no Node has its providerID"
        if instance.provider_id
        else f"{instance.infra_machine or 'its infra machine'} has no providerID yet"
    )
    if instance.inspect is None and instance.replace is None:
        return f"{what}: {why}; look it up in the {cloud.cloud} console"
    return f"{what}: {why}; if it stays so, run by hand:"


def more_sentence(cloud: PoolCloud) -> str | None:
    more = len(cloud.never_joined) - SHOWN
    if more <= 0:
        return None
    return f"and {more} more; describe -o json gives each one's ID, zone and commands"


def command_lines(command: str, room: int) -> list[str]:
    """A command wrapped at its spaces to room columns, every line but the last ending in a
    backslash and the next indented: pasted whole, a shell runs it as one. A word longer than
    the room takes its line alone, its backslash without the space (the indent below parts it
    from the next)."""
    first, *words = command.split(" ")
    lines: list[str] = []
    line = first
    for word in words:
        lead = CONTINUED if lines else ""
        if len(lead) + len(line) + len(word) + len(" \\") + 1 > room:
            alone = " " not in line and len(lead) + len(line) + len(" \\") > room
            lines.append(f"{lead}{line}{'' if alone else ' '}\\")
            line = word
        else:
            line = f"{line} {word}"
    return [*lines, (CONTINUED if lines else "") + line]
