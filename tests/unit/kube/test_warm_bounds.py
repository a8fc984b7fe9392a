"""warmstart.pools_read against a loopback server of this test's own: the Secrets of the Clusters
a LIST names are read ahead only for as many as a scope remembers; beyond that each Cluster's
read makes its own, within the reads' slots (parallel.MAX_PARALLEL at once)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.loopback import QuietHandler, serving

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.kube.client import Kube
from kubectl_machinepool.kube.connection import Connection
from kubectl_machinepool.kube.settings import Settings
from kubectl_machinepool.kube.warmstart import MAX_REMEMBERED, pools_read
from kubectl_machinepool.model.selector import Selection


def _pools(count: int) -> bytes:
    items = [
        {"metadata": {"name": f"p{i}", "namespace": "ns"}, "spec": {"clusterName": f"c{i}"}}
        for i in range(count)
    ]
    return json.dumps({"kind": "MachinePoolList", "metadata": {}, "items": items}).encode()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[str, list[int]]]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    count = [0]

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if "/machinepools" in self.path:
                self.reply(200, _pools(count[0]))
            else:
                self.reply(404, b'{"kind": "Status", "code": 404}')

    with serving(Handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", count


@pytest.mark.parametrize(("clusters", "warmed"), [(MAX_REMEMBERED, MAX_REMEMBERED), (MAX_REMEMBERED + 1, 0)])  # fmt: skip
def test_secrets_are_read_ahead_only_for_as_many_clusters_as_are_remembered(
    served, clusters: int, warmed: int
) -> None:
    url, count = served
    count[0] = clusters
    with Kube(Connection(Settings(url), "x", "default", url), 5.0) as kube:
        pools = pools_read(kube, "ns", Selection("ns"), None, None, ahead=0, connections=1)
        assert len(pools) == clusters
        assert len(kube.warming) == warmed
        for pending in kube.warming.values():
            with pytest.raises(MachinePoolError):  # no Secret here: each one's 404
                pending.result()
