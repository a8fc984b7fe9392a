"""What rolls an infra pool kind and what pausing it leaves running: the facts `providers` shows
and the pool-wide operations (restart, pause) refuse or warn by (issue 30).

Each sentence ends with where it is stated, at the upstream commit of its provider's module;
"(docs)" marks a statement taken from the cloud's or provider's documentation, not its code.
"""

from __future__ import annotations

from kubectl_machinepool.base.records import record


@record
class Operations:
    """The pool-wide behaviour of one infra pool kind."""

    # What replaces every instance of a pool of this kind: for a pool whose instances cannot be
    # replaced one at a time, what rolls it instead.
    rolls: str
    # What cluster.x-k8s.io/paused on the MachinePool and the infra pool does not stop: it stops
    # the controllers' reconciles, never what the cloud already runs.
    pause_caveat: str
    # Whether the infra pool sets status.capacity, from which cluster-autoscaler scales a pool
    # from zero (autoscaler cloudprovider/clusterapi); None: not verified.
    sets_capacity: bool | None = False
    # The provider setting without which the pool has no MachinePool Machines, when there is one.
    machines_need: str | None = None
