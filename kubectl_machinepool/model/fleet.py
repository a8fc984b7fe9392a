"""A fleet's reads: one per kubeconfig context, each a value or the one line that says why
there is none (made by app/fleet.py, shown by render/fleet.py)."""

from __future__ import annotations

from typing import Generic, TypeVar

from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.listing import ListedPool

T = TypeVar("T")


@record(slots=False)
class Read(Generic[T]):
    """One context's read: its value, or why there is none."""

    context: str
    value: T | None
    error: str | None = None


@record(slots=False)
class ContextPools:
    """One context's MachinePools for list, made in the process that read the context."""

    pools: tuple[ListedPool, ...]
    # The namespace read (None: every namespace).
    namespace: str | None
    notes: tuple[str, ...]
