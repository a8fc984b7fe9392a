"""The shipped RBAC roles (kubectl_machinepool/rbac/), created on the real API server and bound to
fresh client-certificate users: every subcommand works with exactly them, and narrower grants
give explicit notes, never a false claim about what could not be read.

The `<cluster>-kubeconfig` Secret of each scenario is rewritten to hold the credentials of a user
bound only to the workload-cluster role, so the workload side is proven with least privilege too
(the test API server is both the management and the "workload" cluster).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.controlplane import User
from support.management import ManagementCluster, create_scenario
from support.roles import (
    DELETER,
    INFRA,
    MACHINES,
    POOL,
    READER,
    Grant,
    Obj,
    Probe,
    Seeded,
    apply,
    assert_allowed_everywhere,
    cli,
    finish_deletion,
    flat,
    grants,
    install_roles,
    narrowed,
    ok,
    one_line_error,
    seed,
    unneeded,
    unseed,
)  # fmt: skip
from support.run import Result, run_cli
from support.scenarios import SCENARIOS, core_manager

from kubectl_machinepool.cli.completion import KubectlComplete


@pytest.fixture
def roles(mgmt: ManagementCluster) -> dict[str, Obj]:
    return install_roles(mgmt)


@pytest.fixture
def seeded(mgmt: ManagementCluster, roles: dict[str, Obj]) -> Iterator[Seeded]:
    found = seed(mgmt, roles)
    yield found
    unseed(found)


def test_reader_runs_every_read_command_without_a_note(
    seeded: Seeded, roles, capsys, tmp_path
) -> None:
    ns = seeded.namespace
    reader = seeded.user("reader", roles[READER])

    table = ok(cli(capsys, reader, "list", "-n", ns)).out
    assert POOL in table
    assert "DockerMachinePool" in table
    header, row = table.splitlines()[:2]
    assert row.split()[header.split().index("MACHINES")] == "yes"  # the infra pool was read
    for fmt in ("wide", "json", "yaml", "name"):
        ok(cli(capsys, reader, "list", "-n", ns, "-o", fmt))
    # -A reads the Nodes of every Cluster on the shared server: others' may be gone.
    everywhere = cli(capsys, reader, "list", "-A", "--request-timeout", "5s")
    assert_allowed_everywhere(everywhere, ns)
    assert ns in everywhere.out

    tree = ok(cli(capsys, reader, "describe", POOL, "-n", ns, "--show-all")).out
    for name in (*MACHINES, *seeded.nodes):
        assert name in tree
    document = json.loads(ok(cli(capsys, reader, "describe", "-n", ns, "-o", "json")).out)
    assert document["notes"] == []
    assert document["clusters"][0]["nodes"] == {"read": True, "note": None}
    assert document["clusters"][0]["machinePools"][0]["machinePoolMachines"] is True
    everywhere = cli(capsys, reader, "describe", "-A", "-o", "json", "--request-timeout", "5s")
    assert_allowed_everywhere(everywhere, ns)
    mine = [c for c in json.loads(everywhere.out)["clusters"] if c["namespace"] == ns]
    assert mine[0]["nodes"]["read"] is True

    diagnosis = json.loads(ok(cli(capsys, reader, "diagnose", "-n", ns, "-o", "json")).out)
    assert diagnosis["notes"] == []
    assert diagnosis["capiVersion"]["version"] == "v1.14.2"  # from the core Deployment's image
    assert_allowed_everywhere(cli(capsys, reader, "diagnose", "-A", "--request-timeout", "5s"), ns)

    diff = ok(cli(capsys, reader, "diff-metadata", POOL, "-n", ns)).out
    assert "with MachinePool Machines: 2 Machines, 2 Nodes" in diff
    # Other tests seed core Deployments too; a real cluster has one.
    assert "args of Deployment " in diff
    assert "/capi-controller-manager)" in diff

    exported = ok(cli(capsys, reader, "export", "-n", ns, "-o", str(tmp_path / "e.tar.gz")))
    assert exported.out.startswith("exported 1 MachinePool(s), ")
    assert ok(run_cli(capsys, "describe", "-n", ns, "-f", str(tmp_path / "e.tar.gz"))).err == ""

    assert ok(run_cli(capsys, "explain", "MP0101")).out.startswith("MP0101")

    # No Provider kind on the test server (clusterctl did not install it): not a note.
    inventory = json.loads(ok(cli(capsys, reader, "providers", "-n", ns, "-o", "json")).out)
    assert inventory["providersNamedBy"] == "Deployment"
    assert [k["kind"] for k in inventory["kinds"]] == ["DockerMachinePool"]


def test_reader_alone_plans_a_deletion_and_names_the_missing_writes(
    seeded: Seeded, roles, capsys
) -> None:
    ns = seeded.namespace
    reader = seeded.user("reader-only", roles[READER])
    before = seeded.state()

    replace = cli(capsys, reader, "delete-machine", MACHINES[1], "-n", ns, "--dry-run=client")
    assert replace.code == 3, replace.out + replace.err
    assert f"refused you may not delete machines.cluster.x-k8s.io in namespace {ns}" in flat(
        replace.out
    )
    assert flat(replace.out).count("refused ") == 1  # everything else was readable and fine
    assert "warning:" not in replace.err

    scale = cli(
        capsys, reader, "delete-machine", MACHINES[1], "-n", ns, "--scale-down", "--dry-run=client"
    )
    assert scale.code == 3
    assert f"you may not patch machines.cluster.x-k8s.io in namespace {ns}" in flat(scale.out)
    assert f"you may not update machinepools/scale.cluster.x-k8s.io in namespace {ns}" in flat(
        scale.out
    )
    assert seeded.state() == before


def test_deleter_and_reader_run_every_delete_mode(seeded: Seeded, roles, capsys) -> None:
    ns = seeded.namespace
    user = seeded.user("deleter", roles[READER], roles[DELETER])
    before = seeded.state()

    for mode in ("--replace", "--scale-down"):
        plan = ok(
            cli(capsys, user, "delete-machine", MACHINES[1], "-n", ns, mode, "--dry-run=client")
        )
        assert "refused " not in flat(plan.out)
        assert "PodDisruptionBudgets were not checked" not in flat(plan.out)
        server = ok(
            cli(capsys, user, "delete-machine", MACHINES[1], "-n", ns, mode, "--dry-run=server")
        )
        assert "(server dry run)" in server.out
    by_node = ok(
        cli(capsys, user, "delete-machine", "--node", seeded.nodes[1], "-n", ns, "--dry-run=client")
    )
    assert f"Replace Machine {ns}/{MACHINES[1]}" in by_node.out
    assert seeded.state() == before

    finisher = finish_deletion(seeded, MACHINES[1])
    try:
        replaced = cli(
            capsys, user, "delete-machine", MACHINES[1], "-n", ns,
            "--drain-timeout", "5m", "--yes", "--wait", "--timeout", "1m",
        )  # fmt: skip
    finally:
        finisher.join()
    assert replaced.code == 0, replaced.out + replaced.err
    assert replaced.err == (
        f"Following Machine {ns}/{MACHINES[1]} until it is gone (Ctrl-C stops following, not the "
        "deletion)...\n"
    )
    assert replaced.out.splitlines()[-1] == f"machine.cluster.x-k8s.io/{MACHINES[1]} deleted"

    scaled = ok(
        cli(
            capsys,
            user,
            "delete-machine",
            MACHINES[0],
            "-n",
            ns,
            "--scale-down",
            "--yes",
            "--no-wait",
        )
    )
    assert f"machine.cluster.x-k8s.io/{MACHINES[0]} annotated" in scaled.out
    assert f"machinepool.cluster.x-k8s.io/{POOL} scaled" in scaled.out


def complete(user: User, *words: str) -> list[str]:
    """kubectl's completion protocol, in-process: the candidates, without the directive."""
    lines = KubectlComplete([words[0], "--kubeconfig", str(user.kubeconfig), *words[1:]]).complete()
    *values, directive = lines.splitlines()
    assert directive.startswith(":")
    return [v.split("\t")[0] for v in values]


@pytest.fixture
def completion_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh completion cache: an answer cached by another test must not stand in."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_reader_completes_every_live_value(seeded: Seeded, roles, completion_cache) -> None:
    ns = seeded.namespace
    reader = seeded.user("completer", roles[READER])
    assert complete(reader, "describe", "-n", ns, "") == [POOL]
    assert complete(reader, "describe", "-n", ns, "--cluster", "") == ["dev"]
    assert complete(reader, "delete-machine", "-n", ns, "--pool", POOL, "") == sorted(MACHINES)
    assert complete(reader, "delete-machine", "-n", ns, "--node", "") == sorted(seeded.nodes)
    assert ns in complete(reader, "list", "-n", "t-")


# -- narrower grants ------------------------------------------------------------------------


def test_reader_bound_in_one_namespace(seeded: Seeded, roles, capsys, completion_cache) -> None:
    ns = seeded.namespace
    user = seeded.user("ns-reader", roles[READER], namespace=ns)

    ok(cli(capsys, user, "list", "-n", ns))
    tree = ok(cli(capsys, user, "describe", "-n", ns, "--show-all")).out
    assert seeded.nodes
    assert all(node in tree for node in seeded.nodes)
    diff = ok(cli(capsys, user, "diff-metadata", "-n", ns)).out
    # The core controller lives in some namespace: it is searched cluster-wide, which a
    # RoleBinding cannot grant; diff-metadata says where its regexes came from instead.
    assert "the capi-controller-manager Deployment was not read" in diff
    diagnosis = cli(capsys, user, "diagnose", "-n", ns)
    assert diagnosis.code == 0
    [note] = diagnosis.err.splitlines()
    assert note.startswith(
        "warning: cannot read Deployment objects, so the Cluster API version is unknown: "
    )
    assert "at the cluster scope" in note

    for command in ("list", "describe", "diagnose", "diff-metadata"):
        one_line_error(
            cli(capsys, user, command, "-A"),
            f'User "{user.name}" cannot list resource "machinepools"',
            "at the cluster scope",
        )
    assert complete(user, "describe", "-n", ns, "") == [POOL]
    assert complete(user, "list", "-n", "t-") == []  # namespaces are cluster-scoped


class Claims:
    """Every false claim of one run, collected so that one failure lists them all."""

    def __init__(self) -> None:
        self.false: list[str] = []

    def absent(self, result: Result, what: str, *phrases: str) -> None:
        said = result.out + result.err
        found = [p for p in phrases if p in flat(said)]
        if found:
            self.false.append(f"{what} says {', '.join(map(repr, found))}:\n{said}")

    def expect(self, holds: bool, what: str) -> None:
        if not holds:
            self.false.append(what)

    def verify(self) -> None:
        assert not self.false, "\n\n".join(self.false)


def test_without_secrets_nodes_are_not_shown_and_nothing_is_claimed_about_them(
    seeded: Seeded, roles, capsys
) -> None:
    ns = seeded.namespace
    role = narrowed(roles[READER], f"reader-no-secrets-{ns}", lambda g: g[1] == "secrets")
    apply(seeded.mgmt, role)
    user = seeded.user("no-secrets", role, roles[DELETER])
    forbidden = (
        f'warning: Nodes of Cluster {ns}/dev are not shown: secrets "dev-kubeconfig" is forbidden: '
        f'User "{user.name}" cannot get resource "secrets"'
    )
    claims = Claims()

    tree = cli(capsys, user, "describe", "-n", ns)
    assert tree.code == 0
    assert tree.err.startswith(forbidden), tree.err
    claims.absent(tree, "describe", "NotReady", "no Node", "missing")
    # The folded row of healthy Machines: its availability would come from the unread Nodes.
    [machines_row] = [line for line in tree.out.splitlines() if "2 Machines" in line]
    claims.expect("0/2" not in machines_row, f"describe says AVAILABLE 0/2:\n{machines_row}")

    document = json.loads(cli(capsys, user, "describe", "-n", ns, "-o", "json").out)
    cluster = document["clusters"][0]
    assert cluster["nodes"]["read"] is False
    assert "forbidden" in cluster["nodes"]["note"]
    counts = cluster["machinePools"][0]["counts"]
    assert (counts["nodesMatched"], counts["nodesReady"], counts["nodesAvailable"]) == (None,) * 3
    for instance in cluster["machinePools"][0]["instances"]:
        claims.expect(instance["problems"] == [], f"describe -o json: {instance['problems']}")

    diagnosis = json.loads(cli(capsys, user, "diagnose", "-n", ns, "-o", "json").out)
    claims.expect(diagnosis["findings"] == [], f"diagnose finds {diagnosis['findings']}")

    diff = cli(capsys, user, "diff-metadata", POOL, "-n", ns)
    assert diff.err.startswith(forbidden)
    claims.absent(diff, "diff-metadata", "0 Nodes", "propagated everywhere", "missing")

    plan = cli(capsys, user, "delete-machine", MACHINES[1], "-n", ns, "--dry-run=client")
    assert plan.code == 0, plan.err
    assert "warning PodDisruptionBudgets were not checked: " in flat(plan.out)
    assert "is forbidden" in flat(plan.out)
    claims.verify()


def test_without_provider_kinds_nothing_false_is_said_about_machines(
    seeded: Seeded, roles, capsys
) -> None:
    ns = seeded.namespace
    role = narrowed(roles[READER], f"reader-no-infra-{ns}", lambda g: g[0] == INFRA)
    apply(seeded.mgmt, role)
    user = seeded.user("no-infra", role, roles[DELETER])
    cannot = "warning: cannot read DockerMachinePool objects, so "
    before = seeded.state()
    claims = Claims()

    table = cli(capsys, user, "list", "-n", ns)
    assert table.code == 0
    assert table.err.startswith(cannot + "MACHINES shows <unknown>: "), table.err
    header, row = table.out.splitlines()[:2]
    assert row.split()[header.split().index("MACHINES")] == "<unknown>"
    listed = json.loads(cli(capsys, user, "list", "-n", ns, "-o", "json").out)
    assert listed["items"][0]["summary"]["machinePoolMachines"] is None

    tree = cli(capsys, user, "describe", "-n", ns)
    assert tree.code == 0
    assert tree.err.startswith(cannot), tree.err
    assert "DockerMachinePool dev-mp-0 (not readable)" in tree.out

    diff = cli(capsys, user, "diff-metadata", POOL, "-n", ns)
    assert diff.code == 0
    assert diff.err.startswith(cannot), diff.err
    claims.absent(
        diff,
        "diff-metadata",
        "without MachinePool Machines",
        "0 Machines",
        "has no MachinePool Machines",
        "set outside Cluster API",
    )
    document = json.loads(cli(capsys, user, "diff-metadata", POOL, "-n", ns, "-o", "json").out)
    machines = document["machinePools"][0]["machinePoolMachines"]
    claims.expect(machines is None, f"diff-metadata -o json: machinePoolMachines: {machines}")

    for instance in ((MACHINES[1],), ("--node", seeded.nodes[1])):
        plan = cli(capsys, user, "delete-machine", *instance, "-n", ns, "--dry-run=client")
        what = f"delete-machine {' '.join(instance)}"
        assert plan.code != 0, plan.out + plan.err
        claims.expect("DockerMachinePool" in plan.err, f"{what} does not name the unread kind")
        claims.absent(
            plan,
            what,
            "is no instance of a MachinePool",
            "kubectl delete machine",
            "has no Machine",
        )
    assert seeded.state() == before
    claims.verify()


def test_with_no_rights_every_command_is_a_one_line_error(
    seeded: Seeded, capsys, completion_cache
) -> None:
    ns = seeded.namespace
    nobody = seeded.user("nobody")
    cannot = f'User "{nobody.name}" cannot list resource "machinepools"'
    for command in (["list"], ["describe"], ["diagnose"], ["diff-metadata"],
                    ["export", "-o", f"/tmp/never-{ns}"],
                    ["delete-machine", MACHINES[1], "--dry-run=client"]):  # fmt: skip
        one_line_error(cli(capsys, nobody, *command, "-n", ns), cannot, f'namespace "{ns}"')
    assert complete(nobody, "describe", "-n", ns, "") == []


# -- every grant is needed ------------------------------------------------------------------


CAPI = "cluster.x-k8s.io"
DESCRIBE = ("describe", "-n", "{ns}")
DIAGNOSE = ("diagnose", "-n", "{ns}")
PLAN = ("delete-machine", "{machine}", "-n", "{ns}", "--dry-run=client")
READER_PROBES: dict[Grant, Probe] = {
    (CAPI, "machinepools", "list"): Probe(("list", "-n", "{ns}"), 'cannot list resource "machinepools"'),
    (CAPI, "machinepools", "get"): Probe(("rollout", "history", POOL, "-n", "{ns}"), 'cannot get resource "machinepools"'),
    (CAPI, "clusters", "list"): Probe(DESCRIBE, "cannot read Cluster objects"),
    (CAPI, "machines", "list"): Probe(DESCRIBE, "cannot read Machine objects"),
    (CAPI, "machinehealthchecks", "list"): Probe(DESCRIBE, "cannot read MachineHealthCheck objects, so MachineHealthChecks are not shown or judged"),
    (INFRA, "*", "list"): Probe(DESCRIBE, "cannot read DockerMachinePool objects"),
    ("bootstrap.cluster.x-k8s.io", "*", "list"): Probe(DESCRIBE, "cannot read KubeadmConfig objects"),
    ("controlplane.cluster.x-k8s.io", "*", "list"): Probe(DIAGNOSE, "cannot read KubeadmControlPlane objects"),
    ("apps", "deployments", "list"): Probe(DIAGNOSE, "cannot read Deployment objects"),
    # Refused before the server looks for the kind: the note shows with or without the CRD.
    ("clusterctl.cluster.x-k8s.io", "providers", "list"): Probe(("providers", "-n", "{ns}"), "cannot read Provider objects"),
    ("", "secrets", "get"): Probe(DESCRIBE, 'secrets "dev-kubeconfig" is forbidden'),
    ("", "secrets", "list"): Probe(DIAGNOSE, "cannot read Secret objects"),
    ("", "events", "list"): Probe(DESCRIBE, lost=f"seeded event about MachinePool {POOL}"),
}  # fmt: skip
# Proven by their own tests below: the contract version (CRDs), completion (namespaces) and
# the AKS agent pools (only AKS pools need them).
ASO_AGENT_POOLS = ("containerservice.azure.com", "managedclustersagentpools", "list")
# What following watches (-w, rollout status, upgrade): test_least_privilege_follow.py.
WATCHES = {
    (CAPI, "machinepools", "watch"), (CAPI, "machines", "watch"), ("", "events", "watch"),
    (INFRA, "*", "watch"),
}  # fmt: skip
READER_ELSEWHERE = {
    ("apiextensions.k8s.io", "customresourcedefinitions", "get"),
    ("", "namespaces", "list"),
    ASO_AGENT_POOLS,
}
DELETER_PROBES: dict[Grant, Probe] = {
    (CAPI, "machines", "get"): Probe(("delete-machine", "{machine}", "-n", "{ns}", "--dry-run=server"), 'cannot get resource "machines"'),
    (CAPI, "machines", "patch"): Probe((*PLAN, "--drain-timeout", "5m"), "refused you may not patch machines.cluster.x-k8s.io"),
    (CAPI, "machines", "delete"): Probe(PLAN, "refused you may not delete machines.cluster.x-k8s.io"),
    (CAPI, "machinepools/scale", "update"): Probe((*PLAN, "--scale-down"), "refused you may not update machinepools/scale.cluster.x-k8s.io"),
}  # fmt: skip
TOKEN_ID = "kmp123"
WORKLOAD_PROBES: dict[Grant, Probe] = {
    ("", "nodes", "list"): Probe(DESCRIBE, 'nodes is forbidden: User "workload-'),
    ("", "pods", "list"): Probe(PLAN, "PodDisruptionBudgets were not checked: pods is forbidden"),
    ("policy", "poddisruptionbudgets", "list"): Probe(PLAN, "PodDisruptionBudgets were not checked: poddisruptionbudgets.policy is forbidden"),
    ("", "secrets", "list"): Probe(DIAGNOSE, lost=f"has no Secret kube-system/bootstrap-token-{TOKEN_ID}"),
    ("", "events", "list"): Probe(DESCRIBE, lost="seeded event about Node dev-dev-mp-0-x7q2p"),
    # Last: it deletes a Machine for real, and --wait follows its Node.
    ("", "nodes", "get"): Probe(("delete-machine", "{spare}", "-n", "{ns}", "--yes", "--wait", "--timeout", "1m"), 'is no longer followed: nodes "dev-dev-mp-0-k9d4m', finish=True),
}  # fmt: skip


def test_every_reader_grant_is_needed(v1beta2: ManagementCluster, capsys, request) -> None:
    roles = install_roles(v1beta2)
    seeded = seed(v1beta2, roles)
    request.addfinalizer(lambda: unseed(seeded))
    reader = roles[READER]
    assert grants(reader) == READER_PROBES.keys() | READER_ELSEWHERE | WATCHES
    assert {v for _, _, v in grants(reader)} == {"get", "list", "watch"}  # read-only
    wrong = unneeded(capsys, seeded, reader, READER_PROBES, (roles[DELETER],))
    assert not wrong, "\n".join(wrong)


def test_every_deleter_grant_is_needed(v1beta2: ManagementCluster, capsys, request) -> None:
    """Dry runs and refusals only: nothing is written."""
    roles = install_roles(v1beta2)
    seeded = seed(v1beta2, roles)
    request.addfinalizer(lambda: unseed(seeded))
    deleter = roles[DELETER]
    assert grants(deleter) == DELETER_PROBES.keys()
    before = seeded.state()
    wrong = unneeded(capsys, seeded, deleter, DELETER_PROBES, (roles[READER],))
    assert not wrong, "\n".join(wrong)
    assert seeded.state() == before


def test_every_workload_grant_is_needed(v1beta2: ManagementCluster, capsys, request) -> None:
    roles = install_roles(v1beta2)
    seeded = seed(v1beta2, roles)
    request.addfinalizer(lambda: unseed(seeded))
    ns = seeded.namespace
    # A join token whose Secret the workload cluster lacks: only the kube-system Role shows it.
    token = {
        "joinConfiguration": {
            "discovery": {"bootstrapToken": {"token": f"{TOKEN_ID}.0123456789abcdef"}}
        }
    }
    v1beta2.api.request(
        "PATCH", f"/apis/bootstrap.cluster.x-k8s.io/v1beta2/namespaces/{ns}/kubeadmconfigs/{POOL}",
        {"spec": token}, "application/merge-patch+json",
    )  # fmt: skip
    cluster_role = roles["kubectl-machinepool-workload-reader"]
    tokens_role = roles["kubectl-machinepool-bootstrap-tokens"]
    node_watch = {("", "nodes", "watch")}  # test_least_privilege_follow.py
    assert grants(cluster_role) | grants(tokens_role) == WORKLOAD_PROBES.keys() | node_watch
    assert tokens_role["metadata"]["namespace"] == "kube-system"
    user = seeded.user("mgmt", roles[READER], roles[DELETER])
    wrong = []
    for index, (grant, probe) in enumerate(WORKLOAD_PROBES.items()):
        in_tokens = grant in grants(tokens_role)
        changed = tokens_role if in_tokens else cluster_role
        role = narrowed(changed, f"w{index}-{ns}", lambda g, d=grant: g == d)
        apply(v1beta2, role)
        seeded.workload_credentials(role, cluster_role if in_tokens else tokens_role)
        said = probe.run(capsys, seeded, user)
        if probe.gained and probe.gained not in said:
            wrong.append(f"{grant}: without it, no {probe.gained!r} in: {said}")
        if probe.lost:
            if probe.lost in said:
                wrong.append(f"{grant}: without it, still {probe.lost!r}")
            seeded.workload_credentials(cluster_role, tokens_role)
            if probe.lost not in probe.run(capsys, seeded, user):
                wrong.append(f"{grant}: with it, no {probe.lost!r}")
    assert not wrong, "\n".join(wrong)


def test_the_agent_pool_grant_is_what_aks_pools_compare_versions_with(
    v1beta2: ManagementCluster, capsys
) -> None:
    roles = install_roles(v1beta2)
    ns = v1beta2.new_namespace()
    create_scenario(v1beta2, [*SCENARIOS["aks-managed"]("v1beta2", ns, ns[2:]), core_manager(ns)])
    seeded = Seeded(v1beta2, ns, ns[2:])
    try:
        without = narrowed(roles[READER], f"reader-no-aso-{ns}", lambda g: g == ASO_AGENT_POOLS)
        apply(v1beta2, without)
        narrow = seeded.user("no-aso", without)
        full = seeded.user("aso", roles[READER])
        note = "cannot read ManagedClustersAgentPool objects, so their versions are not compared"
        assert note in flat(cli(capsys, narrow, "diagnose", "-n", ns).err)
        said = cli(capsys, full, "diagnose", "-n", ns)
        assert "ManagedClustersAgentPool" not in said.err
        versions = json.loads(cli(capsys, full, "describe", "-n", ns, "-o", "json").out)
        [pool] = versions["clusters"][0]["machinePools"]
        assert [t["field"] for t in pool["versionTargets"]] == [
            "spec.orchestratorVersion",
            "status.currentOrchestratorVersion",
        ]
    finally:
        unseed(seeded)


def test_the_crd_grant_picks_the_contract_version(v1beta2: ManagementCluster, capsys) -> None:
    """A provider serving a version newer than its contract maps to: with CRDs readable the pool
    is read in the contract's version, as Cluster API does; by discovery alone in the newest."""
    from support.crds import install

    install(v1beta2.api, [contract_crd()])
    roles = install_roles(v1beta2)
    ns = v1beta2.new_namespace()
    pool = next(o for o in SCENARIOS["capd"]("v1beta2", ns, ns[2:]) if o["kind"] == "MachinePool")
    pool["spec"]["template"]["spec"]["infrastructureRef"]["kind"] = "ContractMachinePool"
    v1beta2.create([pool])
    v1beta2.api.request(
        "POST", f"/apis/{INFRA}/v1beta2/namespaces/{ns}/contractmachinepools",
        {"apiVersion": f"{INFRA}/v1beta2", "kind": "ContractMachinePool", "metadata": {"name": POOL}},
    )  # fmt: skip
    seeded = Seeded(v1beta2, ns, ns[2:])
    crd_grant = ("apiextensions.k8s.io", "customresourcedefinitions", "get")
    without = narrowed(roles[READER], f"reader-no-crds-{ns}", lambda g: g == crd_grant)
    apply(v1beta2, without)

    def read_version(user: User) -> str:
        result = cli(capsys, user, "describe", POOL, "-n", ns, "-o", "json")
        pools = json.loads(result.out)["clusters"][0]["machinePools"]
        return str(pools[0]["infrastructurePool"]["apiVersion"])

    assert read_version(seeded.user("crds", roles[READER])) == f"{INFRA}/v1beta2"
    assert read_version(seeded.user("no-crds", without)) == f"{INFRA}/v1beta3"


def contract_crd() -> Obj:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"contractmachinepools.{INFRA}",
            "labels": {"cluster.x-k8s.io/v1beta2": "v1beta2"},
        },
        "spec": {
            "group": INFRA,
            "names": {
                "kind": "ContractMachinePool",
                "listKind": "ContractMachinePoolList",
                "plural": "contractmachinepools",
                "singular": "contractmachinepool",
            },
            "scope": "Namespaced",
            "versions": [
                {"name": v, "served": True, "storage": v == "v1beta2", "schema": schema}
                for v in ("v1beta2", "v1beta3")
            ],
        },
    }
