"""The operator role (upgrade's, scale's and restart's writes) and the watch grants of the
reader and workload roles (what following watches), on the real API server, each grant shown to
be needed; restart with the deleter role beside them.

The seeded CAPD pool is upgraded (v1.34.0 to v1.34.1) in dry runs that the missing grant makes
fail, and followed by `rollout status` while its new spec is not yet observed (no controllers
run here), so that the watches are opened and a refused one is said.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.controlplane import User
from support.management import ManagementCluster
from support.roles import (
    DELETER,
    INFRA,
    MACHINES,
    OPERATOR,
    POOL,
    READER,
    Grant,
    Probe,
    Seeded,
    apply,
    cli,
    flat,
    grants,
    install_roles,
    narrowed,
    seed,
    unneeded,
    unseed,
)
from support.run import start_plugin
from support.waiting import GUARD

from kubectl_machinepool.providers.registry import PROVIDERS

CAPI = "cluster.x-k8s.io"
UPGRADE = ("upgrade", POOL, "-n", "{ns}", "--version", "v1.34.1")
CLIENT = (*UPGRADE, "--dry-run=client")
SERVER = (*UPGRADE, "--dry-run=server")
SCALE = ("scale", POOL, "-n", "{ns}", "--replicas", "3", "--dry-run=client")
# Followed until the probe's line is on stderr (Interrupted): a bound, never a measure.
ROLLOUT = ("rollout", "status", POOL, "-n", "{ns}", "--timeout", "10m")
OPERATOR_PROBES: dict[Grant, Probe] = {
    (CAPI, "machinepools", "patch"): Probe(CLIENT, "you may not patch machinepools.cluster.x-k8s.io"),
    (INFRA, "dockermachinepools", "get"): Probe(SERVER, 'cannot get resource "dockermachinepools"'),
    (INFRA, "dockermachinepools", "patch"): Probe(CLIENT, f"you may not patch dockermachinepools.{INFRA}"),
    (CAPI, "machinepools/scale", "update"): Probe(SCALE, "you may not update machinepools/scale.cluster.x-k8s.io"),
}  # fmt: skip


class Interrupted(Probe):
    """A followed view (rollout status, events -w): the installed plugin, run until `gained`
    is on its stderr (or GUARD passes), then Ctrl-C: however slow the machine, the warning
    comes before the run is ended."""

    def run(self, _capsys: pytest.CaptureFixture[str], seeded: Seeded, user: User) -> str:
        home = Path(user.kubeconfig).parent
        plugin = start_plugin([*self.argv(seeded), "--kubeconfig", str(user.kubeconfig)], home)
        # Ctrl-C once the line is there, or after GUARD if it never comes (readline blocks).
        guard = threading.Timer(GUARD, plugin.send_signal, [signal.SIGINT])
        guard.start()
        said: list[str] = []
        try:
            assert plugin.stderr is not None
            while line := plugin.stderr.readline():
                said.append(line)
                if self.gained in flat("".join(said)):
                    break
        finally:
            guard.cancel()
            plugin.send_signal(signal.SIGINT)
            out, err = plugin.communicate(timeout=GUARD)
        return flat("".join(said) + err + out)


WATCH_PROBES: dict[Grant, Probe] = {
    (CAPI, "machinepools", "watch"): Interrupted(ROLLOUT, "cannot watch machinepools"),
    (CAPI, "machines", "watch"): Interrupted(ROLLOUT, "cannot watch machines"),
    (INFRA, "*", "watch"): Interrupted(ROLLOUT, "cannot watch dockermachinepools"),
    ("", "events", "watch"): Interrupted(("events", "-n", "{ns}", "-w"), "cannot watch events"),
}
NODE_WATCH = ("", "nodes", "watch")


def _writable_pools() -> set[str]:
    """The infra pool plurals upgrade may write: every kind with version fields to pair."""
    return {f"{p.kind.lower()}s" for p in PROVIDERS if p.upgrade and not p.upgrade.unsupported}


@pytest.fixture
def seeded(v1beta2: ManagementCluster) -> Iterator[Seeded]:
    found = seed(v1beta2, install_roles(v1beta2))
    yield found
    unseed(found)


def _rolling(seeded: Seeded) -> None:
    """A new spec no controller has observed: rollout status follows instead of ending."""
    path = f"/apis/{CAPI}/v1beta2/namespaces/{seeded.namespace}/machinepools/{POOL}"
    version = {"spec": {"template": {"spec": {"version": "v1.34.1"}}}}
    seeded.mgmt.api.request("PATCH", path, version, "application/merge-patch+json")


def test_every_operator_grant_is_needed(seeded: Seeded, capsys) -> None:
    roles = install_roles(seeded.mgmt)
    operator = roles[OPERATOR]
    named = {(INFRA, plural, verb) for plural in _writable_pools() for verb in ("get", "patch")}
    assert grants(operator) == OPERATOR_PROBES.keys() | named
    wrong = unneeded(capsys, seeded, operator, OPERATOR_PROBES, (roles[READER],))
    assert not wrong, "\n".join(wrong)


def test_every_watch_grant_is_needed(seeded: Seeded, capsys) -> None:
    roles = install_roles(seeded.mgmt)
    _rolling(seeded)
    reader = roles[READER]
    assert WATCH_PROBES.keys() <= grants(reader)
    wrong = unneeded(capsys, seeded, reader, WATCH_PROBES, ())
    # Nodes are watched in the workload cluster, with the credentials of the kubeconfig Secret.
    workload = roles["kubectl-machinepool-workload-reader"]
    assert NODE_WATCH in grants(workload)
    less = narrowed(workload, f"no-node-watch-{seeded.namespace}", lambda g: g == NODE_WATCH)
    apply(seeded.mgmt, less)
    seeded.workload_credentials(less, roles["kubectl-machinepool-bootstrap-tokens"])
    said = Interrupted(ROLLOUT, "cannot watch nodes").run(
        capsys, seeded, seeded.user("nodes", reader)
    )
    if "cannot watch nodes" not in said:
        wrong.append(f"{NODE_WATCH}: without it, no 'cannot watch nodes' in: {said}")
    assert not wrong, "\n".join(wrong)


def test_reader_and_operator_upgrade_and_follow_without_a_refusal(seeded: Seeded, capsys) -> None:
    roles = install_roles(seeded.mgmt)
    user = seeded.user("operator", roles[READER], roles[OPERATOR])
    ns = seeded.namespace
    server = cli(capsys, user, *[a.format(ns=ns) for a in SERVER])
    assert server.code == 0, server.out + server.err
    assert flat(server.out).count("(server dry run)") == 4
    # No controller observes the new spec: following ends at --timeout (exit 1), having watched.
    run = cli(capsys, user, *[a.format(ns=ns) for a in UPGRADE], "--yes", "--timeout", "2s")
    assert run.code == 1, run.out + run.err
    assert f"machinepool.cluster.x-k8s.io/{POOL} patched" in run.out
    assert "forbidden" not in run.err
    assert "cannot watch" not in run.err


def test_reader_operator_and_deleter_restart_without_a_refusal(seeded: Seeded, capsys) -> None:
    """rollout restart records its start (the operator's patch on machinepools) and replaces
    through delete-machine (the deleter's grants): the three roles together refuse nothing."""
    roles = install_roles(seeded.mgmt)
    user = seeded.user("restarter", roles[READER], roles[OPERATOR], roles[DELETER])
    made = datetime.now(UTC).replace(microsecond=0)
    while datetime.now(UTC).replace(microsecond=0) <= made:  # the Machines are older (restart)
        time.sleep(0.05)
    ns = seeded.namespace
    # Oldest first, names breaking ties: which Machine that is depends on the seconds the server
    # stamped them in, so it is read from the server, not assumed.
    listed = seeded.mgmt.api.request("GET", f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machines")
    stamps = {m["metadata"]["name"]: m["metadata"]["creationTimestamp"] for m in listed["items"]}
    oldest = min(MACHINES, key=lambda name: (stamps[name], name))
    run = cli(capsys, user, "rollout", "restart", POOL, "-n", ns, "--yes", "--no-wait")
    assert run.code == 0, run.out + run.err
    assert f"machinepool.{CAPI}/{POOL} annotated" in run.out
    assert f"machine.{CAPI}/{oldest} deleted" in run.out
    assert "forbidden" not in run.err
    assert "you may not" not in run.out
