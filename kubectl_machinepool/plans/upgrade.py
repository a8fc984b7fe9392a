"""upgrade's plan: the MachinePool's version and every version or image field of its infra pool,
changed in one step so the provider rolls once (kubernetes-sigs/cluster-api#7248, CAPZ#5546).

The writes pause the infra pool (cluster.x-k8s.io/paused, unless it already was), set the
MachinePool's version, set the infra pool's fields, and unpause: the provider reconciles once,
against both (CAPA#5797's recipe). Each field's new value comes from --set, else from the
version as its provider's record says (providers/upgrades.py); a field whose value cannot be
derived is a refusal naming it. Pure: a pool, its objects and the request in, a plan out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.pool import PAUSED_ANNOTATION
from kubectl_machinepool.model.revisions import MACHINE_POOL, VERSION, Change
from kubectl_machinepool.model.rollout import pool_rollout
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, nodes_unread, permission_checks, refused
from kubectl_machinepool.plans.fieldpaths import merge_patch, values_at
from kubectl_machinepool.plans.recording import record_revision
from kubectl_machinepool.plans.upgradechecks import preflight, semver
from kubectl_machinepool.plans.writes import Access, ObjectRef, Write, object_ref
from kubectl_machinepool.providers.registry import infra_pool
from kubectl_machinepool.providers.upgrades import Upgrade, UpgradeField
from kubectl_machinepool.providers.upgrades import settable as settable_paths

# How long a rollout may go without moving before it counts as stuck (rollout status's default).
ROLLOUT_WINDOW = timedelta(minutes=10)


@record
class UpgradeRequest:
    version: str
    # --set PATH=VALUE of the infra pool, in order; an empty value clears the field.
    sets: tuple[tuple[str, str], ...] = ()
    # --force: go ahead although the pool is paused, deleting or still rolling.
    force: bool = False


@record
class FieldChange:
    """One field the upgrade writes: where, from what, to what (None: cleared), and why."""

    obj: str
    path: str
    current: Any
    new: Any
    how: str


@record
class FieldPlan:
    """What the infra pool's fields do: changes, fields left to the provider, refusals."""

    changes: tuple[FieldChange, ...]
    # Fields left unset: the provider derives them from the MachinePool's version.
    follows: tuple[str, ...]
    refusals: tuple[str, ...]


def settable(pool: PoolDescription) -> tuple[str, ...]:
    """The paths --set may name for this pool's infra pool kind."""
    ref = pool.pool.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    return settable_paths(provider.upgrade) if provider else ()


def field_plan(
    pool: PoolDescription, infra: RawObject | None, request: UpgradeRequest
) -> FieldPlan:
    """The infra pool's version and image fields for the requested version."""
    ref = pool.pool.infrastructure_ref
    provider = infra_pool(ref.api_group, ref.kind) if ref else None
    if ref is None or provider is None or infra is None:
        return FieldPlan((), (), ())
    obj = f"{ref.kind} {pool.pool.namespace}/{ref.name}"
    upgrade, sets = provider.upgrade, dict(request.sets)
    if upgrade.unsupported:
        return FieldPlan(
            (), (), (f"{obj} cannot be upgraded through Cluster API: {upgrade.unsupported}",)
        )
    if refusal := _sets_refused(obj, upgrade, sets):
        return FieldPlan((), (), (refusal,))
    changes: list[FieldChange] = []
    follows: list[str] = []
    refusals: list[str] = []
    cleared = [
        path for path, value in sets.items() if value == "" and path not in _own(upgrade.fields)
    ]
    for path in cleared:
        current = values_at(infra, path)
        if current:
            changes.append(
                FieldChange(
                    obj,
                    path,
                    current[0],
                    None,
                    "cleared with --set: the provider derives it from the version",
                )
            )
    if upgrade.deployed is not None:
        field = upgrade.deployed
        current = values_at(infra, field.path)
        given = sets.get(field.path)
        if given:
            changes.append(
                FieldChange(
                    obj, field.path, current[0] if current else None, given, "given with --set"
                )
            )
        else:
            shown = json.dumps(current[0], ensure_ascii=False) if current else ""
            now = f"{field.path}={shown}" if current else f"{field.path} (unset)"
            refusals.append(
                f"{obj} runs the release its {now} names, not the MachinePool's version: give "
                f"the new one with --set {field.path}=VALUE"
            )
    for field in upgrade.fields:
        if any(field.path.startswith(c + ".") or field.path == c for c in cleared):
            continue
        change, note, refusal = _field(obj, infra, field, request.version, sets)
        changes += [change] if change else []
        follows += [note] if note else []
        refusals += [refusal] if refusal else []
    return FieldPlan(tuple(changes), tuple(dict.fromkeys(follows)), tuple(refusals))


def _own(fields: tuple[UpgradeField, ...]) -> set[str]:
    return {f.path for f in fields}


def _sets_refused(obj: str, upgrade: Upgrade, sets: dict[str, str]) -> str | None:
    """The first --set this kind does not take (plans/upgradesets.py judged the rest): a path
    that is not its own (misspelt, it would leave the field it meant to its derived value,
    unsaid), an empty value where clearing derives nothing, a value where only clearing does."""
    paths = settable_paths(upgrade)
    which = f"it writes {', '.join(paths)}" if paths else "it writes none of its fields"
    valued = {f.path for f in (*upgrade.fields, upgrade.deployed) if f is not None}
    cleared = {f.clear for f in upgrade.fields if f.clear}
    for path, value in sets.items():
        if path not in paths:
            return f"--set {path} is no field upgrade writes on {obj}: {which}"
        if not value and path not in cleared:
            return (
                f"--set {path}= would clear a field {obj}'s provider does not derive from the "
                f"version: give its new value with --set {path}=VALUE"
            )
        if value and path not in valued:
            return (
                f"--set {path} takes only an empty value on {obj}: cleared, the provider "
                f"derives it from the version (--set {path}=)"
            )
    return None


def _field(
    obj: str, infra: RawObject, field: UpgradeField, version: str, sets: dict[str, str]
) -> tuple[FieldChange | None, str | None, str | None]:
    current = values_at(infra, field.path)
    given = sets.get(field.path)
    if given is not None:
        new = given or None
        how = "given with --set" if new is not None else "cleared with --set"
        return FieldChange(obj, field.path, current[0] if current else None, new, how), None, None
    if not current:
        note = f"{field.clear} unset: the provider derives it from the MachinePool's version"
        return None, note if field.clear else None, None
    parent = mapping(dig(infra, *field.path.replace("[]", "").split(".")[:-1]))
    derived = field.derive.value(version, str(current[0]), parent) if field.derive else None
    if derived is not None and field.derive is not None:
        if all(c == derived for c in current):
            return None, None, None
        return FieldChange(obj, field.path, current[0], derived, field.derive.how), None, None
    way_out = f", or --set {field.clear}= to let the provider derive it" if field.clear else ""
    return (
        None,
        None,
        (
            f"{obj} {field.path}={current[0]!r} is not derived from a release here: give the one "
            f"for {version} with --set {field.path}=VALUE{way_out}"
        ),
    )


def upgrade_writes(
    pool: PoolDescription,
    version: str,
    fields: tuple[FieldChange, ...],
    *,
    pool_raw: RawObject,
    infra_raw: RawObject | None,
    plural: str,
) -> tuple[Write, ...]:
    """Pause the infra pool (unless it is), the MachinePool's version, the infra fields, unpause.
    Without infra fields, the version alone: one write is one roll already."""
    mp = object_ref(pool_raw, "machinepools")
    current = pool.pool.version
    # Already at the version (the image lagging behind it, MP1301): the fields alone.
    writes = [] if current == version else [_version_write(mp, current, version)]
    if not fields or infra_raw is None:
        return tuple(writes)
    infra = object_ref(infra_raw, plural)
    body: dict[str, Any] = {}
    undo: dict[str, Any] = {}
    for change in fields:
        merge_patch(body, infra_raw, change.path, change.new)
        merge_patch(undo, infra_raw, change.path, _old(infra_raw, change.path))
    shown = ", ".join(f"{c.path}={_shown(c.new)}" for c in fields)
    writes.append(
        Write(
            "patch",
            infra,
            f"set {shown} on {infra.display}",
            body,
            undo=undo,
            undo_summary="set them back",
            done="patched",
        )
    )
    if PAUSED_ANNOTATION in mapping(dig(infra_raw, "metadata", "annotations")):
        return tuple(writes)  # paused by someone else: left as it is
    return (_pause(infra), *writes, _unpause(infra))


def upgrade_changes(
    pool: PoolDescription, version: str, fields: tuple[FieldChange, ...]
) -> tuple[Change, ...]:
    """What upgrade_writes changes, as its revision records it."""
    mp, ref = pool.pool, pool.pool.infrastructure_ref
    found = []
    if mp.version != version:
        found.append(Change(MACHINE_POOL, CAPI_GROUP, mp.name, VERSION, mp.version, version))
    if ref is not None:
        found += [
            Change(ref.kind, ref.api_group, ref.name, c.path, c.current, c.new) for c in fields
        ]
    return tuple(found)


def _version_write(mp: ObjectRef, current: str | None, version: str) -> Write:
    return Write(
        "patch",
        mp,
        f"set spec.template.spec.version={version} on {mp.display}",
        {"spec": {"template": {"spec": {"version": version}}}},
        undo={"spec": {"template": {"spec": {"version": current}}}},
        undo_summary=f"set spec.template.spec.version back to {current}",
        done="patched",
    )


def _old(infra: RawObject, path: str) -> Any:
    found = values_at(infra, path)
    return found[0] if found else None


def _shown(value: Any) -> str:
    return "(cleared)" if value is None else str(value)


def _pause(infra: ObjectRef) -> Write:
    return Write(
        "patch",
        infra,
        f"annotate {infra.display} {PAUSED_ANNOTATION}: the provider waits for both changes",
        {"metadata": {"annotations": {PAUSED_ANNOTATION: ""}}},
        undo={"metadata": {"annotations": {PAUSED_ANNOTATION: None}}},
        undo_summary=f"removed the {PAUSED_ANNOTATION} annotation again",
        done="annotated",
    )


def _unpause(infra: ObjectRef) -> Write:
    return Write(
        "patch",
        infra,
        f"remove {PAUSED_ANNOTATION} from {infra.display}: the provider rolls once, to both",
        {"metadata": {"annotations": {PAUSED_ANNOTATION: None}}},
        done="annotated",
    )


@record
class UpgradePlan:
    pool: PoolDescription
    target: str
    fields: FieldPlan
    checks: tuple[Check, ...]
    writes: tuple[Write, ...]
    # The objects as the plan read them, for the write engine's preconditions.
    planned: tuple[RawObject, ...]

    @property
    def refusals(self) -> tuple[str, ...]:
        return (*refused(self.checks), *self.fields.refusals)

    @property
    def nothing_to_do(self) -> bool:
        """The pool already asks for this version and every field is as it should be."""
        same = semver(self.pool.pool.version) == semver(self.target)
        return same and not self.fields.changes and not self.fields.refusals


def plan_upgrade(
    pool: PoolDescription,
    snapshot: Snapshot,
    request: UpgradeRequest,
    now: datetime,
    *,
    plural: str,
    permissions: Callable[[tuple[Write, ...]], dict[Access, bool | None]],
) -> UpgradePlan:
    """Every check, in the order the user reads them, and the writes they guard."""
    mp, ref = pool.pool, pool.pool.infrastructure_ref
    pool_raw = snapshot.find(CAPI_GROUP, "MachinePool", mp.namespace, mp.name) or {}
    infra_raw = snapshot.find(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    fields = field_plan(pool, infra_raw, request)
    writes = upgrade_writes(
        pool, request.version, fields.changes, pool_raw=pool_raw, infra_raw=infra_raw, plural=plural
    )
    writes, recorded = record_revision(
        writes,
        pool_raw,
        cause=" ".join(
            ["upgrade --version", request.version, *(f"--set {p}={v}" for p, v in request.sets)]
        ),
        at=now,
        changes=upgrade_changes(pool, request.version, fields.changes),
    )
    nodes_read = nodes_unread(snapshot, mp.namespace, mp.cluster) is None
    rollout = pool_rollout(pool, snapshot, now, ROLLOUT_WINDOW, nodes_read)
    checks = [*preflight(pool, snapshot, rollout, request.version, request.force), *recorded]
    checks += permission_checks(writes, permissions(writes))
    planned = tuple(r for r in (pool_raw, infra_raw) if r)
    return UpgradePlan(pool, request.version, fields, tuple(checks), writes, planned)
