"""Where a pool lives in its cloud: the provider's name of the pool, its instance type and image,
and each instance's ID and zone, as the infra objects give them, with IDs and zones from the
providerIDs where they do not; for an instance that never joined, what to run by hand.

Which fields say what is the provider registry's (providers.CloudFields); the commands are only
ever shown, never run. Every value comes from a cluster or a dump: only short strings of a
conservative alphabet are taken from a providerID, and each is shell-quoted in a command.
Pure: a pool, its instances and raw objects in, a PoolCloud out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.instances import Instance
from kubectl_machinepool.model.pool import MachinePool
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.model.states import NodeState
from kubectl_machinepool.model.zones import ZONE_LABEL, node_zone
from kubectl_machinepool.providers.records import CloudFields, Provider, fill
from kubectl_machinepool.providers.targets import companion_name

# A longer value is not shown: real ones (an Azure image ID, an ARN) stay well within it.
MAX_VALUE = 512
# A providerID part: what the clouds' IDs, names, zones and resource groups are made of.
_PART = re.compile(r"[\w.:()+@=-]{1,256}", re.ASCII)
# An AWS zone's region: eu-west-1 of eu-west-1c, us-west-2 of the Local Zone us-west-2-lax-1a.
_AWS_REGION = re.compile(r"[a-z]{2}(?:-[a-z]+)+-\d+")
PROVIDER_ID = "providerID"
# The providerID parts every instance of a pool shares: an instance without a providerID yet
# takes them from the others'.
_POOL_WIDE = ("region", "project", "group", "scale_set")


@record
class InstanceCloud:
    """One instance as its cloud knows it."""

    # Which of the pool's instances: its providerID and its infra machine's name.
    provider_id: str | None
    infra_machine: str | None
    id: str | None
    # Where the ID and the zone were read: "AWSMachine spec.instanceID", "providerID", "Node
    # topology.kubernetes.io/zone".
    id_source: str | None
    zone: str | None
    zone_source: str | None
    # True: it has a Node; False: it never joined (no Node for its providerID, nor one its
    # Machine ever named, or no providerID yet); None: not known (Nodes not read, or going).
    joined: bool | None
    # For one that never joined: the commands that look at it and that replace it, to run by
    # hand; None when the provider's are not verified or a part of them is not known.
    inspect: str | None = None
    replace: str | None = None


@record
class PoolCloud:
    """The pool as its provider's cloud knows it; None where its objects do not say."""

    cloud: str
    # What one pool is there: "Auto Scaling Group", "VMSS".
    kind: str
    name: str | None
    pool_id: str | None
    instance_type: str | None
    # (label, value): "AMI ami-0abc", "launch template lt-0abc (version 3)".
    images: tuple[tuple[str, str], ...]
    instances: tuple[InstanceCloud, ...]

    @property
    def never_joined(self) -> tuple[InstanceCloud, ...]:
        return tuple(i for i in self.instances if i.joined is False)


def instance_key(instance: Instance) -> tuple[str | None, str | None]:
    """What an InstanceCloud is matched to its Instance by."""
    infra = instance.infra_machine
    return instance.provider_id, infra.name if infra else None


def clouds_by_instance(
    cloud: PoolCloud | None,
) -> dict[tuple[str | None, str | None], InstanceCloud]:
    return {(i.provider_id, i.infra_machine): i for i in cloud.instances} if cloud else {}


# -- fields -----------------------------------------------------------------------------------


def _value(obj: Any, keys: list[str]) -> str | None:
    """The string a dotted path reaches; `[]` crosses a list, taking its first item that has it."""
    for index, key in enumerate(keys):
        if key.endswith("[]"):
            found = dig(obj, key[:-2])
            rest = keys[index + 1 :]
            items = found if isinstance(found, list) else []
            return next((v for v in (_value(i, rest) for i in items) if v is not None), None)
        obj = dig(obj, key)
    value = text(obj)
    return value if value is not None and len(value) <= MAX_VALUE else None


def _field(obj: RawObject | None, path: str) -> str | None:
    return _value(obj, path.split(".")) if obj is not None else None


def _first(templates: Iterable[str], value: Callable[[str], str | None]) -> str | None:
    return next((v for v in (fill(t, value) for t in templates) if v is not None), None)


def _images(templates: Iterable[tuple[str, str]], obj: RawObject | None) -> list[tuple[str, str]]:
    """Per label, the first template whose fields are all set."""
    found: dict[str, str] = {}
    for label, template in templates:
        if label not in found and (shown := fill(template, lambda p: _field(obj, p))) is not None:
            found[label] = shown
    return list(found.items())


# -- providerIDs ------------------------------------------------------------------------------


# Azure resource IDs: .../resourceGroups/RG/providers/Microsoft.Compute/ then
# virtualMachineScaleSets/SS/virtualMachines/N (a Uniform VMSS) or virtualMachines/NAME.
_AZURE = re.compile(
    r"/resourcegroups/([^/]+)/.*?(?:/virtualmachinescalesets/([^/]+))?/virtualmachines/([^/]+)$",
    re.IGNORECASE,
)


def _azure(path: str) -> dict[str, str]:
    found = _AZURE.search(path)
    if found is None:
        return {}
    group, scale_set, instance = found.groups()
    if scale_set is None:
        return {"group": group, "instance": instance, "vm": instance}
    return {"group": group, "scale_set": scale_set, "instance": instance}


def provider_parts(provider_id: str | None) -> dict[str, str]:
    """The parts of a providerID the commands and IDs are made of: instance, zone, region,
    project, group, scale_set, vm. Empty for a scheme this tool does not read."""
    if not provider_id or len(provider_id) > MAX_VALUE:
        return {}
    if provider_id.startswith("ocid1."):  # CAPOCI's managed clusters give the bare OCID
        return _checked({"instance": provider_id})
    scheme, sep, path = provider_id.partition("://")
    segments = path.strip("/").split("/")
    found: dict[str, str] = {}
    if not sep:
        return found
    if scheme == "aws" and len(segments) == 2:
        found = {"zone": segments[0], "instance": segments[1]}
        if region := _AWS_REGION.match(segments[0]):
            found["region"] = region.group()
    elif scheme == "gce" and len(segments) == 3:
        found = dict(zip(("project", "zone", "instance"), segments, strict=True))
    elif scheme == "azure":
        found = _azure(path)
    elif scheme == "oci" and len(segments) == 1:
        found = {"instance": segments[0]}
    elif scheme == "scaleway" and len(segments) == 3 and segments[0] == "instance":
        found = {"zone": segments[1], "instance": segments[2]}
    elif scheme == "docker" and segments[-1]:
        found = {"instance": segments[-1]}
    return _checked(found)


def _checked(parts: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in parts.items() if _PART.fullmatch(v)}


# -- instances --------------------------------------------------------------------------------


def _joined(instance: Instance, nodes_known: bool) -> bool | None:
    if instance.node is not None:
        return True
    machine = instance.machine
    if machine is not None and (machine.object.deleting_since or machine.node_name):
        return None
    if not instance.provider_id:
        return False if instance.infra_machine is not None else None
    return False if nodes_known else None


def _command(templates: Iterable[str], parts: dict[str, str]) -> str | None:
    quoted = {k: shlex.quote(v) for k, v in parts.items()}
    return _first(templates, quoted.get)


def instance_cloud(
    instance: Instance,
    fields: CloudFields,
    infra_machine: RawObject | None,
    pool_parts: dict[str, str],
    nodes_known: bool,
) -> InstanceCloud:
    parts = provider_parts(instance.provider_id)
    machine_id = _field(infra_machine, fields.machine_id) if fields.machine_id else None
    id_source = None
    if machine_id is not None and instance.infra_machine is not None:
        id_source = f"{instance.infra_machine.kind} {fields.machine_id}"
    elif "instance" in parts:
        id_source = PROVIDER_ID
    zone, zone_source = parts.get("zone"), PROVIDER_ID if "zone" in parts else None
    if zone is None and instance.node is not None and (zone := node_zone(instance.node)):
        zone_source = f"Node {ZONE_LABEL}"
    joined = _joined(instance, nodes_known)
    inspect = replace = None
    if joined is False:
        known = {**pool_parts, **parts}
        if machine_id is not None and _PART.fullmatch(machine_id):
            known["instance"] = machine_id
        inspect, replace = _command(fields.inspect, known), _command(fields.replace, known)
    return InstanceCloud(
        instance.provider_id,
        instance.infra_machine.name if instance.infra_machine else None,
        machine_id or parts.get("instance"),
        id_source,
        zone,
        zone_source,
        joined,
        inspect,
        replace,
    )


# -- the pool ---------------------------------------------------------------------------------


def companion_of(
    provider: Provider | None, infra: RawObject | None, snapshot: Snapshot
) -> RawObject | None:
    """The object the provider keeps the cloud's side of the infra pool in (AKS's ASO agent
    pool), as read."""
    companion = provider.companion if provider else None
    if companion is None or infra is None:
        return None
    name = companion_name(companion, infra)
    namespace = text(dig(infra, "metadata", "namespace")) or ""
    return snapshot.find(companion.group, companion.kind, namespace, name) if name else None


def _infra_machine(snapshot: Snapshot, instance: Instance) -> RawObject | None:
    state = instance.infra_machine
    return snapshot.find(state.group, state.kind, state.namespace, state.name) if state else None


def pool_cloud(
    provider: Provider | None,
    pool: MachinePool,
    infra: RawObject | None,
    companion: RawObject | None,
    instances: Sequence[Instance],
    *,
    snapshot: Snapshot,
    nodes: Sequence[NodeState] | None,
) -> PoolCloud | None:
    """The pool as its cloud knows it, from its infra pool (and companion) and each instance
    with its infra machine; None for a kind whose cloud fields are not verified. nodes: the
    workload cluster's, None when not read."""
    fields = provider.cloud if provider else None
    if provider is None or fields is None:
        return None
    # The first providerID this tool reads names what the pool's instances share (Azure's
    # scale set).
    shared = next((p for p in (provider_parts(i.provider_id) for i in instances) if p), {})

    def named(path: str) -> str | None:
        if "." in path:
            return _field(infra, path)
        if path == "cluster":
            return pool.cluster or None
        return shared.get(path)

    name = _first(fields.name, named)
    pool_id = _first(fields.pool_id, lambda p: _field(infra, p))
    pool_parts = {k: shared[k] for k in _POOL_WIDE if k in shared}
    pool_parts |= {
        k: v for k, v in (("pool", name), ("pool_id", pool_id)) if v and _PART.fullmatch(v)
    }
    return PoolCloud(
        fields.cloud,
        provider.cloud_object,
        name,
        pool_id,
        _first(fields.instance_type, lambda p: _field(infra, p)),
        (*_images(fields.image, infra), *_images(fields.companion_image, companion)),
        tuple(
            instance_cloud(i, fields, _infra_machine(snapshot, i), pool_parts, nodes is not None)
            for i in instances
        ),
    )
