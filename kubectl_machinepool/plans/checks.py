"""A write plan's checks, each a line the user reads before confirming: ok, a warning, or a
refusal that stops the plan with nothing written. Shared by every write's plan, as is the check
of the user's permissions for each write."""

from __future__ import annotations

from enum import IntEnum

from kubectl_machinepool.base.records import record
from kubectl_machinepool.plans.writes import Access, Write


class Level(IntEnum):
    OK = 0
    WARNING = 1
    REFUSED = 2


@record
class Check:
    level: Level
    message: str


def refused(checks: tuple[Check, ...]) -> tuple[str, ...]:
    """What a plan refuses for: its checks at level REFUSED."""
    return tuple(c.message for c in checks if c.level is Level.REFUSED)


def permission_checks(
    writes: tuple[Write, ...], permissions: dict[Access, bool | None]
) -> list[Check]:
    """One line per write: whether the user may make it (SelfSubjectAccessReview)."""
    checks = []
    for write in writes:
        allowed = permissions.get(write.access)
        target = write.target
        what = f"{write.verb} {write.resource}.{target.group} in namespace {target.namespace}"
        if allowed is False:
            checks.append(Check(Level.REFUSED, f"you may not {what}"))
        elif allowed is None:
            checks.append(Check(Level.WARNING, f"could not check whether you may {what}"))
        else:
            checks.append(Check(Level.OK, f"you may {what}"))
    return checks
