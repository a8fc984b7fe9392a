"""The remedies that are this tool's own writes: one record per remedy, each naming its command
and taking the command's arguments from a finding and its pool, or saying why it has none for
this one. `fix` plans them and carries each out through its command; `explain` shows them.

A remedy proposes only what its command can do for the pool: a kind whose single instances
cannot be replaced gets no restart or deletion, a pause someone else set gets no resume, and an
instance whose cause is not read yet is not deleted."""

from __future__ import annotations

from kubectl_machinepool.base.fields import dig, mapping
from kubectl_machinepool.base.kubeversion import shown, version
from kubectl_machinepool.diagnostics.core import Context, Finding, Proposal, Remedy, Severity
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.listing import targets_off
from kubectl_machinepool.model.pauserecord import RECORD, recorded
from kubectl_machinepool.model.pool import PAUSED_ANNOTATION
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.revisions import VERSION, read_history
from kubectl_machinepool.model.rollout import OLD, PoolRollout, pool_rollout
from kubectl_machinepool.model.versionskew import control_plane, minor, release_minor
from kubectl_machinepool.providers.capabilities import DELETE, RESTART, Answer, capabilities
from kubectl_machinepool.providers.registry import infra_pool_of


def rollout_of(pool: PoolDescription, ctx: Context) -> PoolRollout:
    """The pool's rollout as the rules judge it (the rollout window of the thresholds)."""
    return pool_rollout(
        pool, ctx.snapshot, ctx.now, ctx.thresholds.rollout, nodes_read=ctx.nodes is not None
    )


def _unable(pool: PoolDescription, operation: str) -> str | None:
    """Why the pool's kind cannot do the operation (providers/capabilities.py), or None."""
    provider = infra_pool_of(pool.infra)
    if provider is None:
        kind = pool.infra.kind if pool.infra else "the infra pool"
        return f"{kind} is not in this tool's provider registry (kubectl machinepool providers)"
    found = next(c for c in capabilities(provider) if c.operation == operation)
    if found.answer is Answer.YES or (found.answer is Answer.GATED and pool.uses_machines):
        return None
    return f"{provider.kind}: {found.reason}"


def _resume(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    mp = pool.pool
    ours = recorded(ctx.raw_pool(pool))
    if not ours:
        return (
            f"no {RECORD} record on the pool: `rollout pause` did not set this pause "
            f"({pool.paused_by}), and it is lifted where it was set"
        )
    others = ["Cluster spec.paused"] if ctx.cluster.paused else []
    if mp.paused and f"MachinePool/{mp.name}" not in ours:
        others.append(f"MachinePool/{mp.name}")
    infra = mp.infrastructure_ref
    raw_infra = ctx.raw(infra.api_group, infra.kind, mp.namespace, infra.name) if infra else None
    annotations = mapping(dig(raw_infra, "metadata", "annotations"))
    if infra and PAUSED_ANNOTATION in annotations and f"{infra.kind}/{infra.name}" not in ours:
        others.append(f"{infra.kind}/{infra.name}")
    if others:
        return f"paused by someone else too ({', '.join(others)}): resume would not unpause it"
    rollout = rollout_of(pool, ctx)
    held = "" if rollout.done else f"; its rollout goes on: {'; '.join(rollout.waiting_for)}"
    return Proposal(
        mp.name,
        (),
        f"`rollout pause` paused {', '.join(ours)} and nothing resumed it: {finding.message}{held}",
        f"removes {PAUSED_ANNOTATION} from {', '.join(ours)}, then the {RECORD} record",
        disruptive=not rollout.done,
        rolls=not rollout.done,
    )


def _pair(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    mp, infra = pool.pool, pool.infra
    asked = [
        t
        for t in targets_off(mp.version, pool.version_targets)
        if not t.field.startswith("status.")
    ]
    if not asked or mp.version is None or infra is None:
        return "only what the provider reports differs: it follows on the provider's next update"
    found = version(mp.version)
    if found is None or not found.plain or not mp.version.startswith("v"):
        return f"the pool's version {shown(mp.version)} is no release upgrade takes (vX.Y.Z)"
    if any(t.kind != infra.kind for t in asked):
        return (
            f"{asked[0].kind} runs {asked[0].value}, which the cloud chose: set the MachinePool's "
            "version to it by hand, as diagnose says"
        )
    fields = ", ".join(dict.fromkeys(t.field for t in asked))
    if any(t.deployed for t in asked):
        return f"{infra.kind} deploys {fields} itself: choose the release, then upgrade --set it"
    return Proposal(
        mp.name,
        (("--version", mp.version),),
        finding.message,
        f"{infra.kind} {infra.name} {fields} for {mp.version} (paused meanwhile, so that the "
        "provider rolls once, to the pair)",
        disruptive=True,
        rolls=True,
    )


def _delete_holder(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    new = [i for i in rollout_of(pool, ctx).holding if i.state != OLD]
    if not new:
        return "the instances that hold it are old ones: they wait for new ones the provider makes"
    holder = new[0]
    if not holder.problems:
        return f"why {holder.name} holds the rollout is not read yet: its Machine says nothing"
    if unable := _unable(pool, DELETE):
        return unable
    instance = next(i for i in pool.instances if i.sort_name == holder.name)
    if instance.machine is None:
        return f"{holder.name} has no Machine: delete-machine takes a Machine"
    machine = instance.machine.object.name
    return Proposal(
        machine,
        (("--pool", pool.pool.name),),
        f"{holder.name} holds the rollout ({', '.join(holder.problems)}): replace it once "
        "that cause is fixed",
        f"deletes Machine {machine}: its Node drained, the provider replaces the instance",
        disruptive=True,
        rolls=False,
    )


def _restart(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    if finding.severity is Severity.INFO:
        return "the provider says it is still rolling the pool: its rollout goes on"
    if unable := _unable(pool, RESTART):
        return unable
    return Proposal(
        pool.pool.name,
        (),
        finding.message,
        f"records {STARTED} on the MachinePool and deletes each Machine made before it, one at "
        "a time (its Node drained, the provider replacing it), then removes the record",
        disruptive=True,
        rolls=True,
    )


def _undo_upgrade(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    mp = pool.pool
    plane = control_plane(ctx.snapshot, mp.namespace, mp.cluster)
    wanted, cap = minor(mp.desired_version), release_minor(plane.current if plane else None)
    if plane is None or wanted is None or cap is None or wanted <= cap:
        return "the pool is not newer than its control plane: going back is no remedy for this"
    history = read_history(ctx.raw_pool(pool))
    last = history.last
    if history.unusable or last is None:
        return f"no revision of this tool to go back to ({history.unusable or 'none recorded'})"
    version = next((c for c in last.changes if c.on_pool and c.path == VERSION), None)
    before = release_minor(str(version.before)) if version and version.before else None
    if version is None or version.after != mp.desired_version or before is None or before > cap:
        return (
            f"the last revision ({last.number}: {last.cause}) did not move the pool from a "
            "version the control plane runs to this one"
        )
    kept = [r.number for r in history.revisions]
    options = (("--to-revision", str(kept[-2])),) if len(kept) > 1 else ()
    changed = "; ".join(f"{c.where}: {c.after} -> {c.before}" for c in last.changes)
    return Proposal(
        mp.name,
        options,
        f"{finding.message}; revision {last.number} ({last.cause}) moved it from {version.before}",
        f"puts back what revision {last.number} changed ({changed}), recorded as a revision",
        disruptive=True,
        rolls=True,
    )


def _into_bounds(finding: Finding, pool: PoolDescription, ctx: Context) -> Proposal | str:
    mp = pool.pool
    bounds = mp.autoscaler
    if mp.desired is None or not bounds.node_group:
        return "the pool's size or bounds are not known"
    to = bounds.minimum if mp.desired < bounds.minimum else bounds.maximum
    return Proposal(
        mp.name,
        (("--replicas", str(to)), ("--current-replicas", str(mp.desired))),
        f"{finding.message}: cluster-autoscaler does not act on a node group outside its bounds",
        f"spec.replicas from {mp.desired} to {to} through /scale, if it is still {mp.desired}",
        disruptive=to < mp.desired,
        rolls=False,
    )


RESUME = Remedy(
    "rollout resume",
    "kubectl machinepool rollout resume POOL -n NAMESPACE: lifts a pause `rollout pause` "
    f"recorded ({RECORD}) that nothing else holds; a pause someone else set is outside this tool",
    _resume,
)
PAIR = Remedy(
    "upgrade",
    "kubectl machinepool upgrade POOL -n NAMESPACE --version VERSION, VERSION the pool's "
    "spec.template.spec.version: the infra pool's version and image fields derived from it, "
    "written in one step the provider rolls once",
    _pair,
)
DELETE_HOLDER = Remedy(
    "delete-machine",
    "kubectl machinepool delete-machine MACHINE -n NAMESPACE --pool POOL, MACHINE the first new "
    "instance that holds the rollout, once the cause its Machine names is read",
    _delete_holder,
)
RESTART_POOL = Remedy(
    "rollout restart",
    "kubectl machinepool rollout restart POOL -n NAMESPACE, where the provider replaces single "
    "instances: every instance replaced, one at a time",
    _restart,
)
INTO_BOUNDS = Remedy(
    "scale",
    "kubectl machinepool scale POOL -n NAMESPACE --replicas N --current-replicas NOW, N the bound "
    "nearest to spec.replicas (NOW)",
    _into_bounds,
)
UNDO_UPGRADE = Remedy(
    "rollout undo",
    "kubectl machinepool rollout undo POOL -n NAMESPACE [--to-revision N], when the pool is newer "
    "than its control plane and its last revision moved it there from a version the control plane "
    "runs: N the revision before it (none when it is the only one kept)",
    _undo_upgrade,
)
