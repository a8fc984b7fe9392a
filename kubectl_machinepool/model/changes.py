"""What a watch reports, as plain data: the kube package makes it, a followed view shows it."""

from __future__ import annotations

from kubectl_machinepool.base.records import record

# The synthetic event: every object as of now, in a List (first, and after 410 Gone).
LISTED = "LISTED"


@record
class Change:
    """One event a watch reported: ADDED, MODIFIED, DELETED, or LISTED (it started over)."""

    event: str
    kind: str
    name: str
