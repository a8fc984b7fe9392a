"""Wrong input against the real API server: a pool or Cluster named that is not there is not
found (exit 1) in every read command, after the pools that are; an empty namespace stays
kubectl's "No resources found" (exit 0), --fail-on included: live, it is an answer."""

from __future__ import annotations

from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import run_cli
from support.scenarios import SCENARIOS

COMMANDS = [
    ("describe",),
    ("diagnose",),
    ("events",),
    ("diff-metadata",),
    ("rollout", "status"),
    # Followed, a name not there is not found at once, as kubectl get -w says, not a view
    # of the others that never ends.
    ("describe", "-w"),
    ("diagnose", "-w"),
    ("events", "-w"),
]


def test_a_pool_or_cluster_that_is_not_there_is_not_found_live(
    v1beta2: ManagementCluster, capsys
) -> None:
    namespace = v1beta2.new_namespace()
    objects = SCENARIOS["capd"](v1beta2.generation, namespace, namespace.removeprefix("t-"))
    create_scenario(v1beta2, objects)
    access = ("-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig))
    try:
        for command in COMMANDS:
            both = run_cli(capsys, *command, "dev-mp-0", "nope", *access)
            assert both.code == 1, (command, both)
            assert both.err.splitlines()[-1] == (
                f'error: machinepools.cluster.x-k8s.io "nope" not found in namespace "{namespace}"'
            ), command
            cluster = run_cli(capsys, *command, "--cluster", "nope", *access)
            assert cluster.code == 1, (command, cluster)
            assert cluster.err.splitlines()[-1] == (
                f'error: clusters.cluster.x-k8s.io "nope" not found in namespace "{namespace}"'
            ), command
        shown = run_cli(capsys, "describe", "dev-mp-0", "nope", *access)
        assert f"MachinePool {namespace}/dev-mp-0" in shown.out  # what is there comes first
        # A write names what is not there as kubectl does, before it plans anything.
        machine = run_cli(capsys, "delete-machine", "nope", "--dry-run=server", *access)
        assert machine.code == 1, machine
        assert (
            f'error: machines.cluster.x-k8s.io "nope" not found in namespace "{namespace}"'
            in machine.err
        )
    finally:
        delete_nodes(v1beta2, objects)


def test_an_empty_namespace_is_an_answer_live(v1beta2: ManagementCluster, capsys) -> None:
    namespace = v1beta2.new_namespace()
    access = ("-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig))
    result = run_cli(capsys, "diagnose", "--fail-on", "warning", *access)
    assert (result.code, result.err) == (0, f"No resources found in {namespace} namespace.\n")
