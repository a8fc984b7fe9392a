"""Each pool's consequence from the objects compared: the worst field decides, a refusal and a new
pool count, an infra pool not read leaves a pinned-image fact unknown, objects no pool names stand
apart, the roll's details, and --exit-code."""

from __future__ import annotations

import copy
import json
from typing import Any

from kubectl_machinepool.model.manifestdiff import applied
from kubectl_machinepool.plans.consequences import Compared, consequences
from kubectl_machinepool.plans.rolling import NOT_RECORDED, Budgets, blocking
from kubectl_machinepool.providers.rolls import Effect

NS = "capi-prod"
POOL: dict[str, Any] = {
    "apiVersion": "cluster.x-k8s.io/v1beta2",
    "kind": "MachinePool",
    "metadata": {"name": "workers", "namespace": NS},
    "spec": {
        "clusterName": "prod",
        "replicas": 3,
        "template": {
            "spec": {
                "version": "v1.33.4",
                "bootstrap": {
                    "configRef": {
                        "apiGroup": "bootstrap.cluster.x-k8s.io",
                        "kind": "KubeadmConfig",
                        "name": "workers",
                    }
                },
                "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "AzureMachinePool",
                    "name": "workers",
                },
            }
        },
    },
    "status": {"replicas": 3},
}
INFRA: dict[str, Any] = {
    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
    "kind": "AzureMachinePool",
    "metadata": {"name": "workers", "namespace": NS},
    "spec": {"template": {"vmSize": "Standard_D4s_v5"}},
}
INFRA_KEY = (NS, "infrastructure.cluster.x-k8s.io", "AzureMachinePool", "workers")


def _changed(obj: dict[str, Any], patch: dict[str, Any], how: str = "test") -> Compared:
    manifest = applied(copy.deepcopy(obj), patch)
    return Compared(manifest, obj, manifest, how)


def _version(version: str) -> Compared:
    return _changed(POOL, {"spec": {"template": {"spec": {"version": version}}}})


def test_the_worst_field_decides_and_exits_2() -> None:
    size = _changed(INFRA, {"spec": {"template": {"vmSize": "Standard_D8s_v5"}}})
    result = consequences([_version("v1.34.1"), size], [POOL], {INFRA_KEY: INFRA}, {})
    [pool] = result.pools
    assert (pool.effect, pool.decided_by) == (
        Effect.ROLLS_ALL,
        "MachinePool workers spec.template.spec.version",
    )
    assert [o.ref.kind for o in pool.objects] == ["MachinePool", "AzureMachinePool"]
    assert pool.roll is not None
    assert (pool.roll.instances, pool.roll.last_rollout) == (3, NOT_RECORDED)
    assert pool.roll.blocking_budgets is None
    assert result.exit_code == 2


def test_an_unread_infra_pool_leaves_a_fact_that_depends_on_it_unknown() -> None:
    result = consequences([_version("v1.34.1")], [POOL], {INFRA_KEY: None}, {})
    [pool] = result.pools
    assert pool.effect is Effect.UNKNOWN
    assert "was not read" in pool.reason
    assert result.exit_code == 2


def test_a_refusal_is_the_pools_verdict_and_exits_3() -> None:
    refused = Compared(POOL, POOL, None, "server-side dry-run apply", refused="field is immutable")
    result = consequences([refused], [POOL], {INFRA_KEY: INFRA}, {})
    assert result.pools[0].effect is Effect.REFUSED
    assert result.exit_code == 3


def test_no_change_exits_0_and_a_new_pool_scales() -> None:
    same = Compared(POOL, POOL, copy.deepcopy(POOL), "test")
    assert consequences([same], [POOL], {INFRA_KEY: INFRA}, {}).exit_code == 0
    new = json.loads(json.dumps(POOL))
    new["metadata"]["name"] = "fresh"
    result = consequences([Compared(new, None, new, "test")], [POOL], {INFRA_KEY: INFRA}, {})
    [pool] = result.pools
    assert (pool.name, pool.effect, result.exit_code) == ("fresh", Effect.SCALES, 1)


def test_objects_no_pool_names_stand_apart() -> None:
    stray = json.loads(json.dumps(INFRA))
    stray["metadata"]["name"] = "stray"
    result = consequences([_changed(stray, {"spec": {"x": 1}})], [POOL], {}, {})
    assert result.pools == ()
    [obj] = result.unattached
    assert obj.ref.name == "stray"
    assert obj.fields[0].verdict.effect is Effect.UNKNOWN


def test_the_blocking_budgets_of_the_pools_cluster_are_named() -> None:
    def pdb(name: str, allowed: int, expected: int) -> dict[str, Any]:
        status = {"disruptionsAllowed": allowed, "expectedPods": expected}
        return {"metadata": {"name": name, "namespace": "apps"}, "status": status}

    budgets = (pdb("web", 0, 2), pdb("idle", 0, 0), pdb("free", 1, 2), {"status": "junk"})
    assert blocking(budgets) == ("apps/web",)
    read = {(NS, "prod"): Budgets(budgets)}
    result = consequences([_version("v1.34.1")], [POOL], {INFRA_KEY: INFRA}, read)
    roll = result.pools[0].roll
    assert roll is not None
    assert roll.blocking_budgets == ("apps/web",)
