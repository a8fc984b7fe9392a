"""How a roll `diff` predicts would go: the provider's strategy as the infra pool will set it (or
the provider's default), the instances it replaces, the PodDisruptionBudgets that allow no
disruption now, and the pool's last recorded rollout.

The budgets are one LIST of the workload cluster's; which Nodes their pods run on is not read,
so a blocking budget holds up the drain of whichever Node runs one of its pods. How long the last
rollout took is recorded nowhere: revisions (model/revisions.py) keep when a change was written,
and no Event of Cluster API v1.14 or its providers marks a rollout's start and end.
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, integer, mapping, strings, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.manifestdiff import dotted
from kubectl_machinepool.model.revisions import read_history
from kubectl_machinepool.providers.records import Provider

NOT_RECORDED = "not recorded: no revision on the pool, and no Event marks a rollout's start and end"


@record
class Budgets:
    """A Cluster's PodDisruptionBudgets, or why they are not known."""

    budgets: tuple[RawObject, ...] | None
    note: str | None = None


@record
class Roll:
    strategy: tuple[tuple[str, Any], ...]
    strategy_default: str
    # The instances the roll replaces: the pool's as read.
    instances: int | None
    # "namespace/name" of each budget that allows no disruption now; None: not read.
    blocking_budgets: tuple[str, ...] | None
    budgets_note: str | None
    last_rollout: str


def blocking(budgets: Sequence[RawObject]) -> tuple[str, ...]:
    """The budgets that allow no disruption now and cover pods: a drain meeting one waits."""
    found = []
    for pdb in budgets:
        allowed = integer(dig(pdb, "status", "disruptionsAllowed"))
        expected = integer(dig(pdb, "status", "expectedPods"))
        if allowed is not None and allowed < 1 and (expected or 0) > 0:
            meta = mapping(pdb.get("metadata"))
            found.append(f"{text(meta.get('namespace')) or ''}/{text(meta.get('name')) or ''}")
    return tuple(sorted(found))


def last_rollout(live_pool: RawObject | None) -> str:
    """The pool's last revision, when it has one: when its change was written, by what."""
    history = read_history(live_pool)
    last = history.last
    if last is None:
        return NOT_RECORDED if history.unusable is None else f"unknown: {history.unusable}"
    return (
        f"revision {last.number} was written at {last.at} ({last.cause}); how long its "
        "rollout took is not recorded"
    )


def roll_of(
    provider: Provider | None, infra: RawObject | None, live_pool: RawObject | None, read: Budgets
) -> Roll:
    rolls = provider.rolls if provider else None
    strategy = tuple(
        (dotted(field), value)
        for field in (rolls.strategy if rolls else ())
        if (value := dig(infra, *field)) is not None
    )
    instances = integer(dig(live_pool, "status", "replicas"))
    if instances is None and live_pool is not None:
        instances = len(strings(dig(live_pool, "spec", "providerIDList"))) or None
    budgets = None if read.budgets is None else blocking(read.budgets)
    return Roll(
        strategy,
        rolls.strategy_default if rolls else "",
        instances,
        budgets,
        read.note,
        last_rollout(live_pool),
    )
