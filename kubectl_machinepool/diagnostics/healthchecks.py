"""Rules about MachineHealthChecks and MachinePool Machines (R26).

What Cluster API does with a MachinePool Machine a MachineHealthCheck finds unhealthy, read in
kubernetes-sigs/cluster-api at the tags v1.6.8, v1.7.9, v1.8.12, v1.9.11, v1.10.10, v1.11.11,
v1.12.11, v1.13.5 and v1.14.0, the release-1.9 to release-1.14 branches (2026-08-20), main
(ae7ff047db, 2026-08-21) and the v1.14.2 module; the live tests run the v1.14.2 and v1.10.10
managers and see the same:

- The MachineHealthCheck controller (internal/controllers/machinehealthcheck up to v1.13,
  core/reconcilers/machinehealthcheck from v1.14) selects them like any Machine
  (getMachinesFromMHC: spec.selector plus the cluster-name label), sets HealthCheckSucceeded
  False on an unhealthy one and, without a remediation template, OwnerRemediated False
  (WaitingForRemediation): remediation is the owner's. It deletes no Machine itself; its only
  Delete is of an external remediation request. With a template it creates such a request,
  and what happens next is that provider's business.
- The MachinePool controller (exp/internal/controllers up to v1.11,
  internal/controllers/machinepool in v1.12 and v1.13, core/reconcilers/machinepool from v1.14)
  reads neither condition and deletes no Machine (only its bootstrap config and infra pool when
  it is deleted, and the Nodes of retired providerIDs). No provider remediates them either
  (CAPA, CAPZ and CAPG read neither condition).
- So no release up to v1.14 replaces them: the Machine stays, OwnerRemediated False. PR #11392
  (open; its head 9ffd918536 is in no tag) makes the MachinePool controller delete such Machines
  so that the provider replaces the instance. The book says as much: only Machines owned by a
  MachineSet or a KubeadmControlPlane are remediated
  (docs/book/src/tasks/automated-machine-management/healthchecking.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from kubectl_machinepool.base.humanize import human_duration
from kubectl_machinepool.diagnostics.core import (
    CAPI,
    CapiVersion,
    Context,
    Finding,
    Rule,
    Severity,
    names,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.healthchecks import Marked, PoolHealthCheck

# The first release not read: every one before it leaves MachinePool Machines unremediated.
NOT_CHECKED = (1, 15, 0)


def owner_remediated(pool: PoolDescription) -> frozenset[str]:
    """The pool's Machines a health check (without a remediation template) leaves to the owner:
    MP2601 speaks of them with the check's evidence."""
    return frozenset(
        m.machine
        for found in pool.health_checks or ()
        if found.check.template is None
        for m in found.marked
    )


def _phrase(marked: Marked, ctx: Context) -> str:
    waiting = marked.owner_remediated if marked.waiting else None
    since = waiting.since if waiting else marked.since
    age = f" for {human_duration(ctx.now - since)}" if since else ""
    if waiting is None:
        return f"{marked.machine} unhealthy{age}"
    return (
        f"{marked.machine} {'unhealthy, ' if marked.unhealthy else ''}waiting for remediation{age}"
    )


def _waited_long(marked: Marked, ctx: Context) -> bool:
    """Marked for remediation longer than a deletion may take: a MachineSet's Machine would
    have been deleted and replaced by then."""
    cond = marked.owner_remediated
    since = cond.since if marked.waiting and cond else None
    return since is not None and ctx.now - since > ctx.thresholds.deleting


def _gap(capi: CapiVersion, stuck: int) -> str:
    """What the Cluster API version in use does about it, and so what follows."""
    them = "it" if stuck == 1 else "them"
    if capi.version is None:
        lead = "no Cluster API release up to v1.14 remediates MachinePool Machines"
        unless = f"unless this one is newer (its version is unknown: {capi.source})"
        if stuck:
            return f"{lead}: {unless}, nothing is going to replace {them}"
        return f"{lead}: {unless}, one it finds unhealthy is marked, never replaced"
    if capi.version >= NOT_CHECKED:
        return (
            f"Cluster API {capi} is newer than the releases read (up to v1.14, none of which "
            "remediates MachinePool Machines): whether it carries PR #11392, which does, is not "
            "known here"
        )
    lead = f"Cluster API {capi} does not remediate MachinePool Machines"
    if stuck:
        return f"{lead}: nothing is going to replace {them}"
    return f"{lead}: one it finds unhealthy is marked, never replaced"


def _finding(rule: Rule, pool: PoolDescription, found: PoolHealthCheck, ctx: Context) -> Finding:
    check, capi = found.check, ctx.capi
    total = pool.counts.machines or len(found.machines)
    lead = f"MachineHealthCheck {check.name} selects {len(found.machines)} of {total} Machines"
    stuck = [m for m in found.marked if not m.deleting]
    if not stuck:
        message = f"{lead}, but {_gap(capi, 0)}"
        return rule.finding(pool, pool_subject(pool), message, severity=Severity.INFO)
    evidence = names([_phrase(m, ctx) for m in stuck], 3)
    message = f"{lead} and marks {evidence}; {_gap(capi, len(stuck))}"
    allowed = check.remediation_allowed
    if allowed is not None and allowed.status == "False":
        held = allowed.reason or "RemediationAllowed False"
        message += f" (the check also holds remediation back: {held})"
    known = capi.version is not None and capi.version < NOT_CHECKED
    waited = known and any(_waited_long(m, ctx) for m in stuck)
    return rule.finding(
        pool,
        pool_subject(pool),
        message,
        severity=Severity.ERROR if waited else Severity.WARNING,
        instances=tuple(m.machine for m in stuck),
    )


def unremediated_health_checks(
    rule: Rule, pool: PoolDescription, ctx: Context
) -> Iterator[Finding]:
    if not pool.uses_machines:
        return
    for found in pool.health_checks or ():
        # A template hands remediation to another provider; no Machine selected, no promise.
        if found.check.template is None and found.machines:
            yield _finding(rule, pool, found, ctx)


RULES = [
    Rule(
        "MP2601",
        "R26",
        "Health-checked MachinePool Machines nobody remediates",
        Severity.WARNING,
        "a MachineHealthCheck without a remediation template selects the pool's MachinePool "
        "Machines (spec.selector plus the cluster-name label): info while none is marked; a "
        "warning while one is unhealthy (HealthCheckSucceeded False) or waits for remediation "
        "(OwnerRemediated False); an error once one has waited longer than --deleting-grace. "
        "Read in Cluster API v1.6 to v1.14 and main (2026-08): the MachineHealthCheck controller "
        "leaves remediation to the owner, and the MachinePool controller never acts on it; for "
        "a newer or unknown version the finding says so and stays a warning at most",
        "The MachineHealthCheck promises self-healing it cannot deliver for MachinePool Machines: "
        "an unhealthy instance keeps its Machine and Node and nothing replaces it.",
        "Delete the unhealthy Machines yourself where single-Machine deletion is supported "
        "(kubectl machinepool delete-machine NAME; describe gives the verdict), or use a "
        "remediation template whose controller handles MachinePool Machines.",
        (CAPI + "11392", CAPI + "13065"),
        unremediated_health_checks,
    ),
]
