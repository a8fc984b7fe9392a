"""Every write command, run by users who lack one read, on the real API server (issue 49): what a
command's run reads again once its first write is made is found unreadable by the plan, and the
command refuses (exit 3, nothing written, the objects read back unchanged) naming it, instead of
writing and then stopping half way; a judgement the plan could not make from what it read says
so, and --force is offered on that true premise, not a false one.

The seeded CAPD pool (two instances at v1.34.0, their Nodes Ready: the rollout is done) in one
namespace serves every test: nothing here writes, so each user sees it as seeded.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from support.controlplane import ControlPlane
from support.management import management_cluster
from support.roles import (
    DELETER,
    INFRA,
    MACHINES,
    OPERATOR,
    POOL,
    READER,
    Grant,
    Obj,
    Seeded,
    apply,
    cli,
    flat,
    install_roles,
    narrowed,
    seed,
    unseed,
)
from support.run import Result

from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.model.restartrecord import STARTED
from kubectl_machinepool.model.revisions import ANNOTATION, REPLICAS, Change, Revision, encode

CAPI = "cluster.x-k8s.io"
UPGRADE = ("upgrade", POOL, "--version", "v1.34.1")


@pytest.fixture(scope="module")
def seeded(control_plane: ControlPlane) -> Iterator[tuple[Seeded, dict[str, Obj]]]:
    mgmt = management_cluster(control_plane, "v1beta2")
    roles = install_roles(mgmt)
    found = seed(mgmt, roles)
    yield found, roles
    unseed(found)


def reader_without(seeded: tuple[Seeded, dict[str, Obj]], name: str, drop: Grant) -> Obj:
    """The reader role less the grants `drop` matches (an empty field matches any)."""
    found, roles = seeded
    role = narrowed(
        roles[READER],
        f"reader-{name}-{found.namespace}",
        lambda g: all(want in ("", have) for want, have in zip(drop, g, strict=True)),
    )
    apply(found.mgmt, role)
    return role


def state(seeded: Seeded) -> dict[str, str]:
    """resourceVersion of every object any write command here could write."""
    found = seeded.state()
    path = f"/apis/{INFRA}/v1beta2/namespaces/{seeded.namespace}/dockermachinepools"
    for item in seeded.mgmt.api.request("GET", path)["items"]:
        found[f"dockermachinepools/{item['metadata']['name']}"] = item["metadata"][
            "resourceVersion"
        ]
    return found


def refused(result: Result, *fragments: str) -> str:
    """Exit 3 with one line `error: refused: ...; nothing was written` holding every fragment."""
    assert result.code == 3, result.out + result.err
    [line] = [line for line in result.err.splitlines() if line.startswith("error: ")]
    assert line.startswith("error: refused: "), line
    assert line.endswith("; nothing was written"), line
    for fragment in fragments:
        assert fragment in line, line
    return line


def test_without_secrets_what_needs_the_nodes_is_refused_before_anything_is_written(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """The issue's user: patches pools and deletes Machines, reads no Secret, so no Node."""
    found, roles = seeded
    ns = found.namespace
    role = reader_without(seeded, "no-secrets", ("", "secrets", ""))
    user = found.user("no-secrets", role, roles[OPERATOR], roles[DELETER])
    nodes = (
        f'the Nodes of Cluster {ns}/dev could not be read (secrets "dev-kubeconfig" is '
        f'forbidden: User "{user.name}" cannot get resource "secrets"'
    )
    before = state(found)

    restart = cli(capsys, user, "rollout", "restart", POOL, "-n", ns, "--yes")
    refused(restart, nodes, "the restart judges from them which instances are unavailable")
    assert "Ready Node" not in flat(restart.out)  # the false warning the issue saw

    followed = cli(capsys, user, *UPGRADE, "-n", ns, "--yes")
    refused(followed, nodes, "--no-wait writes without following it", "(and 1 more above)")

    premise = cli(capsys, user, *UPGRADE, "-n", ns, "--yes", "--no-wait")
    line = refused(premise, f"whether the pool's current rollout is done is unknown: {nodes}")
    assert line.endswith("--force goes ahead anyway; nothing was written")
    for false in ("progressing", "0 of 2", "not done"):
        assert false not in flat(premise.out + premise.err)

    # On that true premise --force goes ahead (sent as a server dry run: nothing persists).
    forced = cli(capsys, user, *UPGRADE, "-n", ns, "--no-wait", "--force", "--dry-run=server")
    assert forced.code == 0, forced.out + forced.err
    assert "readiness is known (--force: going ahead)" in flat(forced.out)
    assert flat(forced.out).count("(server dry run)") == 4

    # What reads no Node during its run goes ahead, claiming nothing about them.
    for command in (
        ("scale", POOL, "--replicas", "3"),
        ("rollout", "pause", POOL),
        ("delete-machine", MACHINES[1], "--no-wait"),
    ):
        run = cli(capsys, user, *command, "-n", ns, "--dry-run=server")
        assert run.code == 0, run.out + run.err
        assert "Ready" not in flat(run.out)
    assert state(found) == before


def test_without_watching_machines_a_followed_deletion_is_refused_before_deleting(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """--wait follows the deletion by a watch: refused, it stopped the command (exit 1) with
    the Machine already deleted."""
    found, roles = seeded
    ns = found.namespace
    role = reader_without(seeded, "no-machine-watch", (CAPI, "machines", "watch"))
    user = found.user("no-watch", role, roles[DELETER])
    before = state(found)
    run = cli(capsys, user, "delete-machine", MACHINES[1], "-n", ns, "--yes", "--wait")
    refused(
        run,
        f"you may not watch machines.{CAPI} in namespace {ns}: --wait follows the deletion",
        "(--no-wait deletes without it)",
    )
    server = cli(capsys, user, "delete-machine", MACHINES[1], "-n", ns, "--dry-run=server")
    assert server.code == 0, server.out + server.err
    assert state(found) == before


def test_a_restart_gone_on_is_refused_when_its_record_could_not_be_removed(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """Going on with a recorded restart writes nothing at first, and removes the record once
    every instance is new: a user who may delete Machines but not patch the pool is refused
    before any Machine is replaced, not after the last."""
    found, roles = seeded
    ns = found.namespace
    path = f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machinepools/{POOL}"
    listed = found.mgmt.api.request("GET", f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machines")
    made = max(parse_time(m["metadata"]["creationTimestamp"]) for m in listed["items"])
    started = (made or datetime.now(UTC)) + timedelta(seconds=1)
    while datetime.now(UTC) <= started:  # a start later than the server's time is refused
        time.sleep(0.05)
    record = {"metadata": {"annotations": {STARTED: format_time(started)}}}
    found.mgmt.api.request("PATCH", path, record, "application/merge-patch+json")
    try:
        user = found.user("deleter-only", roles[READER], roles[DELETER])
        before = state(found)
        run = cli(capsys, user, "rollout", "restart", POOL, "-n", ns, "--yes", "--no-wait")
        refused(run, f"you may not patch machinepools.{CAPI} in namespace {ns}")
        assert "would go on with the restart begun at" in run.out
        assert state(found) == before
    finally:
        gone = {"metadata": {"annotations": {STARTED: None}}}
        found.mgmt.api.request("PATCH", path, gone, "application/merge-patch+json")


def test_what_a_plan_could_not_read_it_says_instead_of_judging(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """Without Clusters, whether the Cluster is paused or deleting is unknown, and said; without
    the infra pools, scale says the same of the infra pool, and restart, whose every
    replacement plans from them, refuses."""
    found, roles = seeded
    ns = found.namespace
    no_clusters = found.user(
        "no-clusters",
        reader_without(seeded, "no-clusters", (CAPI, "clusters", "")),
        roles[OPERATOR],
    )
    unknown = "could not be read: whether it is paused or being deleted is unknown"
    for command in (("scale", POOL, "--replicas", "3"), ("rollout", "pause", POOL)):
        run = cli(capsys, no_clusters, *command, "-n", ns, "--dry-run=client")
        assert run.code == 0, run.out + run.err
        assert f"warning Cluster {ns}/dev {unknown}" in flat(run.out)

    no_infra = found.user(
        "no-infra", reader_without(seeded, "no-infra", (INFRA, "", "")), roles[OPERATOR]
    )
    scale = cli(capsys, no_infra, "scale", POOL, "--replicas", "3", "-n", ns, "--dry-run=client")
    assert scale.code == 0, scale.out + scale.err
    assert f"warning DockerMachinePool {ns}/{POOL} {unknown}" in flat(scale.out)
    restart = cli(capsys, no_infra, "rollout", "restart", POOL, "-n", ns, "--dry-run=client")
    refused(
        restart,
        "DockerMachinePool objects could not be read: each replacement is planned from them",
    )


def test_rollout_history_needs_the_reader_s_get_of_the_pool(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """One GET of the MachinePool, granted by the reader: without it, one line and exit 1."""
    found, roles = seeded
    ns = found.namespace
    reader = found.user("history", roles[READER])
    shown = cli(capsys, reader, "rollout", "history", POOL, "-n", ns)
    assert (shown.code, shown.err) == (0, "")
    assert shown.out == f"machinepool.cluster.x-k8s.io/{POOL}: no revisions recorded\n"
    role = reader_without(seeded, "no-get", (CAPI, "machinepools", "get"))
    less = cli(capsys, found.user("no-get", role), "rollout", "history", POOL, "-n", ns)
    assert less.code == 1
    [line, _hint] = less.err.splitlines()
    assert 'cannot get resource "machinepools"' in line


def test_rollout_undo_needs_the_operator_s_patch_of_the_pool(
    seeded: tuple[Seeded, dict[str, Obj]], capsys
) -> None:
    """undo writes what upgrade and scale write: the reader plans it and names the patch it may
    not make (exit 3), the reader and the operator send it (here as a server dry run). The
    seeded pool gets a scale's revision for the test, and loses it after."""
    found, roles = seeded
    ns = found.namespace
    path = f"/apis/{CAPI}/v1beta2/namespaces/{ns}/machinepools/{POOL}"
    size = found.mgmt.api.request("GET", path)["spec"]["replicas"]
    scaled = Change("MachinePool", CAPI, POOL, REPLICAS, size - 1, size)
    at = format_time(datetime.now(UTC)) or ""
    value = encode([Revision(1, f"scale --replicas {size}", at, "0.1.0", (scaled,))])
    found.mgmt.api.request(
        "PATCH", path, {"metadata": {"annotations": {ANNOTATION: value}}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    try:
        reader = found.user("undo-reader", roles[READER])
        undo = ("rollout", "undo", POOL, "-n", ns, "--yes", "--no-wait")
        refused(cli(capsys, reader, *undo), f"you may not patch machinepools.{CAPI}")
        operator = found.user("undo-operator", roles[READER], roles[OPERATOR])
        sent = cli(capsys, operator, *undo, "--dry-run=server")
        assert sent.code == 0, sent.out + sent.err
        assert f"machinepool.{CAPI}/{POOL} patched (server dry run)" in sent.out
    finally:
        found.mgmt.api.request(
            "PATCH", path, {"metadata": {"annotations": {ANNOTATION: None}}},
            content_type="application/merge-patch+json",
        )  # fmt: skip
