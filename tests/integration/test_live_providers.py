"""providers against the live cluster: the Deployment its Cluster API manager is recorded in (the
manager runs as a process, support.live), with the flags it really runs with, and the pools the
test provider drives; then the same cluster with clusterctl's inventory added."""

from __future__ import annotations

import json

import pytest
from support import crds
from support.inventory import CRD, create_providers, provider, remove_inventory_crd
from support.live import LiveCluster, manager_version
from support.livepool import live_pool
from support.provider import AZURE
from support.run import run_cli

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


def test_providers_of_the_live_cluster(
    live: LiveCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    version = manager_version(live.generation)
    kubeconfig = str(live.server.admin.kubeconfig)
    with live_pool(live, AZURE, replicas=1) as pool:
        shown = run_cli(
            capsys, "providers", "-n", pool.namespace, "-o", "json", "--kubeconfig", kubeconfig
        )
        assert (shown.code, shown.err) == (0, "")
        document = json.loads(shown.out)
        assert document["providersNamedBy"] == "Deployment"
        assert document["providers"] == [
            {
                "name": "cluster-api", "type": "CoreProvider", "version": version,
                "namespace": "capi-system", "from": "Deployment capi-controller-manager",
            }
        ]  # fmt: skip
        # support.live starts the manager with --feature-gates=MachinePool=true,...
        assert document["machinePoolFeatureGate"]["state"] == "on"
        assert (
            "--feature-gates sets MachinePool=true" in document["machinePoolFeatureGate"]["reason"]
        )
        [kind] = document["kinds"]
        assert (kind["kind"], kind["pools"]) == (AZURE.pool_kind, 1)

        crds.install(live.api, [CRD])
        try:
            create_providers(
                live.api,
                [provider("cluster-api", "CoreProvider", version, "capi-system")],
            )
            text = run_cli(capsys, "providers", "-n", pool.namespace, "--kubeconfig", kubeconfig)
            assert (text.code, text.err) == (0, "")
            assert text.out.splitlines()[1].split() == [
                "cluster-api", "CoreProvider", version, "capi-system", "Provider", "cluster-api"
            ]  # fmt: skip
            assert f"Cluster API {version}" not in text.out  # the flag decides, not the default
            assert f"{AZURE.pool_kind} (infrastructure.cluster.x-k8s.io), 1 pool:" in text.out
        finally:
            remove_inventory_crd(live.api)
