"""Fixtures for tests against real kube-apiservers holding the real Cluster API CRDs.

One etcd and up to two API servers per run: `v1beta2` serves Cluster API v1.14 CRDs cut to
v1beta2, `v1beta1` serves v1.10 CRDs (v1beta1 MachinePool), both with the provider CRDs.
Each test gets fresh namespaces; nothing is cleaned up inside the servers (no controllers run
here, so namespaces would never finish terminating), the whole control plane goes at the end.
The `live` cluster is separate: its own etcd and API server, with the real controllers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.controlplane import ControlPlane, missing_testbin
from support.faultjudge import WORKERS
from support.faultmatrix import Matrix, Server
from support.live import LiveCluster
from support.live import missing_binaries as live_missing_binaries
from support.management import (
    ManagementCluster,
    create_scenario,
    delete_nodes,
    management_cluster,
)
from support.scenarios import SCENARIOS

GENERATIONS = ["v1beta2", "v1beta1"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)


def _require(missing: list[str]) -> None:
    if missing:
        message = (
            f"test cluster binaries missing ({', '.join(missing)}); run tests/testbin/build.sh"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    _require(missing_testbin())
    plane = ControlPlane()
    yield plane
    plane.stop()


# The live tests run against the v1.14 manager (v1beta2) and the v1.10 one (v1beta1);
# KMP_LIVE_GENERATIONS=v1beta2 picks one.
LIVE_GENERATIONS = os.environ.get("KMP_LIVE_GENERATIONS", "v1beta2,v1beta1").split(",")


@pytest.fixture(scope="session", params=LIVE_GENERATIONS)
def live(request: pytest.FixtureRequest) -> Iterator[LiveCluster]:
    """The management cluster with the real controllers (support.live), shared by live tests."""
    _require(missing_testbin() + live_missing_binaries(request.param))
    cluster = LiveCluster(request.param)
    yield cluster
    cluster.stop()


@pytest.fixture(params=GENERATIONS)
def mgmt(request: pytest.FixtureRequest, control_plane: ControlPlane) -> ManagementCluster:
    """Each test using this runs once per Cluster API generation."""
    return management_cluster(control_plane, request.param)


@pytest.fixture
def v1beta2(control_plane: ControlPlane) -> ManagementCluster:
    return management_cluster(control_plane, "v1beta2")


@pytest.fixture
def namespace(mgmt: ManagementCluster) -> str:
    return mgmt.new_namespace()


@pytest.fixture
def vmss(v1beta2: ManagementCluster) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The azure-vmss scenario: vmss-workers-2's Node is NotReady."""
    namespace = v1beta2.new_namespace()
    objects = SCENARIOS["azure-vmss"]("v1beta2", namespace, namespace.removeprefix("t-"))
    create_scenario(v1beta2, objects)
    yield namespace, objects
    delete_nodes(v1beta2, objects)


@pytest.fixture(scope="session")
def matrix(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Matrix]:
    """Worker processes running the plugin under faults, shared by the fault-matrix modules
    (one xdist group, so one xdist worker runs them all): started once, their proxies, kinds
    and namespaces kept from module to module."""
    servers = []
    for generation in ("v1beta2", "v1beta1"):
        server = management_cluster(control_plane, generation).server
        servers.append(Server(generation, server.port, server.ca_file, server.admin))
    pool = Matrix(servers, tmp_path_factory.mktemp("fault-matrix"), WORKERS)
    yield pool
    pool.close()
