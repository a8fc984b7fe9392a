"""A confirmed plan's preconditions, checked just before its first write: every object it writes
is still as the plan read it, or nothing is written."""

from __future__ import annotations

from kubectl_machinepool.base.errors import ConflictError, MachinePoolError, NotFoundError
from kubectl_machinepool.base.fields import dig, text
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.plans.writes import Batch, Key, identity


def still_as_planned(kube: Kube, batch: Batch) -> None:
    """Re-read every object the batch writes: if one changed, stop before the first write.

    A change of status alone does not count (the same rule as for a 409): controllers rewrite
    conditions all the time, and the live Machine controller did so between a plan and its
    first write. The stale resourceVersion then meets a 409, which send() retries once."""
    planned = {text(dig(r, "metadata", "uid")): r for r in batch.planned}
    seen: set[Key] = set()
    for write in batch.writes:
        ref = write.target
        if ref.key in seen:
            continue
        seen.add(ref.key)
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
