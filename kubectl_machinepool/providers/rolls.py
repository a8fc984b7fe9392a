"""What a change of a field does to a pool's instances: the record types of each provider's
"what rolls" facts (a Provider's `rolls`, in its module), and the MachinePool fields Cluster
API's core acts on alike for every provider (`diff`, docs/diff.md).

A rule covers its field and everything under it; the longest rule that covers a changed field
decides. A field no rule covers has an unknown effect, never "rolls none". Each rule says why,
in one sentence, and where upstream says so, at the commit its provider's module names (core:
kubernetes-sigs/cluster-api v1.14.0); `surprise` names the upstream issue of a known surprise
and the way out.
"""

from __future__ import annotations

from enum import Enum

from kubectl_machinepool.base.fields import RawObject, dig
from kubectl_machinepool.base.records import record

Path = tuple[str, ...]


class Effect(Enum):
    """What applying a change does to the pool, the worst first."""

    REFUSED = "refused by a webhook"
    ROLLS_ALL = "rolls every instance"
    MANAGED_UPGRADE = "starts the managed service's upgrade"
    UNKNOWN = "unknown effect"
    NEW_ONLY = "changes only new instances"
    SCALES = "scales"
    ROLLS_NONE = "rolls none"

    @property
    def rolls(self) -> bool:
        """Whether it may replace running instances: an unknown effect counts as one."""
        return self in (Effect.ROLLS_ALL, Effect.MANAGED_UPGRADE, Effect.UNKNOWN)


WORST_FIRST = tuple(Effect)


def path(dotted: str) -> Path:
    """A field dotted from the object's root, for keys without dots."""
    return tuple(dotted.split("."))


@record
class When:
    """The effect a rule has instead while the infra pool, as it will be, sets this field:
    to `value`, or to anything but null, false, "" or an empty list or map (value None)."""

    field: Path
    effect: Effect
    reason: str
    source: str
    value: object = None

    def holds(self, infra: RawObject | None) -> bool:
        found = dig(infra, *self.field)
        if self.value is not None:
            return bool(found == self.value)
        return found not in (None, False, "", [], {})


@record
class Rule:
    """What a change of a field (and of anything under it) does."""

    field: Path
    effect: Effect
    reason: str
    source: str
    surprise: str | None = None
    # Checked in order; the first that holds decides instead.
    when: tuple[When, ...] = ()


@record
class Verdict:
    """A rule's effect on one pool, with why and where upstream says so."""

    effect: Effect
    reason: str
    source: str
    surprise: str | None = None


def verdict(rule: Rule, infra: RawObject | None) -> Verdict:
    for case in rule.when:
        if case.holds(infra):
            return Verdict(case.effect, case.reason, case.source, rule.surprise)
    return Verdict(rule.effect, rule.reason, rule.source, rule.surprise)


@record
class Rolls:
    """One infra pool kind's facts: its own fields, the MachinePool's fields as its provider
    acts on them, a bootstrap config changed under the same name, and how a roll goes."""

    infra: tuple[Rule, ...] = ()
    pool: tuple[Rule, ...] = ()
    # The bootstrap config's spec changed in place (its name, and so the MachinePool, unchanged).
    bootstrap: Rule | None = None
    # The infra pool's fields that say how a roll goes (surge, instance refresh preferences).
    strategy: tuple[Path, ...] = ()
    # How a roll goes while none of them is set.
    strategy_default: str = ""


# A bootstrap config is named by the MachinePool; a new name is new bootstrap data for it.
BOOTSTRAP_REF = path("spec.template.spec.bootstrap.configRef")
BOOTSTRAP_SECRET = path("spec.template.spec.bootstrap.dataSecretName")
VERSION = path("spec.template.spec.version")

_WEBHOOK = "core/webhooks/admission/machinepool.go"
_PHASES = "core/reconcilers/machinepool/machinepool_controller_phases.go"
_ANNOTATIONS = ("metadata", "annotations")

# The MachinePool's fields as core acts on them (kubernetes-sigs/cluster-api v1.14.0), whatever
# the provider; a provider's own rule for the same field wins.
CORE: tuple[Rule, ...] = (
    Rule(
        path("spec.replicas"),
        Effect.SCALES,
        "the provider grows or shrinks the pool to the new size",
        "docs/book/src/developer/providers/contracts/infra-machinepool.md",
    ),
    Rule(path("spec.clusterName"), Effect.REFUSED, "the field is immutable", _WEBHOOK),
    Rule(
        path("spec.template.spec.taints"),
        Effect.REFUSED,
        "taints are not implemented for MachinePools",
        _WEBHOOK,
    ),
    Rule(
        path("spec.template.metadata"),
        Effect.ROLLS_NONE,
        "core copies the template's labels and annotations onto the pool's Machines in place",
        f"{_PHASES} computeDesiredMachine",
    ),
    *(
        Rule(
            path(f"spec.template.spec.{name}"),
            Effect.ROLLS_NONE,
            "core passes it to no instance: the pool's Machines do not get it",
            f"{_PHASES} computeDesiredMachine",
        )
        for name in ("minReadySeconds", "readinessGates", "deletion")
    ),
    Rule(
        path("spec.providerIDList"),
        Effect.ROLLS_NONE,
        "the MachinePool controller writes it from the infra pool: a value applied is replaced",
        f"{_PHASES} reconcileInfrastructure",
    ),
    Rule(
        path("metadata.labels"),
        Effect.ROLLS_NONE,
        "the MachinePool's own labels reach no instance (only the template's are copied)",
        f"{_PHASES} computeDesiredMachine",
    ),
    Rule(
        (*_ANNOTATIONS, "cluster.x-k8s.io/paused"),
        Effect.ROLLS_NONE,
        "pauses the pool's reconciliation: nothing rolls or scales while it is set",
        "util/annotations/helpers.go IsPaused",
    ),
    *(
        Rule(
            (*_ANNOTATIONS, f"cluster.x-k8s.io/cluster-api-autoscaler-node-group-{bound}-size"),
            Effect.SCALES,
            "the webhook clamps spec.replicas into cluster-autoscaler's new bounds",
            f"{_WEBHOOK} calculateMachinePoolReplicas",
        )
        for bound in ("min", "max")
    ),
)

# The bootstrap config's own labels and annotations: no controller reads them for the pool.
BOOTSTRAP_METADATA = Rule(
    path("metadata"),
    Effect.ROLLS_NONE,
    "the bootstrap config's metadata reaches no instance",
    "bootstrap/kubeadm/reconcilers/kubeadmconfig/kubeadmconfig_controller.go",
)

# CABPK writes a pool's data Secret once, and again only when it rotates the pool's join token.
_CABPK = "bootstrap/kubeadm/reconcilers/kubeadmconfig/kubeadmconfig_controller.go"
SAME_NAME = (
    "cluster-api#10496, #8858: a bootstrap config changed under the same name is not rolled out; "
    "create it under a new name and point spec.template.spec.bootstrap.configRef at it"
)
SAME_NAME_REASON = (
    "CABPK writes the new bootstrap data only when it next rotates the pool's join token "
    f"({_CABPK} rotateMachinePoolBootstrapToken), and then only instances made after it get it"
)


def bootstrap_rule(why: str, source: str) -> Rule:
    """A bootstrap config's spec changed under the same name: nothing rolls (#10496, #8858)."""
    return Rule(
        ("spec",),
        Effect.ROLLS_NONE,
        f"{SAME_NAME_REASON}; {why}",
        f"{_CABPK}; {source}",
        surprise=SAME_NAME,
    )


def covering(rules: tuple[Rule, ...], changed: tuple[str | int, ...]) -> Rule | None:
    """The rule for a changed field: the longest whose field it is or is under (list indices
    are not part of a rule's field)."""
    keys = tuple(k for k in changed if isinstance(k, str))
    best: Rule | None = None
    for rule in rules:
        size = len(rule.field)
        if keys[:size] == rule.field and (best is None or size > len(best.field)):
            best = rule
    return best
