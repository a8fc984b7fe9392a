"""What applying a manifest does to each pool (`diff`): every changed field of its MachinePool,
infra pool and bootstrap config judged by the provider registry's "what rolls" facts
(providers/rolls.py), the pool's consequence (the worst of its fields'), how a roll would go, and
who applies the pool from outside.

A field no fact covers is an unknown effect, never "rolls none"; a fact that depends on the infra
pool (a pinned image) is unknown when the infra pool was not read. Pure: the objects as read and
as they would be in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubectl_machinepool.base.apiversion import CAPI_GROUP, group_of
from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.model.manifestdiff import (
    Change,
    FieldPath,
    diff_name,
    dotted,
    object_diff,
    value_at,
)
from kubectl_machinepool.model.ownership import Applier, appliers
from kubectl_machinepool.plans.rolling import Budgets, Roll, roll_of
from kubectl_machinepool.providers.records import Provider
from kubectl_machinepool.providers.registry import infra_pool
from kubectl_machinepool.providers.rolls import (
    BOOTSTRAP_METADATA,
    CORE,
    WORST_FIRST,
    Effect,
    Rule,
    Verdict,
    covering,
    verdict,
)

BOOTSTRAP_GROUP = "bootstrap.cluster.x-k8s.io"
POOL, INFRA, BOOTSTRAP = "MachinePool", "infra pool", "bootstrap config"


@record
class Ref:
    group: str
    kind: str
    namespace: str
    name: str


def ref_of(obj: RawObject) -> Ref:
    meta = mapping(obj.get("metadata"))
    return Ref(
        group_of(text(obj.get("apiVersion")) or ""),
        text(obj.get("kind")) or "",
        text(meta.get("namespace")) or "",
        text(meta.get("name")) or "",
    )


@record
class Compared:
    """One manifest's object, compared: as read (None: it does not exist), as it would be after
    the apply (None when the server refused it), how it was compared, and the fields that could
    not be compared (an export keeps only some)."""

    manifest: RawObject
    live: RawObject | None
    result: RawObject | None
    how: str
    refused: str | None = None
    not_compared: tuple[FieldPath, ...] = ()


@record
class FieldChange:
    path: FieldPath
    before: Any
    after: Any
    verdict: Verdict
    # False: not in the export compared against; its verdict is what it does if it changed.
    compared: bool = True


@record
class ObjectChanges:
    ref: Ref
    role: str
    how: str
    fields: tuple[FieldChange, ...]
    # Changed fields past the diff's bound, not listed.
    more: int = 0
    created: Verdict | None = None
    refused: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.fields or self.more or self.created or self.refused)


@record
class PoolConsequence:
    namespace: str
    name: str
    infra_kind: str | None
    effect: Effect
    # The field that decides, and why.
    decided_by: str
    reason: str
    source: str
    surprise: str | None
    objects: tuple[ObjectChanges, ...]
    roll: Roll | None
    appliers: tuple[Applier, ...]


@record
class DiffResult:
    pools: tuple[PoolConsequence, ...]
    # Infra pools and bootstrap configs no MachinePool refers to.
    unattached: tuple[ObjectChanges, ...]

    @property
    def changed(self) -> bool:
        return any(o.changed for p in self.pools for o in p.objects) or any(
            o.changed for o in self.unattached
        )

    @property
    def exit_code(self) -> int:
        """--exit-code: 0 no change, 1 changes that do not roll, 2 changes that roll, 3 refused."""
        refused = any(o.refused for p in self.pools for o in p.objects)
        if refused or any(o.refused for o in self.unattached):
            return 3
        if any(p.effect.rolls for p in self.pools):
            return 2
        return 1 if self.changed else 0


def _ref_in(obj: RawObject | None, *field: str) -> tuple[str, str, str] | None:
    """(group, kind, name) of a MachinePool's template reference, in either generation."""
    ref = mapping(dig(obj, "spec", "template", "spec", *field))
    kind, name = text(ref.get("kind")), text(ref.get("name"))
    if not kind or not name:
        return None
    group = text(ref.get("apiGroup")) or group_of(text(ref.get("apiVersion")) or "")
    return group, kind, name


def _bootstrap_ref(obj: RawObject | None) -> tuple[str, str, str] | None:
    return _ref_in(obj, "bootstrap", "configRef")


def pool_object(obj: RawObject) -> bool:
    """A MachinePool, an infra pool (a kind the registry knows, or one named so) or a
    bootstrap config: what diff compares."""
    ref = ref_of(obj)
    if ref.group == CAPI_GROUP:
        return ref.kind == POOL
    if ref.group == BOOTSTRAP_GROUP:
        return True
    return infra_pool(ref.group, ref.kind) is not None or ref.kind.endswith("MachinePool")


def _unknown(kind: str) -> Verdict:
    return Verdict(
        Effect.UNKNOWN, f"no fact about this field of {kind} is in the provider registry", ""
    )


def _judged(rule: Rule | None, kind: str, infra: RawObject | None, infra_read: bool) -> Verdict:
    if rule is None:
        return _unknown(kind)
    if rule.when and not infra_read:
        fields = ", ".join(dotted(w.field) for w in rule.when)
        return Verdict(
            Effect.UNKNOWN,
            f"the infra pool was not read, and whether it sets {fields} decides",
            rule.source,
            rule.surprise,
        )
    return verdict(rule, infra)


def rules_for(role: str, provider: Provider | None) -> tuple[Rule, ...]:
    """The facts that judge a field of an object in this role of a pool of this provider."""
    rolls = provider.rolls if provider else None
    if role == POOL:
        return (*(rolls.pool if rolls else ()), *CORE)
    if role == INFRA:
        return rolls.infra if rolls else ()
    return ((rolls.bootstrap,) if rolls and rolls.bootstrap else ()) + (BOOTSTRAP_METADATA,)


_NEW = {
    POOL: Verdict(Effect.SCALES, "a new pool: the provider creates its instances", ""),
    INFRA: Verdict(Effect.ROLLS_NONE, "a new infra pool: only a MachinePool naming it uses it", ""),
    BOOTSTRAP: Verdict(
        Effect.ROLLS_NONE, "a new bootstrap config: only a MachinePool naming it uses it", ""
    ),
}


def object_changes(
    compared: Compared,
    role: str,
    provider: Provider | None,
    infra: RawObject | None,
    *,
    infra_read: bool,
) -> ObjectChanges:
    ref = ref_of(compared.manifest)
    if compared.refused is not None or compared.result is None:
        return ObjectChanges(ref, role, compared.how, (), refused=compared.refused or "")
    if compared.live is None:
        return ObjectChanges(ref, role, compared.how, (), created=_NEW[role])
    rules = rules_for(role, provider)
    kind = provider.kind if provider and role != BOOTSTRAP else ref.kind

    def judged(change: Change) -> Verdict:
        return _judged(covering(rules, change.path), kind, infra, infra_read)

    found = object_diff(compared.live, compared.result)
    fields = [FieldChange(c.path, c.before, c.after, judged(c)) for c in found.changes]
    for path in compared.not_compared:
        change = Change(path, None, None)
        rule_verdict = judged(change)
        said = f"if it changed (the export does not keep it): {rule_verdict.reason}"
        fields.append(
            FieldChange(
                path,
                None,
                value_at(compared.manifest, path),
                Verdict(rule_verdict.effect, said, rule_verdict.source, rule_verdict.surprise),
                compared=False,
            )
        )
    fields.sort(key=lambda f: tuple((isinstance(k, str), k) for k in f.path))
    return ObjectChanges(ref, role, compared.how, tuple(fields), found.more)


def _worst(objects: Iterable[ObjectChanges]) -> tuple[str, Verdict] | None:
    """The deciding field and its verdict: the worst effect, the first such field."""
    found: list[tuple[str, Verdict]] = []
    for obj in objects:
        where = f"{obj.ref.kind} {obj.ref.name}"
        if obj.refused is not None:
            found.append((where, Verdict(Effect.REFUSED, obj.refused, "")))
        if obj.created:
            found.append((where, obj.created))
        found += [(f"{where} {dotted(f.path)}", f.verdict) for f in obj.fields]
        if obj.more:
            found.append((where, _unknown(obj.ref.kind)))
    if not found:
        return None
    return min(found, key=lambda pair: WORST_FIRST.index(pair[1].effect))


def consequences(
    compared: Sequence[Compared],
    live_pools: Sequence[RawObject],
    live_infra: Mapping[tuple[str, str, str, str], RawObject | None],
    budgets: Mapping[tuple[str, str], Budgets],
) -> DiffResult:
    """Each pool the manifest touches, judged. live_pools: the MachinePools of the manifest's
    namespaces as read; live_infra: each of their infra pools by (namespace, group, kind,
    name), None when it could not be read; budgets: by (namespace, cluster)."""
    by_ref = {ref_of(c.manifest): c for c in compared}
    pools: dict[tuple[str, str], RawObject] = {}
    for pool in live_pools:
        ref = ref_of(pool)
        pools[(ref.namespace, ref.name)] = pool
    for c in compared:
        ref = ref_of(c.manifest)
        if ref.group == CAPI_GROUP and ref.kind == POOL:
            pools[(ref.namespace, ref.name)] = c.result or c.manifest
    reads = _Reads(by_ref, live_infra, budgets, set())
    results = []
    for (namespace, name), desired in sorted(pools.items()):
        key = Ref(CAPI_GROUP, POOL, namespace, name)
        live = next((p for p in live_pools if ref_of(p) == key), None)
        mine = _pool(key, desired, live, reads)
        if mine is not None:
            results.append(mine)
    unattached = [
        object_changes(c, _role(ref), infra_pool(ref.group, ref.kind), None, infra_read=False)
        for ref, c in sorted(by_ref.items(), key=lambda pair: diff_name(pair[1].manifest))
        if ref not in reads.used and ref.kind != POOL
    ]
    return DiffResult(tuple(results), tuple(unattached))


def _role(ref: Ref) -> str:
    return BOOTSTRAP if ref.group == BOOTSTRAP_GROUP else INFRA


@record(slots=False)
class _Reads:
    by_ref: Mapping[Ref, Compared]
    live_infra: Mapping[tuple[str, str, str, str], RawObject | None]
    budgets: Mapping[tuple[str, str], Budgets]
    # The manifest's objects some pool has taken.
    used: set[Ref]


def _pool(
    pool_ref: Ref, desired: RawObject, live: RawObject | None, reads: _Reads
) -> PoolConsequence | None:
    namespace, name, by_ref = pool_ref.namespace, pool_ref.name, reads.by_ref
    infra_ref = _ref_in(desired, "infrastructureRef") or _ref_in(live, "infrastructureRef")
    provider = infra_pool(infra_ref[0], infra_ref[1]) if infra_ref else None
    infra_key = (namespace, *infra_ref) if infra_ref else None
    infra_compared = (
        by_ref.get(Ref(infra_ref[0], infra_ref[1], namespace, infra_ref[2])) if infra_ref else None
    )
    infra: RawObject | None
    if infra_compared is not None:
        infra, infra_read = infra_compared.result or infra_compared.manifest, True
    else:
        infra = reads.live_infra.get(infra_key) if infra_key else None
        infra_read = infra is not None
    members: list[tuple[Compared, str]] = []
    if pool_ref in by_ref:
        members.append((by_ref[pool_ref], POOL))
    if infra_compared is not None and infra_ref:
        members.append((infra_compared, INFRA))
    configs = {c for c in (_bootstrap_ref(desired), _bootstrap_ref(live)) if c is not None}
    for group, kind, config in sorted(configs):
        found = by_ref.get(Ref(group, kind, namespace, config))
        if found is not None:
            members.append((found, BOOTSTRAP))
    if not members:
        return None
    reads.used.update(ref_of(c.manifest) for c, _ in members)
    objects = tuple(
        object_changes(c, role, provider, infra, infra_read=infra_read)
        for c, role in sorted(members, key=lambda m: diff_name(m[0].manifest))
    )
    worst = _worst(objects)
    if worst is None:
        where, decided = "", Verdict(Effect.ROLLS_NONE, "nothing changes", "")
    else:
        where, decided = worst
    roll = None
    if decided.effect in (Effect.ROLLS_ALL, Effect.MANAGED_UPGRADE):
        cluster = text(dig(desired, "spec", "clusterName")) or ""
        read = reads.budgets.get((namespace, cluster), Budgets(None, "not read"))
        roll = roll_of(provider, infra, live, read)
    return PoolConsequence(
        namespace,
        name,
        infra_ref[1] if infra_ref else None,
        decided.effect,
        where,
        decided.reason,
        decided.source,
        decided.surprise,
        objects,
        roll,
        appliers(live) if live is not None else (),
    )
