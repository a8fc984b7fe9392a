"""What a GitOps owner object says its controller does with a change to what it applies: revert
it, leave it (and until when), or unknown, when the object could not be read or does not hold
what its controller reads. Never "no owner": a pool's signals named it (model/ownership.py).

Each fact is the controller's own code, at the versions docs/ownership.md names:

- Argo CD (controller/appcontroller.go autoSync): nothing syncs an Application annotated
  argocd.argoproj.io/skip-reconcile=true; auto-sync runs when spec.syncPolicy.automated is set
  and its `enabled` is not false; for a change in the cluster alone (no new commit) it syncs
  again only with selfHeal true. Without self-heal the Application shows OutOfSync and the next
  sync (manual, or for a new commit) applies git's value again.
- Flux kustomize-controller: a suspended Kustomization is not reconciled; otherwise every
  spec.interval it server-side applies what drifted, forcing ownership (fluxcd/pkg/ssa). An
  object it is told to skip (reconcile=disabled, ssa=Ignore or IfNotPresent) is no GitOps
  applier at all (model/ownership.py).
- Flux helm-controller: a suspended HelmRelease is not reconciled; drift is corrected only with
  spec.driftDetection.mode enabled (warn only reports it), and never for an object labelled or
  annotated helm.toolkit.fluxcd.io/driftDetection=disabled.

A field the owner's ignore rules cover (plans/ownerignores.py) is not reverted.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from kubectl_machinepool.base.fields import (
    RawObject,
    dig,
    items,
    mapping,
    string_map,
    strings,
    text,
)
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.ownership import OwnerRef, bounded
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.plans.ownerignores import argo_ignored, flux_ignored

# Where Argo CD's install manifests put it: an Application a tracking value names without a
# namespace is in Argo CD's own namespace (util/argo ParseInstanceName), this one by default.
ARGO_CD_NAMESPACE = "argocd"
SKIP_RECONCILE = "argocd.argoproj.io/skip-reconcile"
HELM_DRIFT = "helm.toolkit.fluxcd.io/driftDetection"
# strconv.ParseBool's true, which Argo CD reads skip-reconcile with.
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})


class Revert(Enum):
    YES = "will revert"
    NO = "will not revert"
    UNKNOWN = "unknown owner state"


@record
class OwnerState:
    revert: Revert
    # What the controller does with the write, as a clause: "a self-heal sync reverts it".
    says: str
    # The one command that stops the controller applying it.
    suspend: str


class _Malformed(Exception):
    """A field the controller reads holds what it would not accept."""


def located(ref: OwnerRef) -> OwnerRef:
    """The object to read: an Application named without a namespace is in Argo CD's own."""
    if ref.kind == "Application" and not ref.namespace:
        return OwnerRef(ref.group, ref.version, ref.plural, ARGO_CD_NAMESPACE, ref.name, ref.kind)
    return ref


def shown(ref: OwnerRef) -> str:
    return f"{ref.kind} {ref.namespace}/{ref.name}"


def suspend_command(ref: OwnerRef) -> str:
    """The one command that stops the owner applying: its CLI's own (argocd, flux)."""
    if ref.kind == "Application":
        return f"argocd app set {ref.namespace}/{ref.name} --sync-policy manual"
    return f"flux suspend {ref.kind.lower()} {ref.name} -n {ref.namespace}"


def owner_state(
    ref: OwnerRef, snapshot: Snapshot, written: RawObject, path: tuple[str, ...]
) -> OwnerState:
    """What the owner does with a write of the field at path of `written`, from its object as
    read (or why not)."""
    ref = located(ref)
    if not ref.namespace:
        return OwnerState(
            Revert.UNKNOWN,
            f"{ref.kind} {ref.name} names no namespace, so it cannot be read",
            f"flux suspend {ref.kind.lower()} {ref.name} -n NAMESPACE",
        )
    command = suspend_command(ref)
    found = snapshot.find(ref.group, ref.kind, ref.namespace, ref.name)
    if found is None:
        why = snapshot.why_unread(ref.group, ref.kind, ref.namespace, ref.name)
        said = f"could not be read: {why}" if why else "was not read"
        if why is None and snapshot.offline:
            said = "is not in the dump"
        return OwnerState(Revert.UNKNOWN, f"{shown(ref)} {said}", command)
    judge = {"Application": _argo, "Kustomization": _kustomization, "HelmRelease": _release}
    try:
        revert, says = judge[ref.kind](found, written, path)
    except _Malformed as err:
        return OwnerState(Revert.UNKNOWN, f"{shown(ref)} is malformed ({err})", command)
    return OwnerState(revert, says, command)


def _field(obj: Any, *path: str, kinds: tuple[type, ...]) -> Any:
    """The value at path, None when absent or null, or _Malformed when of another type."""
    value = dig(obj, *path)
    if value is None or isinstance(value, kinds):
        return value
    shown_value = bounded(repr(value))
    raise _Malformed(f"{'.'.join(path)} is {shown_value}, not {kinds[0].__name__}")


def _argo(app: RawObject, written: RawObject, path: tuple[str, ...]) -> tuple[Revert, str]:
    skip = string_map(dig(app, "metadata", "annotations")).get(SKIP_RECONCILE)
    if skip in _GO_TRUE:
        return Revert.NO, (
            f"Argo CD skips this Application ({SKIP_RECONCILE}={skip}): nothing syncs it while "
            "the annotation stays"
        )
    _field(app, "spec", "syncPolicy", kinds=(dict,))
    automated = _field(app, "spec", "syncPolicy", "automated", kinds=(dict,))
    enabled = _field(automated, "enabled", kinds=(bool,))
    heal = _field(automated, "selfHeal", kinds=(bool,))
    appset = _appset(app)
    if ignored := argo_ignored(app, written, path):
        options = strings(dig(app, "spec", "syncPolicy", "syncOptions"))
        if "RespectIgnoreDifferences=true" in options:
            return Revert.NO, (
                f"Argo CD ignores differences in it ({ignored}) and keeps the live value when it "
                "syncs (RespectIgnoreDifferences=true)"
            )
        return Revert.NO, (
            f"Argo CD ignores differences in it ({ignored}): self-heal leaves the write, but the "
            f"next sync applies git's value again (no RespectIgnoreDifferences=true){appset}"
        )
    if automated is None or enabled is False:
        why = "no spec.syncPolicy.automated" if automated is None else "automated.enabled false"
        return Revert.NO, (
            f"auto-sync is off ({why}): Argo CD shows the pool OutOfSync, and the next manual "
            f"sync applies git's value again{appset}"
        )
    if not heal:
        return Revert.NO, (
            "auto-sync without self-heal: Argo CD shows the pool OutOfSync and syncs again only "
            f"for a new commit or source change, which applies git's value again{appset}"
        )
    return Revert.YES, f"a self-heal sync reverts this write within seconds{appset}"


def _appset(app: RawObject) -> str:
    """An ApplicationSet writes its Applications back: their sync policy is changed there."""
    for owner in items(dig(app, "metadata", "ownerReferences")):
        if owner.get("kind") == "ApplicationSet":
            name = bounded(text(owner.get("name")) or "")
            return (
                f" (ApplicationSet {name} generates this Application and writes its sync policy "
                "back: change it in the ApplicationSet's template)"
            )
    return ""


def _marked(written: RawObject, key: str) -> str | None:
    """A label's or annotation's value on the written object, as fluxcd/pkg reads it."""
    meta = mapping(written.get("metadata"))
    for values in (string_map(meta.get("labels")), string_map(meta.get("annotations"))):
        if values.get(key):
            return values[key]
    return None


def _interval(owner: RawObject) -> str:
    every = _field(owner, "spec", "interval", kinds=(str,))
    return f"every {bounded(every)} (spec.interval)" if every else "at each reconcile"


def _suspended(owner: RawObject, what: str) -> tuple[Revert, str] | None:
    if _field(owner, "spec", "suspend", kinds=(bool,)):
        return Revert.NO, (
            f"suspended (spec.suspend true): {what} nothing until it is resumed, and then "
            "applies git's value again"
        )
    return None


def _kustomization(
    owner: RawObject, written: RawObject, path: tuple[str, ...]
) -> tuple[Revert, str]:
    suspended = _suspended(owner, "kustomize-controller applies")
    if suspended is not None:
        return suspended
    if ignored := flux_ignored(dig(owner, "spec", "ignore"), "spec.ignore", written, path):
        return Revert.NO, (
            f"kustomize-controller leaves it alone ({ignored}): it drops the field from what it "
            "applies, or takes the live value"
        )
    return Revert.YES, (
        f"kustomize-controller applies it again {_interval(owner)}, forcing ownership of its "
        "fields: that reverts this write"
    )


def _release(owner: RawObject, written: RawObject, path: tuple[str, ...]) -> tuple[Revert, str]:
    if (_marked(written, HELM_DRIFT) or "").lower() == "disabled":
        return Revert.NO, (
            f"helm-controller leaves the object's drift alone ({HELM_DRIFT}=disabled): the "
            "write stays until an upgrade of the release applies the chart's value"
        )
    suspended = _suspended(owner, "helm-controller upgrades")
    if suspended is not None:
        return suspended
    mode = _field(owner, "spec", "driftDetection", "mode", kinds=(str,)) or "disabled"
    rules = dig(owner, "spec", "driftDetection", "ignore")
    ignored = flux_ignored(rules, "spec.driftDetection.ignore", written, path)
    if mode == "enabled" and ignored:
        return Revert.NO, (
            f"helm-controller's drift detection ignores it ({ignored}): the write stays until "
            "an upgrade of the release applies the chart's value"
        )
    if mode == "enabled":
        return Revert.YES, (
            f"helm-controller corrects drift {_interval(owner)} (spec.driftDetection.mode "
            "enabled): that reverts this write"
        )
    if mode in ("warn", "disabled"):
        return Revert.NO, (
            f"helm-controller does not correct drift (spec.driftDetection.mode {mode}): the "
            "write stays until an upgrade of the release applies the chart's value"
        )
    raise _Malformed(f"spec.driftDetection.mode is {bounded(mode)!r}")
