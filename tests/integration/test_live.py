"""describe, diagnose, diff-metadata and delete-machine judged against the real controllers.

The Cluster API v1.14 core manager (with its webhooks) and kube-controller-manager drive every
object here; support.provider plays the infrastructure provider and the kubelets, in an
Azure-like personality (AzureMachinePoolMachines, delete-machine annotation honoured) and an
AWS-like one (providerIDList only). Nothing below seeds a status: what the plugin reads is what
the controllers wrote. Each test says which controller behaviour it stands on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.live import LiveCluster
from support.livepool import INFRA_GROUP, LivePool, budgeted_pods, legacy_status, live_pool
from support.provider import AWS, AZURE, Personality
from support.run import Result, run_cli

# One xdist worker holds the live cluster; the others never start one.
pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

BOTH = pytest.mark.parametrize("personality", [AZURE, AWS], ids=lambda p: p.name)


def _written_by_users(obj: dict[str, Any]) -> tuple[Any, ...]:
    """What a client's write changes (spec, labels, annotations, finalizers), not status."""
    meta = obj["metadata"]
    return obj.get("spec"), meta.get("labels"), meta.get("annotations"), meta.get("finalizers")


Obj = dict[str, Any]


def plugin(capsys: pytest.CaptureFixture[str], pool: LivePool, *args: str) -> Result:
    kubeconfig = str(pool.live.server.admin.kubeconfig)
    return run_cli(capsys, *args, "-n", pool.namespace, "--kubeconfig", kubeconfig)


def described(capsys: pytest.CaptureFixture[str], pool: LivePool) -> Obj:
    result = plugin(capsys, pool, "describe", pool.name, "-o", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)["clusters"][0]["machinePools"][0]  # type: ignore[no-any-return]


def findings(capsys: pytest.CaptureFixture[str], pool: LivePool, *extra: str) -> dict[str, Obj]:
    result = plugin(capsys, pool, "diagnose", *extra, "-o", "json")
    assert result.code == 0, result.err
    return {f["code"]: f for f in json.loads(result.out)["findings"]}


def scaling_up_found(capsys: pytest.CaptureFixture[str], pool: LivePool) -> dict[str, Obj]:
    """Findings once MP0101 shows, with a one-second --scaling-grace."""
    return pool.wait(  # type: ignore[no-any-return]
        "MP0101 after the grace",
        lambda: (
            (f := findings(capsys, pool, pool.name, "--scaling-grace", "1s"))
            and "MP0101" in f
            and f
        ),
    )


def serious(found: dict[str, Obj]) -> set[str]:
    return {code for code, f in found.items() if f["severity"] != "info"}


def condition(obj: Obj, kind: str) -> Obj:
    """A v1beta2 condition: status.conditions, or status.v1beta2.conditions on a v1beta1 object."""
    status = obj.get("status") or {}
    if obj["apiVersion"].endswith("/v1beta1"):
        status = status.get("v1beta2") or {}
    found = [c for c in status.get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


def v1beta2_only(live: LiveCluster, why: str) -> None:
    if live.generation != "v1beta2":
        pytest.skip(f"Cluster API {live.generation}: {why}")


@BOTH
def test_scale_up_to_running(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        mp = pool.wait_running(2)
        shown = described(capsys, pool)
        assert shown["phase"] == "Running"
        assert shown["machinePoolMachines"] is bool(personality.machine_kind)
        counts = shown["counts"]
        assert (counts["desired"], counts["nodesMatched"], counts["nodesReady"]) == (2, 2, 2)
        assert counts["machines"] == (2 if personality.machine_kind else None)
        assert {i["node"]["name"] for i in shown["instances"]} == {
            ref["name"] for ref in mp["status"]["nodeRefs"]
        }
        assert not serious(findings(capsys, pool, pool.name))
        listed = plugin(capsys, pool, "list")
        assert listed.code == 0
        assert "Running" in listed.out


@BOTH
def test_instance_that_never_joins_keeps_the_pool_scaling_up(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(
        live, personality, replicas=3, setup=lambda p: p.never_join.add("pool-2")
    ) as pool:
        pool.wait(
            "ScalingUp with 2 nodeRefs",
            lambda: (
                pool.phase() == "ScalingUp"
                and len(pool.machine_pool()["status"].get("nodeRefs") or []) == 2
            ),
        )
        lost = pool.provider.pools["pool"].instances["pool-2"].provider_id
        counts = described(capsys, pool)["counts"]
        assert (counts["providerIDs"], counts["nodesMatched"]) == (3, 2)
        found = scaling_up_found(capsys, pool)
        assert lost in found["MP0101"]["message"]
        # Without Machines the v1beta2 readyReplicas copies status.replicas (3), not the Nodes.
        if not personality.machine_kind:
            status = pool.machine_pool()["status"]
            if live.generation == "v1beta2":
                assert status["readyReplicas"] == 3
                assert "MP1901" in found
            else:
                # v1.10 reports no v1beta2 counters at all: nothing to mislead.
                assert "readyReplicas" not in status["v1beta2"]
                assert "MP1901" not in found


def test_stale_provider_id_after_the_instance_vanished(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AWS, replicas=2) as pool:
        pool.wait_running(2)
        stale = pool.provider.pools["pool"].instances["pool-1"].provider_id
        with pool.provider.paused() as provider:
            provider.vanished.add("pool-1")
        gone = pool.node_name("pool-1")
        pool.wait(
            "Node gone",
            lambda: {n["metadata"]["name"] for n in pool.nodes()} == {pool.node_name("pool-0")},
        )
        if live.generation == "v1beta1":
            # v1.10 compares counts only: the reference to the deleted Node stays, Running.
            mp = pool.machine_pool()
            assert gone in {r["name"] for r in mp["status"]["nodeRefs"]}
            found = findings(capsys, pool, pool.name)
            assert gone in found["MP0702"]["instances"]
            return
        # The Node's deletion invalidates the nodeRefs: the controller recounts and waits.
        mp = pool.wait(
            "one nodeRef left",
            lambda: (
                (m := pool.machine_pool()) and len(m["status"].get("nodeRefs") or []) == 1 and m
            ),
        )
        assert stale in mp["spec"]["providerIDList"]
        assert (mp["status"]["phase"], legacy_status(mp)["readyReplicas"]) == ("ScalingUp", 1)
        shown = described(capsys, pool)
        stale_row = [i for i in shown["instances"] if i["providerID"] == stale]
        assert stale_row[0]["node"] is None
        assert stale_row[0]["healthy"] is False
        found = scaling_up_found(capsys, pool)
        assert stale in found["MP0101"]["message"]


@BOTH
def test_node_going_not_ready_is_not_recounted_by_the_controller(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        with pool.provider.paused() as provider:
            provider.not_ready.add("pool-1")
        node = pool.node_name("pool-1")
        pool.wait(
            "Node NotReady",
            lambda: (
                condition(pool.api.request("GET", f"/api/v1/nodes/{node}"), "Ready").get("status")
                == "False"
            ),
        )
        if personality.machine_kind:
            pool.wait(
                "Machine NodeHealthy False",
                lambda: (
                    condition(
                        pool.api.request("GET", pool.path("machines", "pool-1")), "NodeHealthy"
                    ).get("status")
                    == "False"
                ),
            )
        # The controller returns early while all replicas were Ready and nodeRefs match.
        mp = pool.machine_pool()
        assert (mp["status"]["phase"], legacy_status(mp)["readyReplicas"]) == ("Running", 2)
        counts = described(capsys, pool)["counts"]
        assert (counts["statusReady"], counts["nodesReady"]) == (2, 1)
        found = findings(capsys, pool, pool.name)
        assert found["MP0705"]["severity"] == "warning"
        assert found["MP0705"]["instances"] == [node]


@BOTH
def test_node_recreated_with_the_same_name(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        name = pool.node_name("pool-0")
        # Pause the pool so the stale nodeRef stays long enough to be looked at.
        paused = {"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}
        pool.patch(pool.path("machinepools", pool.name), paused)
        pool.wait(
            "paused", lambda: condition(pool.machine_pool(), "Paused").get("status") == "True"
        )
        with pool.provider.paused():
            old = pool.api.request("GET", f"/api/v1/nodes/{name}")["metadata"]["uid"]
            pool.api.request("DELETE", f"/api/v1/nodes/{name}")
        new = pool.wait(
            "Node back",
            lambda: (
                (uid := pool.api.request("GET", f"/api/v1/nodes/{name}")["metadata"]["uid"]) != old
                and uid
            ),
        )
        refs = {r["name"]: r["uid"] for r in pool.machine_pool()["status"]["nodeRefs"]}
        assert refs[name] == old
        shown = described(capsys, pool)
        assert shown["paused"] is True
        found = findings(capsys, pool, pool.name)
        assert "MP0001" in found  # paused: nodeRef rules are withheld, and the pause is said
        pool.patch(
            pool.path("machinepools", pool.name),
            {"metadata": {"annotations": {"cluster.x-k8s.io/paused": None}}},
        )
        pool.wait(
            "unpaused", lambda: condition(pool.machine_pool(), "Paused").get("status") == "False"
        )
        if live.generation == "v1beta2":
            # v1.12+ re-checks nodeRef uids and reassigns.
            pool.wait(
                "nodeRef uid updated",
                lambda: (
                    {r["name"]: r["uid"] for r in pool.machine_pool()["status"]["nodeRefs"]}.get(
                        name
                    )
                    == new
                ),
            )
            found = findings(capsys, pool, pool.name)
            assert "MP0701" not in found
            assert not serious(found)
        else:
            # v1.10 compares counts only: the stale reference stays.
            found = findings(capsys, pool, pool.name)
            assert found["MP0701"]["severity"] == "warning"
            assert found["MP0701"]["instances"] == [name]


def _pod_names(pool: LivePool) -> set[str]:
    pods = pool.api.request("GET", pool.path("pods", group=""))["items"]
    return {p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp")}


def test_replace_drains_through_real_budgets_and_a_replacement_follows(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AZURE, replicas=2) as pool:
        pool.wait_running(2)
        budgeted_pods(pool)
        refused = plugin(capsys, pool, "delete-machine", "pool-0", "--yes", "--no-wait")
        assert refused.code == 3
        assert "blocked (pods blocked)" in refused.out
        assert "free" not in refused.out
        untouched = pool.api.request("GET", pool.path("machines", "pool-0"))["metadata"]
        assert not untouched.get("deletionTimestamp")

        done = plugin(
            capsys, pool, "delete-machine", "pool-0", "--yes", "--no-wait", "--drain-timeout", "5s"
        )
        assert done.code == 0, done.err
        machine = pool.wait(
            "Machine draining",
            lambda: (
                (m := pool.api.request("GET", pool.path("machines", "pool-0")))
                and condition(m, "Deleting").get("reason") == "DrainingNode"
                and m
            ),
        )
        if live.generation == "v1beta2":
            assert machine["spec"]["deletion"]["nodeDrainTimeoutSeconds"] == 5
        else:
            assert machine["spec"]["nodeDrainTimeout"] == "5s"
        shown = {
            i["machine"]["name"]: i for i in described(capsys, pool)["instances"] if i["machine"]
        }
        assert shown["pool-0"]["machine"]["deletionTimestamp"]
        # The Machine controller evicts what the budgets allow; the kubelet stand-in lets it go.
        pool.wait("free evicted", lambda: "free" not in _pod_names(pool))
        assert {"blocked", "free-twin"} <= _pod_names(pool)

        # Past the drain timeout: infra machine, instance and Node go; the VMSS grows back.
        pool.wait_left_with({"pool-1", "pool-2"}, timeout=150)
        assert not serious(findings(capsys, pool, pool.name))


def test_scale_down_removes_exactly_the_marked_instance(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AZURE, replicas=3) as pool:
        pool.wait_running(3)
        done = plugin(
            capsys, pool, "delete-machine", "pool-1", "--scale-down", "--yes", "--no-wait"
        )
        assert done.code == 0, done.err
        mp = pool.wait_left_with({"pool-0", "pool-2"}, timeout=120)
        assert mp["spec"]["replicas"] == 2
        # status.versions may still hold the count from before the scale-down (seen with v1.14.2
        # on an idle machine) or already the new one (when the controller reconciled again before
        # this read, as on a busy machine): the plugin counts kubelets from the Nodes instead.
        if live.generation == "v1beta2":
            versions = mp["status"]["versions"]
            assert versions in [[{"replicas": n, "version": "v1.36.3"}] for n in (2, 3)]
        assert described(capsys, pool)["kubeletVersions"] == [{"version": "v1.36.3", "nodes": 2}]
        assert not serious(findings(capsys, pool, pool.name))


def test_delete_machine_refuses_a_pool_without_machines(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AWS, replicas=2) as pool:
        pool.wait_running(2)
        # The controllers write status meanwhile: a refusal must leave the rest alone.
        before = _written_by_users(pool.machine_pool())
        node = pool.node_name("pool-1")
        for mode in ("--scale-down", "--replace"):
            refused = plugin(capsys, pool, "delete-machine", "--node", node, mode, "--yes")
            assert refused.code == 3
            assert "the pool has no MachinePool Machines" in refused.err
            assert "Then:" not in refused.out  # nothing is written, so nothing follows
        assert _written_by_users(pool.machine_pool()) == before


@BOTH
def test_template_labels_reach_machines_and_only_synced_ones_reach_nodes(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(live, personality, replicas=2, labels={"team": "a"}) as pool:
        pool.wait_running(2)
        labels = {"team": "b", "node-role.kubernetes.io/worker": ""}
        pool.patch(
            pool.path("machinepools", pool.name),
            {"spec": {"template": {"metadata": {"labels": labels}}}},
        )
        if personality.machine_kind:
            # The MachinePool controller re-applies Machines; the Machine controller syncs the
            # node-role domain to Nodes.
            pool.wait(
                "labels on Machines and Nodes",
                lambda: (
                    all(m["metadata"]["labels"].get("team") == "b" for m in pool.machines())
                    and all(
                        "node-role.kubernetes.io/worker" in n["metadata"]["labels"]
                        for n in pool.nodes()
                    )
                ),
            )
        result = plugin(capsys, pool, "diff-metadata", pool.name, "-o", "json")
        assert result.code == 0, result.err
        keys = {k["key"]: k for k in json.loads(result.out)["machinePools"][0]["keys"]}
        role, team = keys["node-role.kubernetes.io/worker"], keys["team"]
        assert team["reachesNodes"] is False
        if personality.machine_kind:
            assert role["reachesNodes"] is True
            assert {a["state"] for a in role["machines"] + role["nodes"]} == {"present"}
            assert {a["state"] for a in team["machines"]} == {"present"}
        else:
            assert role["reachesNodes"] is False
            assert role["machines"] == []
            assert not any(
                "node-role.kubernetes.io/worker" in n["metadata"]["labels"] for n in pool.nodes()
            )


def test_infra_machine_deleted_behind_the_machine(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AZURE, replicas=2) as pool:
        pool.wait_running(2)
        pool.api.request(
            "DELETE", pool.path("azuremachinepoolmachines", "pool-0", group=INFRA_GROUP)
        )
        machine = pool.wait(
            "Machine failed",
            lambda: (
                (m := pool.api.request("GET", pool.path("machines", "pool-0")))
                and "has been deleted after" in legacy_status(m).get("failureMessage", "")
                and m
            ),
        )
        if live.generation == "v1beta2":
            assert condition(machine, "InfrastructureReady")["reason"] == "ObjectDeleted"
        found = findings(capsys, pool, pool.name)
        assert found["MP1601"]["instances"] == ["pool-0"]
        assert "delete the Machine" in found["MP1601"]["message"]


@BOTH
def test_machine_pool_deletion(
    live: LiveCluster, capsys: pytest.CaptureFixture[str], personality: Personality
) -> None:
    with live_pool(live, personality, replicas=2) as pool:
        pool.wait_running(2)
        pool.api.request("DELETE", pool.path("machinepools", pool.name))
        pool.wait(
            "MachinePool gone",
            lambda: pool.api.request("GET", pool.path("machinepools"))["items"] == [],
        )
        result = plugin(capsys, pool, "diagnose", "--cluster", "work", "-o", "json")
        assert result.code == 0, result.err
        found = json.loads(result.out)["findings"]
        if personality.machine_kind:
            # Machines go by garbage collection; the Machine controller deletes their Nodes.
            pool.wait("Machines and Nodes gone", lambda: pool.nodes() == pool.machines() == [])
        else:
            # Nothing removes Nodes whose providerIDs were still listed when the pool went.
            assert len(pool.nodes()) == 2
            orphans = [f for f in found if f["code"] == "MP1001"]
            assert sorted(f["subject"] for f in orphans) == sorted(
                f"Node {n['metadata']['name']}" for n in pool.nodes()
            )


def test_cluster_deletion_takes_the_pool_and_leaves_the_workload_nodes(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    with live_pool(live, AZURE, replicas=2) as pool:
        pool.wait_running(2)
        pool.api.request("DELETE", pool.path("clusters", "work"))
        pool.wait(
            "Cluster, pool and Machines gone",
            lambda: (
                pool.api.request("GET", pool.path("clusters"))["items"] == []
                and pool.api.request("GET", pool.path("machinepools"))["items"] == []
                and pool.machines() == []
            ),
        )
        # With the Cluster deleting, the Machine controller skips drain and Node deletion: the
        # workload cluster is expected to go with it.
        assert len(pool.nodes()) == 2
        result = plugin(capsys, pool, "describe", "--cluster", "work")
        # The Cluster named is gone: not found, as any named object that is not there.
        assert (result.code, result.out) == (1, "")
        assert 'clusters.cluster.x-k8s.io "work" not found' in result.err


def test_kubelet_without_pressure_conditions_keeps_v1beta2_counters_at_zero(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    v1beta2_only(live, "v1beta1 NodeHealthy does not need the pressure conditions")

    def setup(provider: Any) -> None:
        provider.pressure_conditions = False

    with live_pool(live, AZURE, replicas=2, setup=setup) as pool:
        pool.wait(
            "Nodes matched",
            lambda: (
                legacy_status(pool.machine_pool()).get("readyReplicas") == 2
                and all(
                    condition(m, "NodeHealthy").get("status") == "Unknown" for m in pool.machines()
                )
                and len(pool.machines()) == 2
            ),
        )
        mp = pool.machine_pool()
        assert mp["status"].get("readyReplicas", 0) == 0
        counts = described(capsys, pool)["counts"]
        assert (counts["statusReady"], counts["nodesReady"]) == (2, 2)
        found = findings(capsys, pool, pool.name)
        assert sorted(found["MP1903"]["instances"]) == sorted(
            n["metadata"]["name"] for n in pool.nodes()
        )
        assert "MP1901" not in found  # that one is about pools without Machines


def test_infra_pool_with_only_the_v1beta2_readiness_field_is_never_provisioned(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    def setup(provider: Any) -> None:
        provider.pool_ready_fields = ("provisioned",)

    with live_pool(live, AWS, replicas=1, setup=setup) as pool:
        infra_path = pool.path("awsmachinepools", pool.name, group=INFRA_GROUP)
        pool.wait(
            "the provider reports provisioned",
            lambda: (
                (pool.api.request("GET", infra_path).get("status") or {})
                .get("initialization", {})
                .get("provisioned")
            ),
        )
        # The MachinePool controller reads status.ready only (external.IsReady): it watches the
        # infra pool, yet never takes it as provisioned.
        found = pool.wait(
            "MP0401 naming the field",
            lambda: (f := findings(capsys, pool, pool.name)) and "MP0401" in f and f,
        )
        assert (
            "sets status.initialization.provisioned but not status.ready"
            in found["MP0401"]["message"]
        )
        status = pool.machine_pool()["status"]
        if live.generation == "v1beta2":
            assert status["initialization"]["infrastructureProvisioned"] is False
        else:
            assert not status.get("infrastructureReady")
        assert not status.get("nodeRefs")
        assert described(capsys, pool)["infrastructurePool"]["ready"] is False
