"""The record types of the provider registry (providers/registry.py): what one infra pool kind
is, as its provider implements it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field

from kubectl_machinepool.base.records import record
from kubectl_machinepool.providers.operations import Operations
from kubectl_machinepool.providers.readings import Reading
from kubectl_machinepool.providers.rolls import Rolls
from kubectl_machinepool.providers.upgrades import Upgrade


def as_named(zone: str) -> str:
    return zone


def numbered(zone: str) -> str:
    """Azure labels a Node in zone "1" `<region>-1`; OCI's CCM labels a Node in AD 1 with the AD
    name, `PHX-AD-1`, which pools write as AD number 1 or `<tenancy>:PHX-AD-1`."""
    return zone.rpartition("-")[2]


INFRA_GROUP = "infrastructure.cluster.x-k8s.io"
REPLACED = "the instance is drained and deleted, then the provider creates a replacement"
ANNOTATED_FIRST = "the annotated Machine is removed first"


@record
class InstanceDeletion:
    """What deleting one Machine of the pool does in the cloud (docs/delete-machine.md)."""

    # False: the Machine goes, but the instance keeps running (the tool refuses).
    deletes_instance: bool
    # One sentence: what deleting one Machine does.
    effect: str
    # Whether the provider removes the Machine annotated cluster.x-k8s.io/delete-machine first
    # when replicas go down (cluster-autoscaler's way to remove a chosen instance).
    honours_delete_annotation: bool
    scale_down_effect: str
    # Whether the annotation alone, before replicas go down, makes the provider delete it.
    annotation_deletes: bool = False
    # With replicas-managed-by the provider lowers spec.replicas to the cloud's count, so a
    # deleted instance is not replaced: what deleting one does then. None: replaced as usual.
    sticky_when_managed: str | None = None
    # Where the infra-machine controller's deletion and the scale-down order are, upstream.
    source: str = ""


@record
class VersionField:
    """A field that names the Kubernetes release the provider rolls the pool to (#7248)."""

    # Dotted from the object's root; `[]` crosses a list (each item is read).
    path: str
    # How its value names a release.
    reading: Reading
    # Where the provider defines it, at the commit of the module docstring.
    source: str
    # The provider deploys this version instead of the MachinePool's (CAPOCI's OKE pools).
    deployed: bool = False


@record
class ZoneSource:
    """Where the provider takes a pool's zones from, and what its cloud does to keep them even.

    Balanced means every zone within one instance of the others, as AWS, Azure and GCP define it.
    """

    # The infra pool's own zone fields, in the provider's order of precedence.
    fields: tuple[str, ...] = ()
    # Fields that, when set, place instances by something whose zones the pool does not name
    # (subnets): the zones are then not known here.
    placed_by: tuple[str, ...] = ()
    # Whether the MachinePool's spec.failureDomains is used when none of the fields is set.
    failure_domains: bool = False
    # How a Node's zone label names one of these zones, as a key both compare by.
    naming: Callable[[str], str] = as_named
    # Where the cloud puts the instance that replaces a deleted one; None: not verified.
    replacement: str | None = None
    # Whether, and how, the cloud moves instances to even zones out; None: not verified.
    rebalance: str | None = None
    # The first of these infra pool fields that holds a boolean says whether that rebalancing
    # is suspended.
    rebalance_suspended: tuple[str, ...] = ()
    # Where the behaviour above is stated.
    source: str = ""


@record
class Companion:
    """An object the provider makes for each infra pool, holding what the cloud answers."""

    group: str
    kind: str
    # Named as the infra pool's spec.resources[] names an object of this kind; False: by the
    # infra pool's name, as CAPZ normalises it.
    embedded: bool
    version_fields: tuple[VersionField, ...]


@record
class RollingSignal:
    """A condition of the infra pool that says its provider is still rolling it: with this
    status, and this reason when one is given."""

    condition: str
    status: str
    reason: str | None = None
    # The managed service is updating the pool (it may say ready meanwhile), rather than
    # instances running an older model.
    updating: bool = True

    def says_rolling(self, status: str, reason: str) -> bool:
        return status == self.status and self.reason in (None, reason)


# A field in a template: `{spec.awsLaunchTemplate.ami.id}`.
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def template_fields(template: str) -> tuple[str, ...]:
    """The fields (or, in a command, the providerID's parts) a template names."""
    return tuple(_PLACEHOLDER.findall(template))


def fill(template: str, value: Callable[[str], str | None]) -> str | None:
    """The template with each field's value; None when one has none."""
    found: list[str] = []
    for name in template_fields(template):
        got = value(name)
        if got is None:
            return None
        found.append(got)
    parts = iter(found)
    return _PLACEHOLDER.sub(lambda _: next(parts), template)


@record
class CloudFields:
    """Where a pool of this kind lives in its cloud, as its infra objects say (describe's Cloud
    line), and what an operator runs by hand about an instance that never joined.

    A template names fields in braces, dotted from the object's root (`[]` crosses a list: its
    first item that has the field); it is shown only when every field it names is set. Commands
    are templates over the parts of an instance's providerID instead (model/cloud.py names them),
    each value shell-quoted.
    """

    # As the cloud's own console names itself.
    cloud: str
    # What names the pool in the cloud, the first shown wins: metadata.name where the provider
    # names the cloud's object after the infra pool. A name without a dot is no field: `{cluster}`
    # is the MachinePool's Cluster name, another a part of its instances' providerIDs.
    name: tuple[str, ...] = ()
    # The cloud's own ID of the pool (an OCID), the first set wins.
    pool_id: tuple[str, ...] = ()
    instance_type: tuple[str, ...] = ()
    # (label, template) of the image and the launch template: per label, the first shown.
    image: tuple[tuple[str, str], ...] = ()
    # The infra machine's field that holds its instance's ID.
    machine_id: str | None = None
    # (label, template) of what the companion object says of the image (AKS's node image).
    companion_image: tuple[tuple[str, str], ...] = ()
    # Commands that look at, and that replace, an instance that never joined: the first whose
    # parts are all known. Empty: not verified, or nothing an operator should run.
    inspect: tuple[str, ...] = ()
    replace: tuple[str, ...] = ()
    # Where the names and fields are, upstream.
    source: str = ""

    @property
    def pool_fields(self) -> tuple[str, ...]:
        """Every field of the infra pool the templates read."""
        templates = (*self.name, *self.pool_id, *self.instance_type, *(t for _, t in self.image))
        return tuple(f for t in templates for f in template_fields(t) if "." in f)

    @property
    def companion_fields(self) -> tuple[str, ...]:
        """Every field of the companion object the templates read."""
        return tuple(f for _, t in self.companion_image for f in template_fields(t))


@record
class Provider:
    """One infra pool kind, as its provider implements it."""

    group: str
    kind: str
    # What one pool is in the cloud.
    cloud_object: str
    # status.infrastructureMachineKind as the provider sets it; None when it sets none.
    machine_kind: str | None
    # None when the pool has no per-instance Machines.
    deletion: InstanceDeletion | None = None
    # The infra pool's conditions that say the provider is still rolling the pool.
    rolling: tuple[RollingSignal, ...] = ()
    # The infra machine's flag (a dotted path) that says it runs the pool's latest model.
    latest_model_field: str | None = None
    # Where the infra pool says which model (launch template version) new instances get: shown
    # by rollout status (CAPA keeps no per-instance model; its status.instances[].version is
    # never filled in, pkg/cloud/scope/machinepool.go UpdateInstanceStatuses).
    model_version_field: str | None = None
    # The label the managed service puts on each Node naming the image it runs (shown by
    # rollout status as evidence, not compared: the target image is not in the pool's objects).
    node_image_label: str | None = None
    # Fields that name the Kubernetes release the pool rolls to, besides the MachinePool's.
    version_fields: tuple[VersionField, ...] = ()
    # The object the provider keeps the cloud's side in, with version fields of its own.
    companion: Companion | None = None
    # Where the pool's zones come from; None: not verified (spec.failureDomains is assumed).
    zones: ZoneSource | None = None
    # A provisioning state that can say Failed while status.ready is true.
    provisioning_state_field: str | None = None
    # Where a pool lives in its cloud; None: nothing verified.
    cloud: CloudFields | None = None
    # What goes wrong when cluster-autoscaler scales in this pool's Machines; None: nothing
    # this tool warns about.
    autoscaler_scale_in: str | None = None
    # How the infra pool follows a new Kubernetes version (upgrade).
    upgrade: Upgrade = field(default_factory=Upgrade)
    # What a change of each field does to the pool's instances (diff); unset: only core's facts.
    rolls: Rolls = field(default_factory=Rolls)
    # What rolls the pool and what a pause leaves running: every record must say.
    operations: Operations = field(kw_only=True)
