"""Rules about the infra pool and the bootstrap config (R4, R5, R6, R13, R15, R22)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from kubectl_machinepool.base.fields import RawObject, dig, flag, mapping, text
from kubectl_machinepool.diagnostics import remedies
from kubectl_machinepool.diagnostics.core import (
    CAPA,
    CAPI,
    CAPZ,
    CapiVersion,
    Context,
    Finding,
    Rule,
    Severity,
    pool_subject,
)
from kubectl_machinepool.model.description import PoolDescription
from kubectl_machinepool.model.listing import targets_off
from kubectl_machinepool.model.versionskew import minor, release_minor
from kubectl_machinepool.providers.registry import infra_pool_of
from kubectl_machinepool.providers.targets import Target

V1_11, V1_15 = (1, 11, 0), (1, 15, 0)


def infrastructure_not_ready(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    raw = ctx.raw_pool(pool)
    provisioned = flag(dig(raw, "status", "initialization", "infrastructureProvisioned"))
    if provisioned is None:
        provisioned = flag(dig(raw, "status", "infrastructureReady"))
    cond = mp.conditions.get("InfrastructureReady")
    not_ready = provisioned is False or (cond is not None and cond.status == "False")
    if not not_ready:
        return
    reason = cond.reason if cond and cond.reason else "infrastructure not provisioned"
    # A missing infra pool is an error whether or not the pool ever had Nodes.
    if reason == "IncorrectExternalRef":
        ref = mp.infrastructure_ref
        what = f"{ref.kind} {ref.name}" if ref else "the infra pool"
        message = f"InfrastructureReady is False (IncorrectExternalRef): {what} no longer exists"
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.ERROR)
        return
    ref = mp.infrastructure_ref
    infra = ctx.raw(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
    if flag(dig(infra, "status", "ready")) is True:
        # The controller freezes the pool only while the infra pool's status.ready is false;
        # the condition copies the infra pool's Ready condition, which a managed pool sets
        # False while its service updates it.
        return
    contract_only = (
        flag(dig(infra, "status", "initialization", "provisioned")) is True
        and flag(dig(infra, "status", "ready")) is not True
    )
    if not mp.node_refs and not contract_only:
        return
    message = f"InfrastructureReady is False ({reason})"
    if mp.node_refs:
        message += (
            f" while {len(mp.node_refs)} Nodes are referenced: spec.providerIDList and "
            "status.replicas are frozen until the infra pool is ready again"
        )
    if contract_only and ref:
        message += (
            f"; {ref.kind} {ref.name} sets status.initialization.provisioned but not status.ready, "
            "the only readiness the MachinePool controller reads"
        )
    yield rule.finding(pool, pool_subject(pool), message)


def _core_visible_failure(raw: RawObject | None) -> str | None:
    """The only failure fields core reads from provider objects: top-level status.failure*."""
    status = mapping(dig(raw, "status"))
    parts = [text(status.get("failureReason")), text(status.get("failureMessage"))]
    return ": ".join(p for p in parts if p) or None


def provider_failure_panic(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    failing = []
    for ref in (mp.infrastructure_ref, mp.bootstrap_ref):
        failure = _core_visible_failure(
            ctx.raw(ref.api_group, ref.kind, mp.namespace, ref.name) if ref else None
        )
        if ref is not None and failure:
            failing.append(f"{ref.kind} {ref.name} reports failure {failure!r}")
    if not failing:
        return
    affected = ctx.capi.between(V1_11, V1_15)
    evidence = "; ".join(failing)
    stale = ""
    if (
        mp.generation is not None
        and mp.observed_generation is not None
        and mp.observed_generation < mp.generation
    ):
        stale = f"; the pool's status is stale (observedGeneration {mp.observed_generation} < generation {mp.generation})"
    if affected:
        message = (
            f"{evidence}: Cluster API {ctx.capi} ({ctx.capi.source}) panics reconciling this pool, "
            f"so its nodeRefs, providerIDList, counters and conditions stop updating{stale}"
        )
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.ERROR)
        return
    if ctx.capi.between((0, 0, 0), V1_11):
        return
    if ctx.capi.known:
        version = (
            f"Cluster API {ctx.capi} ({ctx.capi.source}) is newer than the affected v1.11.0 to "
            "v1.14.x, but whether it carries the fix (PR #14234) is not known to this tool"
        )
    else:
        version = f"the version is unknown ({ctx.capi.source})"
    message = (
        f"{evidence}: if Cluster API lacks the fix its MachinePool controller panics on this and "
        f"the pool's status goes stale; {version}{stale}"
    )
    yield rule.finding(pool, pool_subject(pool), message, severity=Severity.WARNING)


def stale_failure(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp, infra = pool.pool, pool.infra
    if not mp.failure or infra is None or infra.failure or infra.ready is not True:
        return
    message = (
        f"the pool still records failure {mp.failure!r}, but {infra.kind} {infra.name} is ready "
        "and reports no failure: the failure fields are never cleared"
    )
    yield rule.finding(pool, pool_subject(pool), message)


def _kubelet_split(
    pool: PoolDescription, wanted: tuple[int, int], off: set[tuple[int, int]]
) -> str:
    """The pool's kubelets by minor, when some run the template's minor and some a target's."""
    counted = Counter(
        m for i in pool.instances if i.node and (m := minor(i.node.kubelet_version)) is not None
    )
    if not counted.get(wanted) or not any(counted.get(m) for m in off):
        return ""
    return " and ".join(f"{n} at {m[0]}.{m[1]}" for m, n in sorted(counted.items()))


def _two_steps(pool: PoolDescription, off: list[Target]) -> str:
    kind = pool.infra.kind if pool.infra else off[0].kind
    infra = f"{kind} {pool.pool.namespace}/{pool.infra.name if pool.infra else '?'}"
    asked = [t for t in off if not t.field.startswith("status.")]
    if not asked:
        fields = " and ".join(dict.fromkeys(f"{t.kind} {t.field}" for t in off))
        return (
            f"{fields} says what the provider last put in the cloud: it moves to the "
            "MachinePool's release on the provider's next update; check the infra pool's "
            "conditions (CAPZ: ScaleSetModelUpdated) and the provider's logs."
        )
    if all(t.kind != kind for t in asked):
        return (
            f"{kind}'s provider asked the cloud for {asked[0].value} ({asked[0].kind} "
            f"{asked[0].field}): for AKS, the control plane's auto-upgrade version when it is "
            "newer than the MachinePool's; set the MachinePool's spec.template.spec.version to "
            "the release the cloud runs, so that both say the same."
        )
    fields = " and ".join(dict.fromkeys(t.field for t in asked))
    if any(t.deployed for t in asked):
        return (
            f"The provider deploys {fields} of {infra}, never the MachinePool's version: set "
            "both to the release you want (with an image for that release), pausing the infra "
            "pool (cluster.x-k8s.io/paused) while you change them."
        )
    return (
        f"Annotate {infra} with cluster.x-k8s.io/paused, set the MachinePool's "
        f"spec.template.spec.version and {fields} to the same Kubernetes release, then remove "
        "the annotation: the provider then rolls once, to a matching pair (the workaround of "
        "CAPA#5797; every infra pool controller honours the annotation)."
    )


def version_image_mismatch(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    wanted = pool.pool.version
    wanted_minor = minor(wanted)
    off = targets_off(wanted, pool.version_targets)
    if wanted is None or wanted_minor is None or not off:
        return
    evidence = "; ".join(
        f"{t.kind} {t.field} is {t.value!r}, for Kubernetes {t.version}"
        + (" (the version the provider deploys)" if t.deployed else "")
        for t in off
    )
    message = f"the pool template wants {wanted} but {evidence}"
    off_minors = {m for t in off if (m := release_minor(t.version)) is not None}
    if split := _kubelet_split(pool, wanted_minor, off_minors):
        message += f"; the pool's kubelets are split: {split}"
    yield rule.finding(pool, pool_subject(pool), message, action=_two_steps(pool, off))


def bootstrap_data(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    cond = mp.conditions.get("BootstrapReady")
    if cond is not None and cond.status == "False" and cond.reason == "WaitingForDataSecret":
        boot = mp.bootstrap_ref
        message = f"BootstrapReady is False (WaitingForDataSecret): {boot.kind + ' ' + boot.name if boot else 'the bootstrap config'} has produced no data Secret"
        yield rule.finding(pool, pool_subject(pool), message)


def bootstrap_secret_missing(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    mp = pool.pool
    name = text(dig(ctx.raw_pool(pool), "spec", "template", "spec", "bootstrap", "dataSecretName"))
    if (
        not name
        or not ctx.snapshot.was_read("", "Secret")
        or not ctx.snapshot.secrets_listed(mp.namespace)
    ):
        return
    if ctx.raw("", "Secret", mp.namespace, name) is None:
        message = f"spec.template.spec.bootstrap.dataSecretName is {name}, but Secret {mp.namespace}/{name} does not exist: new instances get no userdata"
        yield rule.finding(pool, pool_subject(pool), message)


def _recreates_tokens(capi: CapiVersion) -> bool:
    """CABPK recreates a missing token Secret from v1.9.8 and v1.10.0 on (PR #11520)."""
    version = capi.version
    return version is not None and (version >= (1, 10, 0) or (1, 9, 8) <= version < (1, 10, 0))


def bootstrap_token_missing(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    boot = pool.pool.bootstrap_ref
    if boot is None or boot.kind != "KubeadmConfig":
        return
    raw = ctx.raw(boot.api_group, boot.kind, pool.pool.namespace, boot.name)
    token = text(dig(raw, "spec", "joinConfiguration", "discovery", "bootstrapToken", "token"))
    tokens = ctx.workload_tokens
    if not token or "." not in token or tokens is None:
        return
    secret = f"bootstrap-token-{token.split('.', 1)[0]}"
    if secret in tokens:
        return
    lead = (
        f"KubeadmConfig {boot.name} joins with token {token.split('.', 1)[0]}.…, but the workload "
        f"cluster has no Secret kube-system/{secret}"
    )
    if _recreates_tokens(ctx.capi):
        message = (
            f"{lead}: Cluster API {ctx.capi} recreates it on its next token check; until then "
            "new instances cannot join"
        )
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.INFO)
    elif ctx.capi.known:
        message = f"{lead}: Cluster API {ctx.capi} never recreates it, so new instances cannot join"
        yield rule.finding(pool, pool_subject(pool), message)
    else:
        message = (
            f"{lead}: new instances cannot join; Cluster API before v1.9.8 (v1.10.0 on the 1.10 "
            f"line) never recreates it, later versions do (version unknown: {ctx.capi.source})"
        )
        yield rule.finding(pool, pool_subject(pool), message, severity=Severity.WARNING)


def managed_pool_updating(rule: Rule, pool: PoolDescription, ctx: Context) -> Iterator[Finding]:
    infra = pool.infra
    provider = infra_pool_of(infra)
    if infra is None or provider is None or infra.ready is not True:
        return
    for signal in provider.rolling:
        cond = infra.conditions.get(signal.condition)
        if signal.updating and cond is not None and signal.says_rolling(cond.status, cond.reason):
            reason = f" ({cond.reason})" if cond.reason else ""
            message = (
                f"{infra.kind} {infra.name} reports ready while {cond.type} is {cond.status}"
                f"{reason}: the managed service is still rolling the pool"
            )
            yield rule.finding(pool, pool_subject(pool), message)


RULES = [
    Rule(
        "MP0401",
        "R4",
        "Infrastructure not ready freezes the pool",
        Severity.WARNING,
        "InfrastructureReady is False (v1beta1 conditions) or status.initialization."
        "infrastructureProvisioned is false, and the infra pool's status.ready is not true "
        "(the only field the freeze follows), while status.nodeRefs is not empty or the infra "
        "pool sets only status.initialization.provisioned (the controller reads status.ready); "
        "an error, with or without nodeRefs, when the reason is IncorrectExternalRef (the infra "
        "pool is gone)",
        "While the infra pool is not ready Cluster API stops copying spec.providerIDList and "
        "status.replicas: new instances are never matched and keep the uninitialized taint.",
        "Read the infra pool's own conditions and the provider's controller logs and fix the "
        "provider-side cause; a deleted infra pool must be recreated, or the pool replaced.",
        (CAPI + "9858", CAPZ + "4982", CAPA + "4655"),
        infrastructure_not_ready,
    ),
    Rule(
        "MP0501",
        "R5",
        "Provider failure makes the controller panic",
        Severity.ERROR,
        "the infra pool or bootstrap config reports a top-level status.failureReason or "
        "status.failureMessage (the only failure fields core reads) and the core controller is "
        "Cluster API v1.11.0 to v1.14.x (read from the capi-controller-manager image tag, or "
        "--capi-version); a warning when the version is unknown or later than v1.14.x, since "
        "the fix (PR #14234) was unreleased when this rule was written",
        "The MachinePool controller dereferences a nil pointer on every reconcile, so the pool's "
        "nodeRefs, providerIDList, counters and conditions stop updating: all it reports is stale.",
        "Fix the provider-side cause so the provider clears its failure fields; upgrade once the fix "
        "(PR #14234) is released. Treat the pool's status as stale until then.",
        (CAPI + "14234",),
        provider_failure_panic,
        needs_reconcile=True,
    ),
    Rule(
        "MP0601",
        "R6",
        "Stale failure",
        Severity.INFO,
        "the pool records failureReason/failureMessage (status.deprecated.v1beta1, or status on "
        "v1beta1), but the infra pool is ready and reports no failure",
        "Failure fields are terminal and never cleared: they describe the past. On v1.10 and older "
        "the phase also stays Failed.",
        "Read it as history; v1.11 and later no longer set phase Failed.",
        (CAPI + "7332", CAPI + "12036", CAPI + "12148"),
        stale_failure,
    ),
    Rule(
        "MP1301",
        "R13",
        "Version and image disagree",
        Severity.WARNING,
        "an infra pool field that names a Kubernetes release targets another minor than the "
        "pool's spec.template.spec.version: AWSManagedMachinePool spec.amiVersion (Amazon Linux "
        "AMI types), AzureMachinePool's CAPZ reference images (spec.template.image and "
        "status.image: compute or shared gallery ClusterAPI-f72ceb4f, marketplace cncf-upstream/"
        "capi), GCPMachinePool spec.imageFamily (CAPG's k8s-vX-Y families), "
        "AzureASOManagedMachinePool spec.resources[].spec.orchestratorVersion, or "
        "OCIManagedMachinePool spec.version (which CAPOCI deploys, so another patch counts too); "
        "the message adds how the pool's kubelets split between the two. Custom images carry "
        "arbitrary versions and are not compared",
        "Version and image are changed in two steps: the provider may roll twice, or roll a "
        "mismatched combination.",
        "Pause the infra pool (cluster.x-k8s.io/paused) while changing both, then unpause.",
        (CAPI + "7248", CAPZ + "5546", CAPA + "5797"),
        version_image_mismatch,
        remedy=remedies.PAIR,
    ),
    Rule(
        "MP1501",
        "R15",
        "Waiting for bootstrap data",
        Severity.WARNING,
        "BootstrapReady is False with reason WaitingForDataSecret",
        "Instances cannot get userdata until the bootstrap config produces its Secret.",
        "Check the bootstrap provider (for kubeadm, the KubeadmConfig's conditions and the CABPK logs).",
        (CAPI + "11034", CAPI + "12161"),
        bootstrap_data,
    ),
    Rule(
        "MP1502",
        "R15",
        "Bootstrap data Secret missing",
        Severity.ERROR,
        "spec.template.spec.bootstrap.dataSecretName names a Secret that does not exist in the "
        "pool's namespace (only when Secrets could be listed)",
        "New instances get no userdata and cannot join.",
        "Find out why the bootstrap config lost its Secret (a clusterctl move, a manual cleanup) and "
        "let the bootstrap provider recreate it.",
        (CAPI + "11034",),
        bootstrap_secret_missing,
    ),
    Rule(
        "MP1503",
        "R15",
        "Bootstrap token Secret missing",
        Severity.ERROR,
        "the KubeadmConfig joins with a bootstrap token that has no bootstrap-token-<id> Secret in "
        "the workload cluster's kube-system, and Cluster API is older than v1.9.8 (v1.10.0 on the "
        "1.10 line); a warning when the version is unknown, info on versions that recreate it",
        "kubeadm join fails with Unauthorized; providers keep creating and terminating instances.",
        "Upgrade to Cluster API v1.9.8 / v1.10.0 or later, where CABPK recreates the token, and make "
        "sure the infra provider pushes the rotated userdata.",
        (CAPI + "11034", CAPI + "11520", CAPI + "3359"),
        bootstrap_token_missing,
    ),
    Rule(
        "MP2201",
        "R22",
        "Managed pool ready while updating",
        Severity.INFO,
        "a GCPManagedMachinePool with GKEMachinePoolUpdating=True or a ROSAMachinePool with "
        "RosaMachinePoolUpgrading=True reports status.ready",
        "The provider reports ready during the managed service's upgrade; the pool is not settled.",
        "Judge completion by the Nodes' kubelet versions and the provider's updating signal.",
        (),
        managed_pool_updating,
    ),
]
