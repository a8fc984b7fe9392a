"""What an export keeps of each object: the fields the readers read, kind by kind, and no other.

An allow-list, not a deny-list: a field no reader reads (a KubeadmConfig's discovery kubeconfig,
its ignition config, a provider's next field) never leaves the cluster, whatever it holds. The
readers are describe, diagnose, diff-metadata, list, events and rollout status; the provider
fields come from the provider registry (providers/registry.py), as the readers take them.

A path is dotted from the object's root, as the registry writes them: `[]` after a key crosses a
list (each item), `*` is any key (labels, annotations, a selector's matchLabels). At a path's end
a scalar is kept; a mapping is kept empty, a list keeps its scalars and empties the rest, so that
"is there one" and "how many" read as they did, while what a nested value holds is never kept.

Pure: an object in, a new object out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP, group_of
from kubectl_machinepool.base.fields import RawObject, strings
from kubectl_machinepool.model.propagation import sync_args
from kubectl_machinepool.providers.records import CloudFields, ZoneSource
from kubectl_machinepool.providers.registry import PROVIDERS
from kubectl_machinepool.providers.targets import EMBEDDED_NAME_FIELDS, fields_read

REMOVED = "<removed by kubectl-machinepool export>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"

# Tree keys that no JSON key can be.
_EACH, _ANY = ("[]",), ("*",)
Transform = Callable[[Any], Any]
Tree = dict[Any, Any]
_SCALARS = (str, int, float, bool)


def _token_id(value: Any) -> Any:
    """kubeadm's "<id>.<secret>": the id names the token's Secret (the missing-token rule says
    it), the secret is the key."""
    if not isinstance(value, str) or not value:
        return None
    token_id, dot, _ = value.partition(".")
    return f"{token_id}.{REMOVED}" if dot else REMOVED


def _annotations(value: Any) -> Any:
    """Every annotation but the last-applied copy of the whole object (it holds every field)."""
    if not isinstance(value, dict):
        return _emptied(value)
    return {k: _leaf(v) for k, v in value.items() if k != LAST_APPLIED}


def _manager_args(value: Any) -> Any:
    return sync_args(list(strings(value))) if isinstance(value, list) else _emptied(value)


_CONDITION = ("type", "status", "reason", "message", "lastTransitionTime", "severity")


def _conditions(*lists: str) -> tuple[str, ...]:
    return tuple(f"{path}[].{key}" for path in lists for key in _CONDITION)


def _under(prefix: str, *paths: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{path}" for path in paths)


_REF = ("apiGroup", "apiVersion", "kind", "name")
_METADATA: dict[str, Transform | None] = {
    **dict.fromkeys(
        (
            "apiVersion",
            "kind",
            *_under(
                "metadata",
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "generation",
                "resourceVersion",
                "finalizers",
                "labels.*",
                *_under("ownerReferences[]", "apiVersion", "kind", "name", "uid", "controller"),
            ),
        )
    ),
    "metadata.annotations": _annotations,
}
# Only whether a manager owns spec, spec.replicas or the template's version, and when it wrote.
_MANAGED_FIELDS = _under(
    "metadata.managedFields[]",
    "manager",
    "time",
    "fieldsV1.f:spec.f:replicas",
    "fieldsV1.f:spec.f:template.f:spec.f:version",
)
# What states.object_state reads of any kind (and conditions.read_conditions, in every place).
_STATE = (
    *_under(
        "status",
        "initialization.provisioned",
        "initialization.dataSecretCreated",
        "ready",
        "phase",
        "observedGeneration",
        "failureReason",
        "errorReason",
        "failureMessage",
        "errorMessage",
        "failureMessages",
        "deprecated.v1beta1.failureReason",
        "deprecated.v1beta1.failureMessage",
    ),
    *_conditions("status.conditions", "status.v1beta2.conditions"),
    *_conditions("status.deprecated.v1beta1.conditions"),
)
_COUNTERS = ("replicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
_MACHINE_POOL = (
    *_MANAGED_FIELDS,
    *_STATE,
    *_under(
        "spec",
        "clusterName",
        "replicas",
        "minReadySeconds",
        "failureDomains",
        "providerIDList",
        "template.metadata.labels.*",
        "template.metadata.annotations.*",
        "template.spec.version",
        "template.spec.minReadySeconds",
        "template.spec.bootstrap.dataSecretName",
        *_under("template.spec.bootstrap.configRef", *_REF),
        *_under("template.spec.infrastructureRef", *_REF),
    ),
    *_under(
        "status",
        *_COUNTERS,
        "upToDateReplicas",
        "infrastructureReady",
        "bootstrapReady",
        "initialization.infrastructureProvisioned",
        "initialization.bootstrapDataSecretCreated",
        "nodeRefs[].name",
        "nodeRefs[].uid",
        "versions[].version",
        "versions[].replicas",
        *_under("v1beta2", *_COUNTERS, "upToDateReplicas"),
        *_under("deprecated.v1beta1", *_COUNTERS),
    ),
)
_MACHINE = (
    *_STATE,
    *_under("spec", "providerID", "version", *_under("infrastructureRef", *_REF)),
    # nodedrain.stored_drain_timeout, in each generation
    "spec.nodeDrainTimeout",
    "spec.deletion.nodeDrainTimeoutSeconds",
    "status.nodeRef.name",
)
_CLUSTER = (
    *_STATE,
    *_under("spec", "paused", "topology.version", *_under("controlPlaneRef", *_REF)),
)
_UNHEALTHY = ("type", "status", "timeout", "timeoutSeconds")
_HEALTH_CHECK = (
    *_STATE,
    *_under(
        "spec",
        "clusterName",
        "selector.matchLabels.*",
        *_under("selector.matchExpressions[]", "key", "operator", "values"),
        # v1beta1
        "nodeStartupTimeout",
        "maxUnhealthy",
        "unhealthyRange",
        *_under("unhealthyConditions[]", *_UNHEALTHY),
        *_under("unhealthyMachineConditions[]", *_UNHEALTHY),
        *_under("remediationTemplate", "apiVersion", "kind", "name"),
        # v1beta2
        "checks.nodeStartupTimeoutSeconds",
        *_under("checks.unhealthyNodeConditions[]", *_UNHEALTHY),
        *_under("checks.unhealthyMachineConditions[]", *_UNHEALTHY),
        "remediation.triggerIf.unhealthyLessThanOrEqualTo",
        "remediation.triggerIf.unhealthyInRange",
        *_under("remediation.templateRef", "apiVersion", "kind", "name"),
    ),
    *_under("status", "expectedMachines", "currentHealthy", "remediationsAllowed"),
)
_NODE = (
    *_under("spec", "providerID", "unschedulable", "taints[].key", "taints[].effect"),
    *_conditions("status.conditions"),
    "status.nodeInfo.kubeletVersion",
)
_INVOLVED = ("apiVersion", "kind", "namespace", "name", "uid")
# core/v1 and events.k8s.io/v1 (events.event_record).
_EVENT = (
    *_under("involvedObject", *_INVOLVED),
    *_under("regarding", *_INVOLVED),
    "type",
    "reason",
    "message",
    "note",
    "count",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "series.count",
    "series.lastObservedTime",
    "source.component",
    "reportingComponent",
    "reportingController",
    "deprecatedCount",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedSource.component",
)
# The core controller: its image says the Cluster API version, its sync flags what reaches Nodes.
_DEPLOYMENT: dict[str, Transform | None] = {
    "spec.template.spec.containers[].name": None,
    "spec.template.spec.containers[].image": None,
    "spec.template.spec.containers[].args": _manager_args,
}
# Infra pools, infra machines, bootstrap configs, control planes, companions and kinds this
# tool does not know: what every rule reads of any of them.
_PROVIDER_OBJECT = (
    *_MANAGED_FIELDS,
    *_STATE,
    "spec.providerID",
    "status.infrastructureMachineKind",
)
_CONTROL_PLANE = ("spec.version", "spec.controlPlaneVersion", "status.version")
_KUBEADM_CONFIG: dict[str, Transform | None] = {
    "spec.joinConfiguration.discovery.bootstrapToken.token": _token_id
}


def _step(node: Tree, key: str) -> Tree:
    name = key.removesuffix("[]")
    child: Tree = node.setdefault(_ANY if name == "*" else name, {})
    return child.setdefault(_EACH, {}) if key.endswith("[]") else child


def _compile(*parts: Iterable[str] | Mapping[str, Transform | None]) -> Tree:
    """The paths as a tree: each key to its subtree, a leaf to {} or to its transform."""
    root: Tree = {}
    for part in parts:
        for path, transform in (part if isinstance(part, Mapping) else dict.fromkeys(part)).items():
            *steps, last = path.split(".")
            node = root
            for key in steps:
                node = _step(node, key)
            if transform is None:
                _step(node, last)
            else:
                node[last] = transform  # a plain key: transforms take the value whole
    return root


def _emptied(value: Any) -> Any:
    """A value past where the allow-list reaches: its shape, none of its content."""
    if isinstance(value, dict):
        return {}
    if isinstance(value, list):
        return []
    return None


def _leaf(value: Any) -> Any:
    if isinstance(value, list):
        return [v if v is None or isinstance(v, _SCALARS) else _emptied(v) for v in value]
    return _emptied(value) if isinstance(value, dict) else value


def _kept(value: Any, tree: Tree | Transform) -> Any:
    if callable(tree):
        return tree(value)
    if not tree:
        return _leaf(value)
    each = tree.get(_EACH)
    if each is not None:
        return [_kept(v, each) for v in value] if isinstance(value, list) else _emptied(value)
    if not isinstance(value, dict):
        return _emptied(value)
    anything = tree.get(_ANY)
    kept = {}
    for key, child in value.items():
        subtree = tree.get(key, anything)
        if subtree is not None:
            kept[key] = _kept(child, subtree)
    return kept


_FIXED: dict[tuple[str, str], Tree] = {
    (CAPI_GROUP, "MachinePool"): _compile(_METADATA, _MACHINE_POOL),
    (CAPI_GROUP, "Machine"): _compile(_METADATA, _MACHINE),
    (CAPI_GROUP, "Cluster"): _compile(_METADATA, _CLUSTER),
    (CAPI_GROUP, "MachineHealthCheck"): _compile(_METADATA, _HEALTH_CHECK),
    ("", "Node"): _compile(_METADATA, _NODE),
    ("", "Event"): _compile(_METADATA, _EVENT),
    ("events.k8s.io", "Event"): _compile(_METADATA, _EVENT),
    # Listed as metadata only, and kept as what the rules ask of them: is there one by this name.
    ("", "Secret"): _compile(("apiVersion", "kind", "metadata.name", "metadata.namespace")),
    ("apps", "Deployment"): _compile(_METADATA, _DEPLOYMENT),
    ("bootstrap.cluster.x-k8s.io", "KubeadmConfig"): _compile(
        _METADATA, _PROVIDER_OBJECT, _KUBEADM_CONFIG
    ),
}


def _registry_fields() -> dict[tuple[str, str], tuple[str, ...]]:
    """The fields the readers take from the provider registry, by the kind that holds them."""
    found: dict[tuple[str, str], list[str]] = {}
    for provider in PROVIDERS:
        zones = provider.zones or ZoneSource()
        pool = found.setdefault((provider.group, provider.kind), [])
        pool += [*fields_read(provider.version_fields), *zones.fields, *zones.placed_by]
        pool += zones.rebalance_suspended
        pool += filter(None, (provider.model_version_field, provider.provisioning_state_field))
        cloud = provider.cloud or CloudFields("")
        pool += cloud.pool_fields
        if provider.machine_kind:
            machine = found.setdefault((provider.group, provider.machine_kind), [])
            machine += filter(None, (provider.latest_model_field, cloud.machine_id))
        if provider.companion is not None:
            companion = provider.companion
            if companion.embedded:
                pool += EMBEDDED_NAME_FIELDS
            found.setdefault((companion.group, companion.kind), []).extend(
                (*fields_read(companion.version_fields), *cloud.companion_fields)
            )
    return {kind: tuple(paths) for kind, paths in found.items()}


_REGISTRY = _registry_fields()


@cache
def _provider_tree(group: str, kind: str) -> Tree:
    control_plane = _CONTROL_PLANE if group == CONTROL_PLANE_GROUP else ()
    return _compile(_METADATA, _PROVIDER_OBJECT, control_plane, _REGISTRY.get((group, kind), ()))


def kept_fields(obj: RawObject) -> RawObject:
    """What an export keeps of an object: the fields its kind's readers read."""
    group, kind = group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", ""))
    tree = _FIXED.get((group, kind))
    if tree is None:
        # Kinds nobody names are all one tree: a hostile list of many kinds caches nothing.
        known = (group, kind) in _REGISTRY or group == CONTROL_PLANE_GROUP
        tree = _provider_tree(group, kind) if known else _provider_tree("", "")
    kept: RawObject = _kept(obj, tree)
    return kept
