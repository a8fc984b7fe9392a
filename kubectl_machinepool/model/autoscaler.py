"""cluster-autoscaler's node-group bounds on a MachinePool, read as its clusterapi provider reads
them, and what it makes of bounds it cannot read.

kubernetes/autoscaler cluster-autoscaler/cloudprovider/clusterapi, clusterapi_utils.go
parseScalingBounds: each annotation goes through Go's strconv.Atoi (an optional sign and ASCII
digits within int64: no spaces, no point, no exponent; "" fails too), an absent one counts as 0.
A value Atoi refuses, a negative one, or a maximum below the minimum is an error, and not one of
this pool alone: newNodeGroupFromScalableResource (clusterapi_nodegroup.go) returns it,
nodeGroups (clusterapi_controller.go) stops at the first error, and the provider's NodeGroups
(clusterapi_provider.go) logs "error getting node groups" and returns none, so the autoscaler
scales no pool it discovers until the annotation is fixed. Readable bounds make the pool a node
group when the maximum is above 0: max-size alone is min 0, and min-size alone above 0 is a
maximum below the minimum.
"""

from __future__ import annotations

import json
import re

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape

MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
# strconv.Atoi's syntax: the sign and ASCII digits only (Python's \d and int() take more).
_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64_DIGITS = 19
_INT64_MAX = 2**63 - 1
# A value is shown whole up to this many characters: any number, and a bound on hostile ones.
_SHOWN = 40


@record
class AutoscalerBounds:
    """Both annotations as written (None: absent), the numbers read from them (None: absent or
    unreadable), and why cluster-autoscaler refuses them (empty: it reads them)."""

    min_value: str | None
    max_value: str | None
    low: int | None
    high: int | None
    problems: tuple[str, ...]

    @property
    def annotated(self) -> bool:
        return self.min_value is not None or self.max_value is not None

    @property
    def node_group(self) -> bool:
        """Whether cluster-autoscaler sizes this pool (it also needs scale-from-zero capacity
        to take a pool at 0 replicas, which is not judged here)."""
        return not self.problems and (self.high or 0) > 0

    @property
    def minimum(self) -> int:
        return self.low or 0

    @property
    def maximum(self) -> int:
        return self.high or 0


def shown(value: str) -> str:
    """An annotation's value for a message: quoted as JSON quotes it, so that a newline or a tab
    (all that makes "3\\n" no number) shows; other controls escaped; bounded."""
    quoted = escape(json.dumps(value[:_SHOWN], ensure_ascii=False))
    return quoted if len(value) <= _SHOWN else f'{quoted[:-1]}..." ({len(value)} characters)'


def _read(key: str, value: str | None) -> tuple[int | None, str | None]:
    """The number, or why cluster-autoscaler refuses the value."""
    if value is None:
        return None, None
    if not _ATOI.fullmatch(value):
        return None, f"{key} is {shown(value)}, not a whole number"
    magnitude = value.lstrip("+-").lstrip("0")
    if len(magnitude) > _INT64_DIGITS or int(magnitude or "0") > _INT64_MAX:
        return None, f"{key} is {shown(value)}, too large for cluster-autoscaler (int64)"
    number = int(value)
    if number < 0:
        return None, f"{key} is {shown(value)}: a bound cannot be negative"
    return number, None


def autoscaler_bounds(annotations: dict[str, str]) -> AutoscalerBounds:
    min_value, max_value = annotations.get(MIN_SIZE), annotations.get(MAX_SIZE)
    low, low_problem = _read(MIN_SIZE, min_value)
    high, high_problem = _read(MAX_SIZE, max_value)
    problems = [p for p in (low_problem, high_problem) if p]
    if not problems and (high or 0) < (low or 0):
        unset = "" if max_value is not None else ", as max-size is unset"
        problems.append(
            f"the minimum {low} is above the maximum {high or 0}{unset}: the bounds contradict "
            "each other"
        )
    return AutoscalerBounds(min_value, max_value, low, high, tuple(problems))
