"""No silent hang: the installed plugin against API servers that never answer (support.blackhole)
gives up within its bounds, saying which server, which context and which phase.

Each run is a child process with a bound of its own (RUN_BOUND): a hang fails the test rather
than holding the suite. Two tests wait out the default 10 s TLS handshake bound (list -A, which
is also what --request-timeout 0 does, and a workload cluster behind its kubeconfig Secret); the
others shorten every bound with --request-timeout, as a user can. No timing is asserted.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml
from support.blackhole import Stage, black_hole
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import start_plugin
from support.scenarios import SCENARIOS

from kubectl_machinepool.kube.fetch import AHEAD

# Far past any bound a run here meets: only a hang reaches it.
RUN_BOUND = 120.0
HANDSHAKE_HINT = (
    "hint: something takes connections there but does not speak TLS: check the server's URL and "
    "port in the kubeconfig, and any VPN or load balancer in between"
)


def run(args: list[str], home: Path) -> tuple[int, str, str]:
    plugin = start_plugin(args, home)
    try:
        out, err = plugin.communicate(timeout=RUN_BOUND)
    finally:
        plugin.kill()
        plugin.communicate()
    return plugin.returncode, out, err


def test_list_all_namespaces_gives_up_at_the_tls_handshake_by_default(tmp_path: Path) -> None:
    """kubectl's own bound on the handshake, without any flag: once, not once per try."""
    with black_hole("handshake", tmp_path) as hole:
        config = hole.write_kubeconfig(tmp_path / "kubeconfig", "mgmt")
        code, out, err = run(["list", "-A", "--kubeconfig", str(config)], tmp_path)
        taken = len(hole.taken)
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"error: the API server of context 'mgmt' ({hole.url}) did not complete the TLS "
        "handshake within 10s",
        HANDSHAKE_HINT,
    ]
    # The MachinePool LIST's connection and those opened beside it for the reads after it
    # (kube/fetch.py), each taken once: none is tried again.
    assert taken == 1 + AHEAD + 1


@pytest.mark.parametrize(
    ("stage", "what"),
    [
        ("connect", "did not accept a connection"),
        ("handshake", "did not complete the TLS handshake"),
        ("response", "did not answer"),
    ],
)
def test_describe_names_the_phase_a_server_stalled_in(
    tmp_path: Path, stage: Stage, what: str
) -> None:
    with black_hole(stage, tmp_path) as hole:
        config = hole.write_kubeconfig(tmp_path / "kubeconfig", "mgmt")
        args = ["describe", "x", "-n", "y", "--kubeconfig", str(config), "--request-timeout", "2s"]
        code, out, err = run(args, tmp_path)
    assert (code, out) == (1, "")
    lines = err.splitlines()
    assert lines[0] == f"error: the API server of context 'mgmt' ({hole.url}) {what} within 2s"
    assert lines[1].startswith("hint: ")
    assert len(lines) == 2


def test_describe_shows_the_pools_when_the_workload_cluster_stalls(
    v1beta2: ManagementCluster, tmp_path: Path
) -> None:
    """The `<cluster>-kubeconfig` Secret points at a black hole: the Nodes read gives up at
    the workload cluster's own handshake bound, in a note; the rest is shown, exit 0."""
    namespace = v1beta2.new_namespace()
    objects = SCENARIOS["aws-asg"](v1beta2.generation, namespace, namespace.removeprefix("t-"))
    create_scenario(v1beta2, objects)
    try:
        with black_hole("handshake", tmp_path) as hole:
            document = yaml.safe_dump(hole.kubeconfig_dict("prod-admin@prod"))
            patch = {"data": {"value": base64.b64encode(document.encode()).decode()}}
            secret = f"/api/v1/namespaces/{namespace}/secrets/prod-kubeconfig"
            v1beta2.api.request("PATCH", secret, patch, "application/merge-patch+json")
            args = ["describe", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig)]
            code, out, err = run(args, tmp_path)
    finally:
        delete_nodes(v1beta2, objects)
    assert code == 0, err
    assert err.splitlines() == [
        f"warning: Nodes of Cluster {namespace}/prod are not shown: the API server of context "
        f"'prod-admin@prod' ({hole.url}) did not complete the TLS handshake within 10s"
    ]
    assert f"MachinePool {namespace}/asg-workers" in out
