"""app/reading.py over fake API servers (support.fakeapi: our client's boundary, no binaries).

What reading a live cluster must keep doing: a pool asked for that is not there is kubectl's
NotFound, a kind that cannot be read is a note naming what is missing and why (never silence,
never the whole command failing), only the MachinePool LIST is essential, the workload cluster is
reached through its kubeconfig Secret, and Secrets are only ever listed as metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from support.fakeapi import MANAGEMENT, WORKLOAD, WORKLOAD_TOKEN, FakeAPI, FakeServer
from support.objects import NOW

from kubectl_machinepool.app.options import PoolScope, Source
from kubectl_machinepool.app.reading import Loaded, check_found, load_description, load_pools
from kubectl_machinepool.base.errors import ClusterAccessError, NotFoundError
from kubectl_machinepool.kube.client import METADATA_ONLY

NAMESPACE = "capi-prod"
POOL = "dev-mp-0"


@dataclass
class Clusters:
    management: FakeServer
    workload: FakeServer
    api: FakeAPI

    def read(
        self, tmp_path, *names: str, all_namespaces: bool = False, extras: bool = True
    ) -> Loaded:
        namespace = None if all_namespaces else NAMESPACE
        access = self.api.access(tmp_path, namespace=namespace, all_namespaces=all_namespaces)
        return load_description(
            access, Source(), PoolScope(names=names), NOW, None, report_extras=extras
        )


def clusters(api: FakeAPI, generation: str = "v1beta2") -> Clusters:
    """CAPD's pool of two Machines (support.scenarios), its Nodes on the workload server."""
    return Clusters(*api.scenario("capd", NAMESPACE, generation), api)


@pytest.fixture
def live(fake_api: FakeAPI) -> Clusters:
    return clusters(fake_api)


def instances(loaded: Loaded) -> list[tuple[str | None, str | None]]:
    """(Machine, Node) of each instance of the one pool."""
    [cluster] = loaded.description.clusters
    [pool] = cluster.pools
    return sorted(
        (i.machine.object.name if i.machine else None, i.node.name if i.node else None)
        for i in pool.instances
    )


BOTH = [("dev-mp-0-k9d4m", "dev-dev-mp-0-k9d4m"), ("dev-mp-0-x7q2p", "dev-dev-mp-0-x7q2p")]


def test_a_readable_cluster_is_described_without_notes(live: Clusters, tmp_path) -> None:
    loaded = live.read(tmp_path)
    assert loaded.notes == ()
    assert instances(loaded) == BOTH
    assert loaded.description.clusters[0].nodes_read
    assert check_found(loaded) is None
    # The Nodes come from the server the kubeconfig Secret names, with its credentials.
    assert {a.path for a in live.workload.asked} >= {"/api/v1/nodes"}


def test_secrets_are_listed_as_metadata_only(live: Clusters, tmp_path) -> None:
    """A reader never receives a Secret's data, only its name: the one Secret read whole is
    the workload kubeconfig, and its token goes no further than the connection."""
    loaded = live.read(tmp_path)
    secret_lists = [
        a for a in live.management.asked + live.workload.asked if a.path.endswith("/secrets")
    ]
    assert len(secret_lists) == 2  # the namespace's (bootstrap data) and kube-system's (tokens)
    assert {a.accept for a in secret_lists} == {METADATA_ONLY}
    assert WORKLOAD_TOKEN not in repr(loaded.snapshot.objects)


@pytest.mark.parametrize(
    ("names", "all_namespaces", "message"),
    [
        (
            ("gone",),
            False,
            'machinepools.cluster.x-k8s.io "gone" not found in namespace "capi-prod"',
        ),
        (
            (POOL, "gone", "lost"),
            False,
            'machinepools.cluster.x-k8s.io "gone", "lost" not found in namespace "capi-prod"',
        ),
        (("gone",), True, 'machinepools.cluster.x-k8s.io "gone" not found'),
    ],
    ids=["one", "some-of-several", "all-namespaces"],
)
def test_a_pool_that_is_not_there_is_kubectl_s_not_found(
    live: Clusters, tmp_path, names, all_namespaces, message
) -> None:
    loaded = live.read(tmp_path, *names, all_namespaces=all_namespaces)
    with pytest.raises(NotFoundError) as missing:
        check_found(loaded)
    assert missing.value.message == message
    # What was found is still described first (kubectl prints it, then the error).
    assert [p.pool.name for c in loaded.description.clusters for p in c.pools] == [
        n for n in names if n == POOL
    ]


def test_no_pool_at_all_is_no_resources_found(fake_api: FakeAPI, tmp_path) -> None:
    fake_api.serve(FakeServer(MANAGEMENT, []))
    loaded = clusters_in(fake_api, tmp_path)
    assert check_found(loaded) == "No resources found in capi-prod namespace."


def clusters_in(api: FakeAPI, tmp_path) -> Loaded:
    access = api.access(tmp_path, namespace=NAMESPACE)
    return load_description(access, Source(), PoolScope(), NOW, None, report_extras=True)


FORBIDDEN = (
    ' is forbidden: User "reader" cannot list resource "{plural}" in API group "{group}" '
    'in the namespace "capi-prod"'
)


@pytest.mark.parametrize(
    ("plural", "group", "note"),
    [
        (
            "dockermachinepools",
            "infrastructure.cluster.x-k8s.io",
            "cannot read DockerMachinePool objects, so infra pools are not shown",
        ),
        (
            "machines",
            "cluster.x-k8s.io",
            "cannot read Machine objects, so instances show without them",
        ),
        (
            "dockermachines",
            "infrastructure.cluster.x-k8s.io",
            "cannot read DockerMachine objects, so instances show without them",
        ),
        (
            "kubeadmconfigs",
            "bootstrap.cluster.x-k8s.io",
            "cannot read KubeadmConfig objects, so bootstrap configs are not shown",
        ),
        ("events", "", "cannot read Event objects, so the pools' Events are not shown"),
        (
            "machinehealthchecks",
            "cluster.x-k8s.io",
            "cannot read MachineHealthCheck objects, so MachineHealthChecks are not shown or "
            "judged",
        ),
        (
            "clusters",
            "cluster.x-k8s.io",
            "cannot read Cluster objects, so Clusters show as not readable",
        ),
    ],
)
def test_a_kind_that_cannot_be_read_is_a_note_and_the_pool_is_still_shown(
    live: Clusters, tmp_path, plural, group, note
) -> None:
    live.management.forbidden.add(plural)
    loaded = live.read(tmp_path)
    resource = f"{plural}.{group}" if group else plural
    reason = resource + FORBIDDEN.format(plural=plural, group=group)
    assert f"{note}: {reason}" in loaded.notes
    assert len(loaded.notes) == 1
    assert [p.pool.name for c in loaded.description.clusters for p in c.pools] == [POOL]
    assert check_found(loaded) is None


def test_what_only_rules_read_is_said_only_when_extras_are_reported(
    live: Clusters, tmp_path
) -> None:
    """describe stays silent about the reads only diagnose's rules need (their findings say
    so), but the snapshot still knows they were not read."""
    live.management.forbidden.add("deployments")
    quiet = live.read(tmp_path, extras=False)
    assert quiet.notes == ()
    assert ("apps", "Deployment") in quiet.snapshot.unread
    said = live.read(tmp_path, extras=True)
    [note] = said.notes
    assert note.startswith(
        "cannot read Deployment objects, so the Cluster API version is unknown: "
    )


def test_an_unreachable_workload_cluster_is_a_note(live: Clusters, tmp_path) -> None:
    del live.api.servers[WORKLOAD]
    loaded = live.read(tmp_path)
    assert loaded.notes == (
        "Nodes of Cluster capi-prod/dev are not shown: cannot reach the API server of "
        f"context 'dev' ({WORKLOAD}): Connection refused",
    )
    assert not loaded.description.clusters[0].nodes_read
    assert instances(loaded) == [("dev-mp-0-k9d4m", None), ("dev-mp-0-x7q2p", None)]


def test_a_missing_kubeconfig_secret_is_a_note(live: Clusters, tmp_path) -> None:
    live.management.objects = {
        k: o
        for k, o in live.management.objects.items()
        if o["kind"] != "Secret" or not o["metadata"]["name"].endswith("-kubeconfig")
    }
    loaded = live.read(tmp_path)
    assert loaded.notes == (
        'Nodes of Cluster capi-prod/dev are not shown: secrets "dev-kubeconfig" not found',
    )


def test_the_machinepool_list_is_essential(live: Clusters, tmp_path) -> None:
    live.management.forbidden.add("machinepools")
    with pytest.raises(ClusterAccessError, match=r'cannot list resource "machinepools"') as err:
        live.read(tmp_path)
    assert err.value.hint == "ask an administrator for RBAC access to it"


def test_no_cluster_api_is_said_with_where_to_look(fake_api: FakeAPI, tmp_path) -> None:
    fake_api.serve(FakeServer(MANAGEMENT, [], capi=None))
    with pytest.raises(NotFoundError) as err:
        clusters_in(fake_api, tmp_path)
    assert err.value.message == (
        f"Cluster API is not installed on context 'test' ({MANAGEMENT}): "
        "the cluster.x-k8s.io API group is not served"
    )
    assert err.value.hint == "MachinePools live on the management cluster; check --context"


def test_a_v1beta1_server_is_read_in_v1beta1(fake_api: FakeAPI, tmp_path) -> None:
    """The first LIST guesses v1beta2 (CAPI 1.11+); a v1beta1-only server answers 404, and
    the pools and their Machines are read again in the version it serves."""
    live = clusters(fake_api, "v1beta1")
    loaded = live.read(tmp_path)
    assert loaded.notes == ()
    assert instances(loaded) == BOTH
    machine_lists = [a.path for a in live.management.asked if a.path.endswith("/machines")]
    assert machine_lists == [
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-prod/machines",
        "/apis/cluster.x-k8s.io/v1beta1/namespaces/capi-prod/machines",
    ]


def test_list_says_what_an_unreadable_infra_pool_leaves_unknown(live: Clusters, tmp_path) -> None:
    live.management.forbidden.add("dockermachinepools")
    access = live.api.access(tmp_path, namespace=NAMESPACE)
    snapshot, selection = load_pools(access, Source(), None)
    assert selection.namespace == NAMESPACE
    [note] = snapshot.notes
    assert note.startswith("cannot read DockerMachinePool objects, so MACHINES shows <unknown>: ")
    assert [o["metadata"]["name"] for o in snapshot.objects] == [POOL]
    # Of the workload cluster, list reads the Nodes alone: one LIST, not their Events.
    assert [a.path for a in live.workload.asked] == ["/api/v1/nodes"]
    [workload] = snapshot.workloads
    assert workload.read
    assert workload.events is None
