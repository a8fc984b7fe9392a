"""Which operations an infra pool kind honours, from its registry record: shown by `providers`
and in docs/providers.md's table (a test keeps the two equal).

Each answer is yes, no or unverified, or gated: yes only under a provider setting the pool
cannot be seen to have (CAPA's MachinePoolMachines gate); with one sentence saying why and
where upstream says so.
Restart follows delete: a pool is restarted by replacing its instances one at a time, so only
a kind whose single instances can be replaced restarts; the others say what rolls them instead.
"""

from __future__ import annotations

from enum import Enum

from kubectl_machinepool.base.records import record
from kubectl_machinepool.providers.deletion import DeletionVerdict, Verdict, pool_deletion_verdict
from kubectl_machinepool.providers.records import Provider


class Answer(Enum):
    YES = "yes"
    GATED = "gated"
    NO = "no"
    UNVERIFIED = "unverified"


@record
class Capability:
    operation: str
    answer: Answer
    # One sentence: why, with its upstream reference.
    reason: str


DESCRIBE = "describe instances"
DELETE = "delete one"
RESTART = "restart"
UPGRADE = "upgrade pairing"
FROM_ZERO = "scale from zero"
AUTOSCALER = "autoscaler picks node"
OPERATIONS = (DESCRIBE, DELETE, RESTART, UPGRADE, FROM_ZERO, AUTOSCALER)

# Upstream's answer to "can a MachinePool's single Machines be deleted?".
_NO_MACHINES_REF = "cluster-api#13066"
_CAPACITY = (
    "set the capacity.cluster-autoscaler.kubernetes.io/cpu and /memory annotations on the "
    "MachinePool instead (autoscaler cloudprovider/clusterapi README, scale from zero)"
)
_AUTOSCALER_REF = "autoscaler cloudprovider/clusterapi clusterapi_nodegroup.go DeleteNodes"


def _cited(text: str, source: str) -> str:
    return f"{text} ({source})" if source else text


def _yes(operation: str, reason: str, provider: Provider) -> Capability:
    need = provider.operations.machines_need
    if need:
        return Capability(operation, Answer.GATED, f"{reason}; only with {need}")
    return Capability(operation, Answer.YES, reason)


def _describe(provider: Provider, verdict: DeletionVerdict) -> Capability:
    machine_kind = provider.machine_kind
    if machine_kind and machine_kind != provider.kind:
        return _yes(DESCRIBE, f"one {machine_kind} and Machine per instance", provider)
    return Capability(DESCRIBE, Answer.NO, _cited(verdict.reason, _NO_MACHINES_REF))


def _delete(provider: Provider, verdict: DeletionVerdict) -> Capability:
    source = provider.deletion.source if provider.deletion else _NO_MACHINES_REF
    reason = _cited(verdict.reason, source)
    if verdict.instead:
        reason += f"; instead: {verdict.instead}"
    if verdict.verdict is Verdict.SUPPORTED:
        return _yes(DELETE, reason, provider)
    unverified = verdict.verdict is Verdict.UNVERIFIED
    return Capability(DELETE, Answer.UNVERIFIED if unverified else Answer.NO, reason)


def _restart(provider: Provider, verdict: DeletionVerdict) -> Capability:
    rolls = provider.operations.rolls
    if verdict.verdict is Verdict.SUPPORTED:
        reason = f"instances replaced one at a time through their Machines; also: {rolls}"
        return _yes(RESTART, reason, provider)
    if verdict.verdict is Verdict.UNVERIFIED:
        return Capability(RESTART, Answer.UNVERIFIED, verdict.reason)
    return Capability(
        RESTART, Answer.NO, f"single instances cannot be replaced; what rolls it: {rolls}"
    )


def _upgrade(provider: Provider) -> Capability:
    upgrade = provider.upgrade
    if upgrade.unsupported:
        return Capability(UPGRADE, Answer.NO, upgrade.unsupported)
    if upgrade.deployed is not None:
        deployed = upgrade.deployed
        reason = _cited(f"the pool runs {deployed.path}, given with --set", deployed.source)
    elif upgrade.fields:
        paths = ", ".join(dict.fromkeys(f.path for f in upgrade.fields))
        sources = "; ".join(dict.fromkeys(f.source for f in upgrade.fields))
        reason = _cited(f"with {paths}", sources)
    else:
        reason = "the MachinePool's version alone: the kind has no image field to pair with it"
    limits = [text for text in (upgrade.one_minor, upgrade.steps_minors) if text]
    return Capability(UPGRADE, Answer.YES, "; ".join([reason, *limits]))


def _from_zero(provider: Provider) -> Capability:
    sets = provider.operations.sets_capacity
    if sets is None:
        return Capability(
            FROM_ZERO,
            Answer.UNVERIFIED,
            f"whether {provider.kind} sets status.capacity is not verified; {_CAPACITY}",
        )
    if sets:
        return Capability(FROM_ZERO, Answer.YES, f"{provider.kind} sets status.capacity")
    return Capability(FROM_ZERO, Answer.NO, f"{provider.kind} sets no status.capacity; {_CAPACITY}")


def _autoscaler(provider: Provider, verdict: DeletionVerdict) -> Capability:
    deletion = provider.deletion
    if verdict.verdict is Verdict.UNVERIFIED:
        return Capability(AUTOSCALER, Answer.UNVERIFIED, verdict.reason)
    if deletion is None or verdict.verdict is Verdict.NOT_SUPPORTED:
        if deletion is None:
            reason = (
                "without MachinePool Machines cluster-autoscaler only lowers replicas and the "
                "cloud picks the instance (autoscaler#9693)"
            )
        else:
            reason = _cited(
                f"deleting its Machine does not remove it: {verdict.reason}", deletion.source
            )
        return Capability(AUTOSCALER, Answer.NO, reason)
    if not deletion.honours_delete_annotation:
        said = provider.autoscaler_scale_in or deletion.scale_down_effect
        return Capability(AUTOSCALER, Answer.NO, _cited(said, deletion.source))
    reason = _cited(
        "cluster-autoscaler marks the node's Machine with cluster.x-k8s.io/delete-machine and "
        f"lowers replicas: {deletion.scale_down_effect}",
        f"{_AUTOSCALER_REF}; {deletion.source}" if deletion.source else _AUTOSCALER_REF,
    )
    return Capability(AUTOSCALER, Answer.YES, reason)


def capabilities(provider: Provider) -> tuple[Capability, ...]:
    """The operations of OPERATIONS, in that order, for one infra pool kind."""
    verdict = pool_deletion_verdict(provider.group, provider.kind, provider.machine_kind)
    return (
        _describe(provider, verdict),
        _delete(provider, verdict),
        _restart(provider, verdict),
        _upgrade(provider),
        _from_zero(provider),
        _autoscaler(provider, verdict),
    )


def unknown(kind: str) -> tuple[Capability, ...]:
    """A kind the registry does not hold: nothing about it is verified."""
    why = f"{kind} is not in this tool's provider registry (docs/providers.md)"
    return tuple(Capability(operation, Answer.UNVERIFIED, why) for operation in OPERATIONS)
