"""list -w, describe -w and diagnose -w against the real API server: each change a watch reports
shows the view again (piped: kubectl get -w's rows for list, a block after a line saying what
changed for describe and diagnose), through a watch that must start over (410 Gone), and Ctrl-C
ends it quietly."""

from __future__ import annotations

import copy
import signal
from pathlib import Path
from typing import Any

import pytest
from support import crds
from support.controlplane import ControlPlane
from support.faultproxy import Fault, Injection, fault_proxy
from support.kinds import Kinds
from support.kubeapi import KubeAPI
from support.management import ManagementCluster, create_scenario
from support.run import Lines, run_cli, start_plugin
from support.scenarios import SCENARIOS

Obj = dict[str, Any]


def _node_ready(cluster: ManagementCluster, objects: list[Obj]) -> str:
    """The NotReady Node turns Ready, as its kubelet would report it; its name."""
    node = next(
        o
        for o in objects
        if o["kind"] == "Node"
        and any(c["type"] == "Ready" and c["status"] == "False" for c in o["status"]["conditions"])
    )
    ready = copy.deepcopy(node)
    for cond in ready["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "True"
    cluster.api.set_status(ready)
    return str(node["metadata"]["name"])


def _interrupted(lines: Lines) -> str:
    lines.plugin.send_signal(signal.SIGINT)
    _, err = lines.end(timeout=30)
    assert lines.plugin.returncode == 130
    return err


@pytest.mark.parametrize("command", ["describe", "diagnose"])
def test_a_change_shows_the_view_again(v1beta2, vmss, tmp_path: Path, command: str) -> None:
    namespace, objects = vmss
    args = [command, "vmss-workers", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig)]
    with Lines(start_plugin([*args, "-w"], tmp_path)) as lines:
        first = lines.until("vmss-workers")
        node = _node_ready(v1beta2, objects)
        changed = lines.until(f"modified Node {node}")
        assert changed[-1].startswith("--- ")
        lines.until("vmss-workers")  # the view, again
        err = _interrupted(lines)
    assert first
    assert "Traceback" not in err


def test_list_prints_the_row_that_changed(v1beta2, vmss, tmp_path: Path) -> None:
    namespace, objects = vmss
    args = ["list", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig), "-w"]
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    with Lines(start_plugin(args, tmp_path)) as lines:
        table = lines.until("vmss-workers")
        assert table[0].split()[:2] == ["NAMESPACE", "NAME"] or table[0].startswith("NAME")
        changed = copy.deepcopy(pool)
        changed["status"]["phase"] = "Running"
        v1beta2.api.set_status(changed)
        row = lines.until("Running")
        err = _interrupted(lines)
    assert row[-1].split()[0] == "vmss-workers"  # a row, no header again
    assert "Traceback" not in err


def test_a_watch_that_must_start_over_still_follows(v1beta2, vmss, tmp_path: Path) -> None:
    """The first watch of the Machines is answered 410 Gone: it lists them again (the view
    is read again), and later changes still show."""
    namespace, objects = vmss
    machines = f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/machines"
    with fault_proxy(v1beta2.server, v1beta2.server.admin, tmp_path) as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kc", v1beta2.server.admin)
        proxy.arm(Injection(Fault.GONE, match=lambda s: s.path == machines and "watch" in s.params))
        args = ["describe", "vmss-workers", "-n", namespace, "--kubeconfig", str(kubeconfig), "-w"]
        with Lines(start_plugin(args, tmp_path)) as lines:
            lines.until("vmss-workers")
            node = _node_ready(v1beta2, objects)
            lines.until(f"modified Node {node}")
            _interrupted(lines)
        fired = proxy.fired
    assert fired is not None
    assert "watch" in fired.params


def test_watching_a_dump_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = Path(__file__).resolve().parents[2] / "examples" / "azure-vmss.yaml"
    result = run_cli(capsys, "describe", "-f", str(dump), "-w")
    assert result.code == 2
    assert result.err.startswith("error: --watch follows a live cluster and cannot read a dump")


def test_describe_w_goes_on_across_an_api_server_restart(tmp_path: Path) -> None:
    """Its own server (the shared one stays up for the other tests): restarted while describe -w
    follows a pool, every watch drops and the server refuses connections for a while; once it
    is back, a Node turning Ready still shows."""
    plane = ControlPlane()
    try:
        server = plane.server("restarted")
        api = KubeAPI(server.server, server.ssl_context(), Kinds())
        crds.install(api, crds.capi_crds("v1beta2") + crds.provider_crds())
        cluster = ManagementCluster("v1beta2", server, api)
        namespace = cluster.new_namespace()
        objects = SCENARIOS["azure-vmss"]("v1beta2", namespace, namespace.removeprefix("t-"))
        create_scenario(cluster, objects)
        args = [
            "describe",
            "vmss-workers",
            "-n",
            namespace,
            "--kubeconfig",
            str(cluster.kubeconfig),
        ]
        with Lines(start_plugin([*args, "-w"], tmp_path)) as lines:
            lines.until("Nodes matched 3, ready 2")
            server.restart()
            _node_ready(cluster, objects)
            lines.until("Nodes matched 3, ready 3", timeout=120)
            err = _interrupted(lines)
        assert "Traceback" not in err
    finally:
        plane.stop()


def test_events_w_prints_each_new_event(v1beta2, vmss, tmp_path: Path) -> None:
    """kubectl events -w: the timeline once, then a row for an Event recorded meanwhile."""
    namespace, _ = vmss
    args = ["events", "vmss-workers", "-n", namespace, "--kubeconfig", str(v1beta2.kubeconfig)]
    with Lines(start_plugin([*args, "-w"], tmp_path)) as lines:
        first = lines.until("Starting kubelet.")
        v1beta2.api.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": "vmss-workers-2.drain", "namespace": namespace},
                "involvedObject": {
                    "kind": "Machine",
                    "name": "vmss-workers-2",
                    "namespace": namespace,
                },
                "type": "Warning",
                "reason": "DrainFailed",
                "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                "count": 1,
                "firstTimestamp": "2026-12-02T09:00:00Z",
                "lastTimestamp": "2026-12-02T09:00:00Z",
                "source": {"component": "machine-controller"},
            }
        )
        new = lines.until("DrainFailed")
        err = _interrupted(lines)
    assert first[0].split()[:2] == ["LAST", "SEEN"]
    assert "Machine/vmss-workers-2" in new[-1]
    assert not any(line.split()[:2] == ["LAST", "SEEN"] for line in new[len(first) :])
    assert "Traceback" not in err
