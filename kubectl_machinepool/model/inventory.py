"""What a management cluster runs: its providers, whether the MachinePool feature gate is on,
and which infra pool kinds its MachinePools use (`providers`).

The providers come from clusterctl's inventory, one Provider object per installed provider
(cmd/clusterctl/api/v1alpha3); a cluster installed otherwise has none, and then each controller
Deployment clusterctl's label names stands for its provider, versioned by its image tag. What
could not be read is said as such: an empty list here never means "none installed".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from kubectl_machinepool.base.apiversion import CAPI_GROUP, ref_group
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.controllers import (
    CORE_PROVIDER,
    PROVIDER_LABEL,
    args,
    controller_tag,
    flag_values,
    is_core_controller,
    manager,
)
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.providers.records import Provider
from kubectl_machinepool.providers.registry import PROVIDERS, infra_pool

CLUSTERCTL_GROUP = "clusterctl.cluster.x-k8s.io"
CORE_TYPE = "CoreProvider"
# clusterctl's types in the order `clusterctl init` installs them, and the prefix each gives its
# provider's name in the label and the Provider object's name (labels.go ManifestLabel).
TYPES = (
    (CORE_TYPE, ""),
    ("BootstrapProvider", "bootstrap-"),
    ("ControlPlaneProvider", "control-plane-"),
    ("InfrastructureProvider", "infrastructure-"),
    ("IPAMProvider", "ipam-"),
    ("RuntimeExtensionProvider", "runtime-extension-"),
    ("AddonProvider", "addon-"),
)
_ORDER = {name: at for at, (name, _) in enumerate(TYPES)}
FEATURE_GATES = "--feature-gates"
GATE = "MachinePool"
# MachinePool is beta and on by default since Cluster API v1.7.0 (PR #10141, feature/feature.go).
GATE_DEFAULT_SINCE = (1, 7)
_RELEASE = re.compile(r"v?([0-9]{1,4})\.([0-9]{1,4})\.")
# Go's strconv.ParseBool, which pflag's feature gate map reads values with.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@record
class Installed:
    """One provider: its name ("aws"), clusterctl's type, version and namespace, and the object
    that says so ("Provider infrastructure-aws", "Deployment capa-controller-manager")."""

    name: str
    type: str
    version: str
    namespace: str
    source: str


GateState = Literal["on", "off", "unknown"]


@record
class Gate:
    """The MachinePool feature gate: "on", "off" or "unknown", and why."""

    state: GateState
    reason: str


@record
class KindInUse:
    """An infra pool kind the MachinePools reference, with how many do; provider None: a kind
    the registry does not hold."""

    group: str
    kind: str
    pools: int
    provider: Provider | None


def _sorted(found: Iterable[Installed]) -> tuple[Installed, ...]:
    return tuple(sorted(found, key=lambda p: (_ORDER.get(p.type, len(TYPES)), p.name, p.namespace)))


def from_inventory(objects: Iterable[RawObject]) -> tuple[Installed, ...]:
    """clusterctl's Provider objects: their fields are at the top level, not under spec."""
    return _sorted(
        Installed(
            text(obj.get("providerName")) or "",
            text(obj.get("type")) or "",
            text(obj.get("version")) or "",
            text(dig(obj, "metadata", "namespace")) or "",
            f"Provider {text(dig(obj, 'metadata', 'name')) or ''}",
        )
        for obj in objects
    )


def _named(label: str) -> tuple[str, str]:
    """The provider's name and type from clusterctl's label value."""
    if label == CORE_PROVIDER:
        return label, CORE_TYPE
    for type_name, prefix in TYPES[1:]:
        if label.startswith(prefix):
            return label.removeprefix(prefix), type_name
    return label, ""


def from_deployments(deployments: Iterable[RawObject]) -> tuple[Installed, ...]:
    """Each controller Deployment clusterctl labelled as a provider's."""
    found = []
    for deployment in deployments:
        label = text(mapping(dig(deployment, "metadata", "labels")).get(PROVIDER_LABEL))
        if not label:
            continue
        name, type_name = _named(label)
        found.append(
            Installed(
                name,
                type_name,
                controller_tag(deployment),
                text(dig(deployment, "metadata", "namespace")) or "",
                f"Deployment {text(dig(deployment, 'metadata', 'name')) or ''}",
            )
        )
    return _sorted(found)


def installed(snapshot: Snapshot) -> tuple[tuple[Installed, ...], str]:
    """The providers, and which kind of object named them ("Provider", "Deployment" or "")."""
    inventory = from_inventory(snapshot.of_kind(CLUSTERCTL_GROUP, "Provider"))
    if inventory:
        return inventory, "Provider"
    deployments = from_deployments(snapshot.of_kind("apps", "Deployment"))
    return deployments, "Deployment" if deployments else ""


def _release_of(version: str) -> tuple[int, int] | None:
    match = _RELEASE.match(version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def machine_pool_gate(snapshot: Snapshot, providers: Iterable[Installed]) -> Gate:
    """From the core manager's --feature-gates, else the default of its Cluster API release.
    The core manager is the one in the core Provider object's namespace when there is one."""
    providers = tuple(providers)
    homes = {p.namespace for p in providers if p.type == CORE_TYPE}
    cores = [d for d in snapshot.of_kind("apps", "Deployment") if is_core_controller(d)]
    at_home = [d for d in cores if text(dig(d, "metadata", "namespace")) in homes]
    core = next(iter(at_home or cores), None)
    if core is None:
        why = "no core controller Deployment was found"
        if not snapshot.was_read("apps", "Deployment"):
            why = "Deployments could not be read"
        return Gate("unknown", f"{why}, so the core manager's {FEATURE_GATES} is not known")
    meta = mapping(core.get("metadata"))
    where = f"Deployment {text(meta.get('namespace')) or ''}/{text(meta.get('name')) or ''}"
    gates = flag_values(args(manager(core) or {}), FEATURE_GATES)
    # pflag's map flag: a gate named twice takes its last value.
    values = [value for name, _, value in (g.partition("=") for g in gates) if name == GATE]
    if values:
        value = values[-1]
        if value in _TRUE | _FALSE:
            said: GateState = "on" if value in _TRUE else "off"
            return Gate(said, f"{FEATURE_GATES} sets {GATE}={value} ({where})")
        return Gate("unknown", f"{FEATURE_GATES} sets {GATE}={value}, not a boolean ({where})")
    core_versions = [p.version for p in providers if p.type == CORE_TYPE and p.version]
    version = core_versions[0] if core_versions else controller_tag(core)
    release = _release_of(version)
    if release is None:
        return Gate(
            "unknown",
            f"{FEATURE_GATES} does not name {GATE} ({where}) and the Cluster API version is "
            "not known: its default is on since v1.7.0",
        )
    state: GateState = "on" if release >= GATE_DEFAULT_SINCE else "off"
    since = "on by default since" if state == "on" else "off by default before"
    return Gate(
        state,
        f"{FEATURE_GATES} does not name {GATE} ({where}); Cluster API {version}: {since} "
        "v1.7.0 (cluster-api#10141)",
    )


def kinds_in_use(pools: Iterable[RawObject]) -> tuple[KindInUse, ...]:
    """The infra pool kinds the MachinePools' templates reference, most used first."""
    counted: Counter[tuple[str, str]] = Counter()
    for pool in pools:
        ref = dig(pool, "spec", "template", "spec", "infrastructureRef")
        kind = text(dig(ref, "kind"))
        if kind:
            counted[(ref_group(ref), kind)] += 1
    return tuple(
        KindInUse(group, kind, count, infra_pool(group, kind))
        for (group, kind), count in sorted(counted.items(), key=lambda e: (-e[1], e[0][1], e[0][0]))
    )


@record(slots=False)
class Inventory:
    """What `providers` shows, as read."""

    providers: tuple[Installed, ...]
    # The kind of object that named them: "Provider", "Deployment", or "" when none did.
    named_by: str
    # Whether an empty list of providers proves anything: both of their reads answered.
    providers_read: bool
    gate: Gate
    # The kinds the pools in scope use; with every_kind, every kind the registry holds too.
    kinds: tuple[KindInUse, ...]
    kinds_read: bool
    every_kind: bool
    # Where the pools were read: None in every namespace.
    namespace: str | None
    notes: tuple[str, ...]


def every_kind(in_use: tuple[KindInUse, ...]) -> tuple[KindInUse, ...]:
    """Each kind of the registry in its order, with its pools, then kinds in use it lacks."""
    used = {(k.group, k.kind): k for k in in_use}
    known = tuple(
        used.get((p.group, p.kind)) or KindInUse(p.group, p.kind, 0, p) for p in PROVIDERS
    )
    return known + tuple(k for k in in_use if k.provider is None)


def inventory(snapshot: Snapshot, namespace: str | None, *, all_kinds: bool) -> Inventory:
    """What was read for `providers`, made into what it shows."""
    found, named_by = installed(snapshot)
    in_use = kinds_in_use(snapshot.of_kind(CAPI_GROUP, "MachinePool"))
    return Inventory(
        found,
        named_by,
        snapshot.was_read(CLUSTERCTL_GROUP, "Provider") and snapshot.was_read("apps", "Deployment"),
        machine_pool_gate(snapshot, found),
        every_kind(in_use) if all_kinds else in_use,
        snapshot.was_read(CAPI_GROUP, "MachinePool"),
        all_kinds,
        namespace,
        snapshot.notes,
    )
