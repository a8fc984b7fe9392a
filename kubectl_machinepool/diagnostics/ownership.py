"""Rules about a pool's live fields against what its applier from outside last applied (R28):
the fields the write commands change, which an applier puts back on its next apply.

What each signal can honestly say (docs/ownership.md, The diagnose rules): a last-applied copy
holds the value its client-side applier sets, so a live value that differs is drift (MP2801).
Server-side apply keeps no values, only owners, and gives a field to the last manager that
changed it, so a GitOps manager never owns a field whose value someone else changed. What is
left to see is a field its GitOps applier does not own that a manager which is no applier wrote
after the applier's last apply: put back at the next sync if the manifest sets it, which only
git knows (MP2802, info).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.fields import dig
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.core import (
    CAPA,
    CAPI,
    Context,
    Finding,
    Rule,
    Severity,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.ownership import (
    AUTOSCALER,
    REPLICAS,
    Applier,
    ManagedEntry,
    appliers,
    bounded,
    field_appliers,
    last_applied,
    managed_entries,
)

VERSION = ("spec", "template", "spec", "version")
# The fields upgrade and scale write, the same path in both API generations.
WATCHED = (REPLICAS, VERSION)


def _shown(value: Any) -> str:
    return bounded(json.dumps(value, ensure_ascii=False, default=str))


def _same(path: tuple[str, ...], live: Any, applied: Any) -> bool:
    """Cluster API's webhook writes a version without its "v" with one: not drift."""
    if path == VERSION and isinstance(live, str) and isinstance(applied, str):
        return live.removeprefix("v") == applied.removeprefix("v")
    return bool(live == applied)


def _writers(entries: tuple[ManagedEntry, ...], path: tuple[str, ...]) -> str:
    owning = [e for e in entries if e.owns(path)]
    if not owning:
        return ""
    shown = ", ".join(f"{e.manager}{_at(e.time)}" for e in owning)
    return f" (managedFields: written by {shown})"


def _at(when: datetime | None) -> str:
    return f" at {format_time(when)}" if when else ""


def _puts_back(applier: Applier) -> str:
    if applier.gitops:
        return f"{_named(applier)} puts it back at its next sync"
    return f"the next {applier.kind} of the same file puts it back"


def _named(applier: Applier) -> str:
    return f"{applier.kind} {applier.name}" if applier.name else applier.kind


def drift_from_last_applied(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    raw = ctx.raw_pool(pool)
    applied = last_applied(raw)
    owner = next((a for a in appliers(raw) if a.last_applied), None)
    if applied is None or owner is None:
        return
    entries = managed_entries(raw)
    for path in WATCHED:
        parent = dig(applied, *path[:-1])
        if not isinstance(parent, dict) or path[-1] not in parent:
            continue
        live, copy = dig(raw, *path), parent[path[-1]]
        if _same(path, live, copy):
            continue
        where = ".".join(path)
        message = (
            f"{where} is {_shown(live)} but the last-applied copy of {_named(owner)} says "
            f"{_shown(copy)}{_writers(entries, path)}: {_puts_back(owner)}"
        )
        yield rule.finding(pool, pool_subject(pool), message)


def _sized_elsewhere(pool: PoolDescription, raw: dict[str, Any]) -> bool:
    """spec.replicas of a pool the autoscaler or the provider sizes: GitOps leaves it out."""
    autoscaled = any(a.kind == AUTOSCALER for a in field_appliers(raw, REPLICAS))
    return autoscaled or pool.pool.replicas_managed_by is not None


def written_since_gitops_apply(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    raw = ctx.raw_pool(pool)
    entries = managed_entries(raw)
    found = appliers(raw)
    applier_managers = {m for a in found for m in a.managers}
    for applier in (a for a in found if a.gitops):
        applies = [e for e in entries if e.manager in applier.managers and e.operation == "Apply"]
        dated = [(e.time, e.manager) for e in applies if e.time is not None]
        if not dated:
            continue
        last, latest = max(dated)
        for path in WATCHED:
            if any(e.owns(path) for e in applies) or (
                path == REPLICAS and _sized_elsewhere(pool, raw)
            ):
                continue
            others = [
                e
                for e in entries
                if e.owns(path) and e.manager not in applier_managers and e.time and e.time > last
            ]
            if not others:
                continue
            writers = ", ".join(f"{e.manager} ({e.operation}{_at(e.time)})" for e in others)
            message = (
                f"{'.'.join(path)} ({_shown(dig(raw, *path))}) was last written by {writers}, "
                f"after the last apply of {_named(applier)} ({latest}"
                f"{_at(last)}), which no longer owns it: if its manifest sets the field, "
                f"{_puts_back(applier)}"
            )
            yield rule.finding(pool, pool_subject(pool), message)


RULES = [
    Rule(
        "MP2801",
        "R28",
        "Live fields differ from what was last applied",
        Severity.WARNING,
        "spec.replicas or spec.template.spec.version differs from the pool's "
        "kubectl.kubernetes.io/last-applied-configuration copy (kubectl apply, or Argo CD's "
        "client-side sync); a version that differs only by its leading v is the same",
        "The applier sets the copy's value again at its next apply (Argo CD's self-heal within "
        "seconds): a change made here is undone, and a rollout it started runs twice.",
        "Change the value where the applier takes it from (git, the applied file), or apply it "
        "again to put the copy's value back; see docs/ownership.md for suspending the owner.",
        (CAPI + "10479",),
        drift_from_last_applied,
    ),
    Rule(
        "MP2802",
        "R28",
        "A GitOps-applied pool's field was written by hand",
        Severity.INFO,
        "a GitOps applier (Argo CD, Flux, the ClusterClass topology) applies the pool with "
        "server-side apply, and spec.replicas or spec.template.spec.version is owned in "
        "managedFields by a manager that is no applier, written after the applier's last apply "
        "(spec.replicas of a pool the autoscaler or the provider sizes is left out)",
        "Server-side apply gives a field to the last manager that changed it, so managedFields "
        "cannot say whether the manifest sets it: if it does, the next sync puts its value back.",
        "Make the change in git (or the ClusterClass topology), or check that the manifest leaves "
        "the field out.",
        (CAPI + "10479", CAPA + "4134"),
        written_since_gitops_apply,
    ),
]
