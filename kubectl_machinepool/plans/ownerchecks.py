"""Who sees each field a write plan changes, one check per object written and applier: the
appliers from outside that apply those fields (model/ownership.py field_appliers), and what each
does with the change (plans/ownerstate.py).

A GitOps controller that will revert the write, or whose state is unknown, refuses the plan:
history belongs in git, and a write reverted a minute later starts a second rollout and ends
where it began. The hint: change it in git, or suspend the owner first (its one command);
--ignore-owner writes anyway and keeps the line as a warning. One that will not revert it now
(suspended, no auto-sync, no self-heal, drift left alone) is a warning saying when it would;
kubectl apply, Helm and other server-side appliers are warnings too, as they apply only when
someone runs them. The ClusterClass topology and cluster-autoscaler are left to the commands' own
checks (upgradechecks, scalechecks, pause, deletechecks), which read what those set. A delete
changes no field. A label or annotation counts only where an applier's managedFields or
last-applied copy hold it. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, mapping
from kubectl_machinepool.model.ownership import (
    ARGO_CD,
    AUTOSCALER,
    FLUX_HELMRELEASE,
    FLUX_KUSTOMIZATION,
    HELM,
    KUBECTL,
    REPLICAS,
    TOPOLOGY,
    Applier,
    field_appliers,
    last_applied,
    managed_entries,
)
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.checks import Check, Level
from kubectl_machinepool.plans.ownerstate import OwnerState, Revert, owner_state
from kubectl_machinepool.plans.writes import ObjectRef, Write

IGNORE_OWNER = "--ignore-owner"
# GitOps kinds an object opted out of (model/ownership.py then says it is no longer applied).
GITOPS_KINDS = (ARGO_CD, FLUX_KUSTOMIZATION, FLUX_HELMRELEASE)
Path = tuple[str, ...]


def written_fields(write: Write) -> list[Path]:
    """The fields a write changes: a merge patch's leaves (a list is one), a Scale's replicas."""
    if write.verb == "delete":
        return []
    if write.subresource == "scale":
        return [REPLICAS]
    if write.subresource:
        return []  # status: no applier writes it
    return list(_leaves(write.body or {}, ()))


def _leaves(body: dict[str, Any], prefix: Path) -> Iterator[Path]:
    for key, value in body.items():
        path = (*prefix, key)
        if path == ("metadata", "resourceVersion"):
            continue  # the precondition, not a change
        if isinstance(value, dict) and value:
            yield from _leaves(value, path)
        else:
            yield path


def dotted(path: Path) -> str:
    """spec.replicas; a key with dots or slashes (an annotation's) in brackets."""
    parts = [path[0]]
    parts += [f'["{key}"]' if "." in key or "/" in key else f".{key}" for key in path[1:]]
    return "".join(parts)


def owner_checks(
    writes: tuple[Write, ...], snapshot: Snapshot, *, ignore_owner: bool
) -> list[Check]:
    """One check per object written, applier from outside and what it does with the fields it
    applies there (an ignore rule may spare one field and not another)."""
    fields: dict[ObjectRef, list[Path]] = {}
    for write in writes:
        ref = _unversioned(write.target)
        fields.setdefault(ref, [])
        fields[ref] += [p for p in written_fields(write) if p not in fields[ref]]
    checks = []
    for ref, paths in fields.items():
        raw = snapshot.find(ref.group, ref.kind, ref.namespace, ref.name)
        if raw is None:
            continue  # every write's object is among what its plan read
        seen: dict[tuple[Applier, OwnerState | None], list[Path]] = {}
        for path in paths:
            for applier in field_appliers(raw, path):
                if applier.kind not in (TOPOLOGY, AUTOSCALER) and _applies(applier, raw, path):
                    state = _state(applier, snapshot, raw, path) if applier.gitops else None
                    seen.setdefault((applier, state), []).append(path)
        checks += [
            _check(ref, applier, state, found, ignore_owner=ignore_owner)
            for (applier, state), found in seen.items()
        ]
    return checks


def _applies(applier: Applier, raw: RawObject, path: Path) -> bool:
    """A label or annotation counts only where the applier's managedFields or last-applied copy
    hold it: field_appliers' guess for an object without them (a dump) would give every GitOps
    pool's owner the keys a pause or a restart record adds, which no manifest holds."""
    if path[:2] not in (("metadata", "annotations"), ("metadata", "labels")):
        return True
    if any(e.owns(path) for e in managed_entries(raw) if e.manager in applier.managers):
        return True
    copied = last_applied(raw) if applier.last_applied else None
    return len(path) == 3 and path[2] in mapping(dig(copied, *path[:2]))


def _unversioned(ref: ObjectRef) -> ObjectRef:
    """The object, whichever write of it: the resourceVersion moves on between them."""
    return ObjectRef(ref.group, "", ref.kind, "", ref.namespace, ref.name, ref.uid, "")


def _check(
    ref: ObjectRef,
    applier: Applier,
    state: OwnerState | None,
    paths: list[Path],
    *,
    ignore_owner: bool,
) -> Check:
    names = ", ".join(dotted(p) for p in paths)
    verb = "is" if len(paths) == 1 else "are"
    said = (
        f"{names} of {ref.kind} {ref.namespace}/{ref.name} {verb} applied by "
        f"{_words(applier)} ({applier.evidence}): "
    )
    if state is None:
        return Check(Level.WARNING, said + _applies_again(applier))
    if state.revert is Revert.NO:
        return Check(Level.WARNING, f"{said}{state.says}; change it in git too")
    first = f": {state.suspend}" if state.suspend else ""
    hint = f"change it in git, or suspend the owner first{first}"
    if state.revert is Revert.UNKNOWN:
        said += f"{Revert.UNKNOWN.value}: "
    if ignore_owner:
        return Check(
            Level.WARNING,
            f"{said}{state.says} ({IGNORE_OWNER}: writing anyway; {hint} to keep it)",
        )
    return Check(Level.REFUSED, f"{said}{state.says}; {hint} ({IGNORE_OWNER} writes anyway)")


def _words(applier: Applier) -> str:
    return f"{applier.kind} {applier.name}" if applier.name else applier.kind


def _state(applier: Applier, snapshot: Snapshot, raw: RawObject, path: Path) -> OwnerState:
    if applier.ref is None:
        # A GitOps manager in managedFields with no tracking label or annotation naming it.
        return OwnerState(Revert.UNKNOWN, f"no signal names which {applier.kind} it is", "")
    return owner_state(applier.ref, snapshot, raw, path)


def _applies_again(applier: Applier) -> str:
    """What an applier that applies only when run, or no longer applies, does with the write."""
    if applier.kind in GITOPS_KINDS:
        return "it no longer applies this object, so nothing reverts the write"
    if applier.kind == HELM:
        return "the next helm upgrade of the release applies the chart's value again"
    if applier.kind == KUBECTL:
        return "the next kubectl apply of its manifest applies the file's value again"
    return "its next apply sets its own value again"
