"""A management cluster with the real controllers in the loop.

Its own etcd and kube-apiserver (so the controllers never rewrite statuses other tests seed), the
Cluster API core manager with its real webhooks, and kube-controller-manager for garbage
collection and PodDisruptionBudget status. Everything runs inside a private network namespace
when this process may make one (the manager's webhook server binds every interface); the test
run reaches the API server through a loopback relay on the same port. The workload cluster of
every Cluster is this same API server, reached through the `<cluster>-kubeconfig` Secret.
"""

from __future__ import annotations

import base64
import http.client
import os
import shutil
import tempfile
import time
from pathlib import Path

import yaml

from . import crds
from .controlplane import APIServer, Enter, Etcd, Process, binaries_dir, free_port, pinned_versions
from .kinds import Kinds
from .kubeapi import APIError, KubeAPI
from .management import ManagementCluster
from .netns import NetworkNamespace, Relay, listen_loopback
from .netns import available as netns_available
from .pki import CertificateAuthority, write_private

MANAGER_START_TIMEOUT = 120.0

# kube-controller-manager: only what the scenarios need from it. No node lifecycle controller:
# the stand-in kubelet posts no leases, and it would mark every Node Unknown.
KCM_CONTROLLERS = "garbage-collector-controller,disruption-controller"


# The manager of each Cluster API generation, by its versions.env key.
MANAGER_VERSION = {"v1beta2": "CAPI_VERSION", "v1beta1": "CAPI_V1BETA1_VERSION"}


def manager_version(generation: str) -> str:
    return pinned_versions()[MANAGER_VERSION[generation]]


def manager_binary(generation: str) -> Path:
    return binaries_dir() / f"cluster-api-manager-{manager_version(generation)}"


def missing_binaries(generation: str) -> list[str]:
    needed = [manager_binary(generation), binaries_dir() / "kube-controller-manager"]
    return [str(path) for path in needed if not path.exists()]


class _Dialer:
    """Opens TCP connections to loopback ports of the live components, wherever they run."""

    def __init__(self, netns: NetworkNamespace | None) -> None:
        self.netns = netns

    def get(self, port: int, path: str, timeout: float = 2) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        if self.netns is not None:
            conn.sock = self.netns.connect(port, timeout)
        try:
            conn.request("GET", path)
            return conn.getresponse().status
        finally:
            conn.close()


class LiveCluster:
    def __init__(self, generation: str = "v1beta2") -> None:
        self.generation = generation
        self.workdir = Path(tempfile.mkdtemp(prefix="kmp-live-"))
        self.netns = NetworkNamespace() if netns_available() else None
        enter: Enter | None = self.netns.enter() if self.netns else None
        self._dialer = _Dialer(self.netns)
        self._relay: Relay | None = None
        self.processes: list[Process] = []
        try:
            self._start(enter)
        except BaseException:
            self.stop()
            raise

    def _start(self, enter: Enter | None) -> None:
        listener = listen_loopback()
        port = int(listener.getsockname()[1])
        if self.netns is not None:
            self._relay = Relay(self.netns, listener)
        else:
            listener.close()
        etcd = Etcd(self.workdir, enter)
        self.processes.append(etcd.process)
        self.server = APIServer("live", etcd, self.workdir, port=port, enter=enter)
        self.processes.append(self.server.process)
        self.api = KubeAPI(self.server.server, self.server.ssl_context(), Kinds())
        crds.install(self.api, crds.capi_crds(self.generation, None) + crds.provider_crds())
        self.mgmt = ManagementCluster(self.generation, self.server, self.api)
        kubeconfig = self.server.admin.kubeconfig
        self.processes.append(
            Process(
                "kube-controller-manager",
                [
                    str(binaries_dir() / "kube-controller-manager"),
                    f"--kubeconfig={kubeconfig}",
                    f"--controllers={KCM_CONTROLLERS}",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--concurrent-gc-syncs=5",
                ],
                self.workdir,
                enter,
            )
        )
        self._start_manager(kubeconfig, enter)

    def _start_manager(self, kubeconfig: Path, enter: Enter | None) -> None:
        webhook_port, health_port = self._port(), self._port()
        certs = self.workdir / "webhook-certs"
        certs.mkdir()
        ca = CertificateAuthority("live-webhook-ca")
        serving = ca.issue("capi-webhook", server_names=("127.0.0.1",))
        write_private(certs / "tls.crt", serving.cert)
        write_private(certs / "tls.key", serving.key)
        flags = [
            "--leader-elect=false",
            "--feature-gates=MachinePool=true,ClusterTopology=false,RuntimeSDK=false",
            f"--webhook-port={webhook_port}",
            f"--webhook-cert-dir={certs}",
            f"--health-addr=127.0.0.1:{health_port}",
            "--diagnostics-address=0",
            "--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields",
            "--v=2",
        ]
        self.manager = Process(
            "cluster-api-manager",
            [str(manager_binary(self.generation)), *flags],
            self.workdir,
            enter,
            env={"KUBECONFIG": str(kubeconfig), "PATH": "/usr/bin:/bin", "HOME": str(self.workdir)},
        )
        self.processes.append(self.manager)
        deadline = time.monotonic() + MANAGER_START_TIMEOUT
        while not self._ready(health_port):
            self.manager.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"Cluster API manager not ready\n{self.manager.tail()}")
            time.sleep(0.3)
        self._register_webhooks(webhook_port, ca.pem)
        self._record_deployment(flags)

    def _record_deployment(self, flags: list[str]) -> None:
        """The manager runs as a process, not a Pod; its Deployment, as clusterctl would have
        installed it, is where the plugin reads the Cluster API version and the manager's flags.
        No deployment controller runs, so the object stays a record."""
        version = manager_version(self.generation)
        self.api.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "capi-system"}}
        )
        labels = {"cluster.x-k8s.io/provider": "cluster-api", "control-plane": "controller-manager"}
        self.api.create(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": "capi-controller-manager",
                    "namespace": "capi-system",
                    "labels": labels,
                },
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "containers": [
                                {
                                    "name": "manager",
                                    "image": f"cluster-api-controller:{version}",
                                    "command": ["/manager"],
                                    "args": flags,
                                }
                            ]
                        },
                    },
                },
            }
        )

    def _port(self) -> int:
        # Inside a fresh namespace every port is free; on the host take a free one.
        return free_port()

    def _ready(self, port: int) -> bool:
        try:
            return self._dialer.get(port, "/readyz") == 200
        except OSError:
            return False

    def _register_webhooks(self, port: int, ca_pem: bytes) -> None:
        manifest = crds.capi_crd_dir(self.generation) / "webhook" / "manifests.yaml"
        bundle = base64.b64encode(ca_pem).decode()
        for document in yaml.safe_load_all(manifest.read_text()):
            if not document:
                continue
            config = dict(document)
            for hook in config["webhooks"]:
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {
                    "url": f"https://127.0.0.1:{port}{path}",
                    "caBundle": bundle,
                }
            plural = config["kind"][0].lower() + config["kind"][1:] + "s"
            self.api.request(
                "POST", f"/apis/admissionregistration.k8s.io/v1/{plural.lower()}", config
            )
        self._wait_for_webhooks()

    def _wait_for_webhooks(self) -> None:
        """Until a dry-run Cluster create is answered by the webhook, not refused for lack of it."""
        probe = {
            "apiVersion": f"cluster.x-k8s.io/{self.generation}",
            "kind": "Cluster",
            "metadata": {"name": "webhook-probe", "namespace": "default"},
            "spec": {},
        }
        deadline = time.monotonic() + 30
        while True:
            try:
                self.api.request(
                    "POST",
                    f"/apis/cluster.x-k8s.io/{self.generation}/namespaces/default/clusters"
                    "?dryRun=All",
                    probe,
                )
                return
            except APIError as err:
                if "failed calling webhook" not in err.body:
                    return  # the webhook answered (and may have refused the empty spec)
                if time.monotonic() > deadline:
                    raise

    def log(self, name: str = "cluster-api-manager") -> str:
        return (self.workdir / f"{name}.log").read_text(errors="replace")

    def check_alive(self) -> None:
        for process in self.processes:
            process.check_alive()

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        if self._relay is not None:
            self._relay.close()
        if self.netns is not None:
            self.netns.close()
        if os.environ.get("KMP_KEEP_LIVE_LOGS"):
            print(f"live cluster logs kept in {self.workdir}")
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
