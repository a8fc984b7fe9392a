"""The Clusters a scope's pools named last time, reached beside the next read's MachinePool LIST
(kube/warmstart.py): against the real API server behind the delay proxy, the second describe's
chain through the workload cluster is two round trips shorter, and what it shows is the same; a
wrong or hostile memory changes nothing shown."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from support.delayproxy import Proxies
from support.objects import list_scenario
from support.run import run_cli

# Long enough that no pause of a busy machine reorders what waits on what: a flight that does
# not wait on an answer has a second to leave before the next answers come.
RTT = 1.0


@dataclass(frozen=True)
class Through:
    proxies: Proxies
    kubeconfig: Path
    namespace: str
    cache: Path


@pytest.fixture
def through(v1beta2, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Through]:
    """list_scenario's pools, the management server and the workload one (the same server)
    each behind its own proxy, the kubeconfig Secret naming the workload proxy."""
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    server = v1beta2.server
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    with Proxies(RTT) as proxies:
        mgmt, workload = proxies.add("mgmt", server.port), proxies.add("workload", server.port)
        config = server.kubeconfig_dict(server.admin, "prod-admin@prod")
        config["clusters"][0]["cluster"]["server"] = workload.url
        value = base64.b64encode(yaml.safe_dump(config).encode()).decode()
        v1beta2.create(
            [
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "type": "cluster.x-k8s.io/secret",
                    "metadata": {"name": "prod-kubeconfig", "namespace": ns},
                    "data": {"value": value},
                }
            ]
        )
        config = server.kubeconfig_dict(server.admin)
        config["clusters"][0]["cluster"]["server"] = mgmt.url
        kubeconfig = tmp_path / "mgmt.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        yield Through(proxies, kubeconfig, ns, cache)


def describe(capsys, through: Through) -> tuple[str, int, int]:
    """The view, the level of the deepest request to the workload server (its chain: the
    Secret GET, TCP, TLS, the Node LIST), and the workload connections the run opened."""
    through.proxies.reset()
    result = run_cli(
        capsys, "describe", "vmss-workers", "-n", through.namespace, "--kubeconfig",
        str(through.kubeconfig), "--now", "2026-12-01T12:00:00Z",
    )  # fmt: skip
    assert result.code == 0, result.err
    run = through.proxies.run()
    workload = run.counts["workload"]
    return result.out + result.err, workload.deepest, workload.connections


def test_the_second_describe_reaches_the_workload_cluster_two_round_trips_sooner(
    capsys, through: Through
) -> None:
    first, first_chain, first_connections = describe(capsys, through)
    second, second_chain, connections = describe(capsys, through)
    assert second == first
    assert "Nodes of Cluster" not in first  # the Nodes were read, through the proxy
    # TCP, TLS, the pool LIST, the Secret GET, TCP, TLS, the Node LIST; then the Secret GET
    # beside the pool LIST and the TCP handshakes with the server it named last time with
    # them: TLS and the Node LIST follow the Secret.
    assert (first_chain, second_chain) == (7, 5)
    assert connections == first_connections  # each one parked was taken


@pytest.mark.parametrize(
    "memory",
    [
        b"\x00not json",
        b"[]",
        json.dumps({"server": "x", "scopes": {}}).encode(),
        b"{" * 100000,
        b'{"scopes": ' + b"[" * 5000,
    ],
    ids=["binary", "a-list", "another-server", "deep", "unclosed"],
)
def test_a_memory_not_ours_is_no_memory(capsys, through: Through, memory: bytes) -> None:
    through.proxies.set_rtt(0)
    first, _, _ = describe(capsys, through)
    (remembered,) = (through.cache / "kubectl-machinepool" / "clusters").iterdir()
    assert remembered.stat().st_mode & 0o077 == 0
    remembered.write_bytes(memory)
    second, _, _ = describe(capsys, through)
    assert second == first
    assert json.loads(remembered.read_text())["scopes"]  # written again, whole


def test_a_wrong_memory_shows_nothing_of_the_cluster_it_guessed(capsys, through: Through) -> None:
    """The pool names Cluster prod; the memory says another, whose Secret does not exist, and
    that prod's server is one where nothing listens."""
    through.proxies.set_rtt(0)
    first, _, _ = describe(capsys, through)
    (remembered,) = (through.cache / "kubectl-machinepool" / "clusters").iterdir()
    entry = json.loads(remembered.read_text())
    assert list(entry["servers"].values()) == [through.proxies.proxies["workload"].url]
    entry["scopes"] = {scope: [[through.namespace, "elsewhere"]] for scope in entry["scopes"]}
    entry["servers"] = {f"{through.namespace}/prod": "https://127.0.0.1:9"}
    remembered.write_text(json.dumps(entry))
    second, _, _ = describe(capsys, through)
    assert second == first
    assert "elsewhere" not in second
    learned = json.loads(remembered.read_text())
    assert [[through.namespace, "prod"]] in learned["scopes"].values()
    assert list(learned["servers"].values()) == [through.proxies.proxies["workload"].url]
