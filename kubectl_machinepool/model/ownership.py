"""Who applies a pool from outside, and which of its fields: GitOps controllers, Helm, kubectl
apply, the ClusterClass topology controller and cluster-autoscaler, from the object's own
signals (managedFields, tracking labels and annotations, the last-applied copy).

Each signal, the controller that writes it and whether that controller reverts a change are in
docs/ownership.md with the upstream source of each fact. Two decisions worth knowing here:

- `app.kubernetes.io/instance` is Argo CD's label tracking (its default before 3.0) but also the
  label every Helm chart and many kustomizations set. It counts as Argo CD only when nothing says
  Helm and no tracking-id is set, and then only when an Argo CD field manager is in managedFields
  or the object came without managedFields at all: an object whose managedFields name no Argo CD
  manager was never written by Argo CD.
- An object-level signal (a tracking label) owns the whole applied manifest, not every field. A
  field counts for it when its manager's managedFields own the field, or the last-applied copy it
  wrote holds it; with neither known for it (a dump without managedFields), conservatively yes.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, items, mapping, string_map, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.model.autoscaler import MAX_SIZE, MIN_SIZE, autoscaler_bounds

ARGO_CD = "Argo CD Application"
FLUX_KUSTOMIZATION = "Flux Kustomization"
FLUX_HELMRELEASE = "Flux HelmRelease"
HELM = "Helm release"
KUBECTL = "kubectl apply"
TOPOLOGY = "ClusterClass topology"
AUTOSCALER = "cluster-autoscaler"
# The field manager this tool's own writes carry: never an applier from outside.
OWN_MANAGER = "kubectl-machinepool"

TRACKING_ID = "argocd.argoproj.io/tracking-id"
INSTANCE_LABEL = "app.kubernetes.io/instance"
HELM_RELEASE_NAME = "meta.helm.sh/release-name"
HELM_RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
MANAGED_BY = "app.kubernetes.io/managed-by"
# The topology controller owns the pool: it writes the version from spec.topology.version.
TOPOLOGY_OWNED = "topology.cluster.x-k8s.io/owned"
TOPOLOGY_POOL = "topology.cluster.x-k8s.io/pool-name"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

ARGO_MANAGERS = ("argocd-controller", "argocd-application-controller")
KUBECTL_CSA = "kubectl-client-side-apply"
_KNOWN_MANAGERS: dict[str, str] = {
    **dict.fromkeys(ARGO_MANAGERS, ARGO_CD),
    "kustomize-controller": FLUX_KUSTOMIZATION,
    "helm-controller": FLUX_HELMRELEASE,
    "helm": HELM,
    "capi-topology": TOPOLOGY,
    KUBECTL_CSA: KUBECTL,
    AUTOSCALER: AUTOSCALER,
}
_GITOPS = frozenset({ARGO_CD, FLUX_KUSTOMIZATION, FLUX_HELMRELEASE, TOPOLOGY})
REPLICAS = ("spec", "replicas")
# Bounds on hostile input: managedFields entries looked at, characters of a name or value kept,
# and the size of a last-applied copy decoded (the API server caps all annotations at 256 KiB).
_ENTRIES = 256
_NAME = 253
_VALUE = 100
_LAST_APPLIED_CHARS = 1 << 20


@record
class OwnerRef:
    """An owner object one could read for its sync or suspend state. An Argo CD Application's
    namespace is "" when the tracking value leaves it out: Argo CD's own namespace then."""

    group: str
    version: str
    plural: str
    namespace: str
    name: str
    kind: str


@record
class Applier:
    """Who applies (some of) an object from outside, and the signal that says so."""

    kind: str
    name: str  # "" when the signals do not name it
    evidence: str  # one line: which label, annotation or manager, and its value
    gitops: bool  # re-applies from outside: a write to its fields is reverted or refused
    ref: OwnerRef | None
    # Its field managers: their managedFields entries tell which fields it applies.
    managers: tuple[str, ...] = ()
    # Whether the last-applied-configuration annotation is its copy of what it applied.
    last_applied: bool = False


@record
class ManagedEntry:
    """One managedFields entry: who wrote, how, when, and the fields it owns (fieldsV1)."""

    manager: str
    operation: str
    subresource: str
    time: datetime | None
    fields: dict[str, Any]

    def owns(self, path: tuple[str, ...]) -> bool:
        return isinstance(dig(self.fields, *(f"f:{key}" for key in path)), dict)


def bounded(value: str, limit: int = _VALUE) -> str:
    return value if len(value) <= limit else f"{value[:limit]}... ({len(value)} characters)"


def managed_entries(raw: RawObject) -> tuple[ManagedEntry, ...]:
    found = []
    for entry in items(dig(raw, "metadata", "managedFields"))[:_ENTRIES]:
        manager = text(entry.get("manager"))
        if manager is None:
            continue
        found.append(
            ManagedEntry(
                manager=bounded(manager, _NAME),
                operation=text(entry.get("operation")) or "",
                subresource=text(entry.get("subresource")) or "",
                time=parse_time(entry.get("time")),
                fields=mapping(entry.get("fieldsV1")),
            )
        )
    return tuple(found)


def last_applied(raw: RawObject) -> dict[str, Any] | None:
    """The object as kubectl (or Argo CD's client-side sync) last applied it, or None."""
    value = string_map(dig(raw, "metadata", "annotations")).get(LAST_APPLIED)
    if value is None or len(value) > _LAST_APPLIED_CHARS:
        return None
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return decoded if isinstance(decoded, dict) else None


def _has(obj: dict[str, Any] | None, path: tuple[str, ...]) -> bool:
    parent = dig(obj, *path[:-1])
    return isinstance(parent, dict) and path[-1] in parent


def _app_ref(instance: str) -> tuple[str, OwnerRef]:
    """An Argo CD instance name, `<app>` or `<namespace>_<app>` (apps in any namespace)."""
    namespace, split, name = instance.partition("_")
    namespace, name = (namespace, name) if split else ("", namespace)
    ref = OwnerRef("argoproj.io", "v1alpha1", "applications", namespace, name, "Application")
    return (f"{namespace}/{name}" if namespace else name), ref


def _signal(kind: str, key: str, value: str) -> str:
    return f"{kind} {key}={json.dumps(bounded(value), ensure_ascii=False)}"


def _entry_evidence(entries: list[ManagedEntry]) -> str:
    def one(entry: ManagedEntry) -> str:
        how = "/".join(p for p in (entry.operation, entry.subresource) if p)
        return f"{entry.manager} ({how})" if how else entry.manager

    return "managedFields manager " + ", ".join(dict.fromkeys(one(e) for e in entries))


def _argo(
    labels: dict[str, str], annotations: dict[str, str], entries: tuple[ManagedEntry, ...]
) -> Applier | None:
    argo_entries = [e for e in entries if e.manager in ARGO_MANAGERS]
    tracking = annotations.get(TRACKING_ID)
    name, ref, evidence = "", None, ""
    if tracking is not None:
        app = tracking.split(":", 1)[0]
        if app:
            name, ref = _app_ref(bounded(app, _NAME))
        evidence = _signal("annotation", TRACKING_ID, tracking)
    elif _argo_label(labels, annotations, bool(argo_entries or not entries)):
        name, ref = _app_ref(bounded(labels[INSTANCE_LABEL], _NAME))
        evidence = _signal("label", INSTANCE_LABEL, labels[INSTANCE_LABEL])
    if not evidence and not argo_entries:
        return None
    evidence = "; ".join(p for p in (evidence, argo_entries and _entry_evidence(argo_entries)) if p)
    return Applier(ARGO_CD, name, evidence, True, ref, ARGO_MANAGERS)


def _argo_label(labels: dict[str, str], annotations: dict[str, str], argo_wrote: bool) -> bool:
    """Whether app.kubernetes.io/instance is Argo CD's label tracking (see the module's doc)."""
    return INSTANCE_LABEL in labels and argo_wrote and not _helm_says(labels, annotations)


def _helm_says(labels: dict[str, str], annotations: dict[str, str]) -> bool:
    return HELM_RELEASE_NAME in annotations or labels.get(MANAGED_BY) == "Helm"


@record
class _Flux:
    """A Flux controller's origin labels on what it applies (fluxcd/pkg ssa SetOwnerLabels)."""

    kind: str
    group: str
    version: str
    plural: str
    owner_kind: str
    manager: str

    def applier(self, labels: dict[str, str], annotations: dict[str, str]) -> Applier | None:
        name = labels.get(f"{self.group}/name")
        if not name:
            return None
        namespace = bounded(labels.get(f"{self.group}/namespace", ""), _NAME)
        name = bounded(name, _NAME)
        ref = OwnerRef(self.group, self.version, self.plural, namespace, name, self.owner_kind)
        evidence = _signal("label", f"{self.group}/name", labels[f"{self.group}/name"])
        held = self._held(labels, annotations)
        evidence = f"{evidence}; {held}: no longer applied" if held else evidence
        return Applier(self.kind, f"{namespace}/{name}", evidence, not held, ref, (self.manager,))

    def _held(self, labels: dict[str, str], annotations: dict[str, str]) -> str | None:
        """The object's own opt-out of kustomize-controller's applies: reconcile disabled (a
        label or an annotation), or an ssa policy that applies only what is missing, or nothing."""
        if self.kind != FLUX_KUSTOMIZATION:
            return None
        for key, refused in (
            (f"{self.group}/reconcile", ("disabled",)),
            (f"{self.group}/ssa", ("Ignore", "IfNotPresent")),
        ):
            # fluxcd/pkg's ssa.AnyInMetadata: either place, compared with strings.EqualFold.
            for where, values in (("annotation", annotations), ("label", labels)):
                value = values.get(key)
                if value and value.casefold() in {r.casefold() for r in refused}:
                    return _signal(where, key, value)
        return None


_KUSTOMIZATION = _Flux(
    FLUX_KUSTOMIZATION,
    "kustomize.toolkit.fluxcd.io",
    "v1",
    "kustomizations",
    "Kustomization",
    "kustomize-controller",
)
_HELMRELEASE = _Flux(
    FLUX_HELMRELEASE,
    "helm.toolkit.fluxcd.io",
    "v2",
    "helmreleases",
    "HelmRelease",
    "helm-controller",
)


def _label_appliers(
    labels: dict[str, str], annotations: dict[str, str], entries: tuple[ManagedEntry, ...]
) -> list[Applier]:
    argo = _argo(labels, annotations, entries)
    release = _HELMRELEASE.applier(labels, annotations)
    kustomization = _KUSTOMIZATION.applier(labels, annotations)
    found = [a for a in (argo, kustomization, release) if a is not None]
    # helm-controller installs through Helm's library: its release's meta.helm.sh signals are
    # the same HelmRelease, and Argo CD renders charts with `helm template`, leaving a managed-by
    # label that names no release.
    helm = argo is None or HELM_RELEASE_NAME in annotations
    if release is None and helm and _helm_says(labels, annotations):
        name = annotations.get(HELM_RELEASE_NAME) or labels.get(INSTANCE_LABEL, "")
        namespace = annotations.get(HELM_RELEASE_NAMESPACE, "")
        shown = bounded(f"{namespace}/{name}" if namespace and name else name, _NAME)
        evidence = (
            _signal("annotation", HELM_RELEASE_NAME, annotations[HELM_RELEASE_NAME])
            if HELM_RELEASE_NAME in annotations
            else _signal("label", MANAGED_BY, labels[MANAGED_BY])
        )
        found.append(Applier(HELM, shown, evidence, False, None, ("helm",)))
    if TOPOLOGY_OWNED in labels:
        cluster = labels.get(CLUSTER_NAME, "")
        pool = labels.get(TOPOLOGY_POOL)
        evidence = f"label {TOPOLOGY_OWNED}" + (
            f", {TOPOLOGY_POOL}={json.dumps(bounded(pool))}" if pool else ""
        )
        found.append(
            Applier(TOPOLOGY, bounded(cluster, _NAME), evidence, True, None, ("capi-topology",))
        )
    return found


def _with_cluster_ref(applier: Applier, namespace: str) -> Applier:
    if applier.kind != TOPOLOGY or not applier.name:
        return applier
    ref = OwnerRef("cluster.x-k8s.io", "v1beta2", "clusters", namespace, applier.name, "Cluster")
    return Applier(
        applier.kind, f"{namespace}/{applier.name}", applier.evidence, True, ref, applier.managers
    )


def _manager_kind(entry: ManagedEntry) -> str | None:
    """The applier a managedFields entry alone shows. kubectl's client-side apply is judged with
    its annotation, the autoscaler with its bounds; this tool's own writes are no applier, and
    an Update is one only from a known applier (a controller's own writes are not)."""
    if entry.manager == OWN_MANAGER:
        return None
    kind = _KNOWN_MANAGERS.get(entry.manager)
    if kind in (KUBECTL, AUTOSCALER):
        return None
    if kind is None and entry.operation == "Apply":
        return KUBECTL if entry.manager == "kubectl" else f"field manager {entry.manager}"
    return kind


def appliers(raw: RawObject) -> tuple[Applier, ...]:
    """Every applier the object's signals show: GitOps first, the autoscaler last."""
    meta = mapping(raw.get("metadata"))
    labels, annotations = string_map(meta.get("labels")), string_map(meta.get("annotations"))
    namespace = bounded(text(meta.get("namespace")) or "", _NAME)
    entries = managed_entries(raw)
    found = [_with_cluster_ref(a, namespace) for a in _label_appliers(labels, annotations, entries)]
    kinds = {a.kind for a in found}
    for entry in entries:
        kind = _manager_kind(entry)
        if kind is None or kind in kinds:
            continue
        kinds.add(kind)
        mine = [e for e in entries if _manager_kind(e) == kind]
        managers = tuple(dict.fromkeys(e.manager for e in mine))
        found.append(Applier(kind, "", _entry_evidence(mine), kind in _GITOPS, None, managers))
    found = _with_last_applied(found, annotations, entries)
    bounds = autoscaler_bounds(annotations)
    if bounds.annotated:
        values = ", ".join(
            _signal("annotation", key, value)
            for key, value in ((MIN_SIZE, bounds.min_value), (MAX_SIZE, bounds.max_value))
            if value is not None
        )
        found.append(Applier(AUTOSCALER, "", values, False, None, (AUTOSCALER,)))
    return tuple(found)


def _with_last_applied(
    found: list[Applier], annotations: dict[str, str], entries: tuple[ManagedEntry, ...]
) -> list[Applier]:
    """The last-applied copy belongs to whoever wrote the annotation: Argo CD's client-side sync
    or kubectl apply (the managedFields entry owning it says which; without one, kubectl)."""
    if LAST_APPLIED not in annotations:
        return found
    path = ("metadata", "annotations", LAST_APPLIED)
    writers = [e for e in entries if e.owns(path)]
    for index, applier in enumerate(found):
        if any(e.manager in applier.managers for e in writers):
            evidence = f"{applier.evidence}; annotation {LAST_APPLIED}"
            found[index] = Applier(
                applier.kind,
                applier.name,
                evidence,
                applier.gitops,
                applier.ref,
                applier.managers,
                True,
            )
            return found
    evidence = f"annotation {LAST_APPLIED}" + (f"; {_entry_evidence(writers)}" if writers else "")
    managers = tuple(dict.fromkeys((KUBECTL_CSA, *(e.manager for e in writers))))
    return [*found, Applier(KUBECTL, "", evidence, False, None, managers, True)]


def field_appliers(raw: RawObject, path: tuple[str, ...]) -> tuple[Applier, ...]:
    """The appliers that apply this field: by their managedFields entries, their last-applied
    copy, or (neither known for them) conservatively all of them. The autoscaler sizes a pool
    only: spec.replicas, when its bounds make the pool a node group or its writes own it."""
    entries = managed_entries(raw)
    applied = last_applied(raw)
    annotations = string_map(dig(raw, "metadata", "annotations"))
    found = []
    for applier in appliers(raw):
        mine = [e for e in entries if e.manager in applier.managers]
        if applier.kind == AUTOSCALER:
            sizes = autoscaler_bounds(annotations).node_group or any(e.owns(path) for e in mine)
            if path == REPLICAS and sizes:
                found.append(applier)
            continue
        by_copy = applier.last_applied and applied is not None
        known = (by_copy and _has(applied, path)) or any(e.owns(path) for e in mine)
        if known or not (mine or by_copy):
            found.append(applier)
    return tuple(found)


def pool_owner_line(found: tuple[Applier, ...], annotations: dict[str, str]) -> str:
    """describe's and list's few words: each applier's kind and name, GitOps first, the
    autoscaler with its bounds; "" when no signal shows one."""
    words = []
    for applier in found:
        if applier.kind == AUTOSCALER:
            bounds = autoscaler_bounds(annotations)
            shown = "unusable bounds" if bounds.problems else f"{bounds.minimum}..{bounds.maximum}"
            words.append(f"{AUTOSCALER} {shown}")
        else:
            words.append(f"{applier.kind} {applier.name}" if applier.name else applier.kind)
    return ", ".join(dict.fromkeys(words))
