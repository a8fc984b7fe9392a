"""Real etcd + kube-apiserver processes for integration tests.

One etcd serves every API server of a run; each API server gets its own --etcd-prefix, so a
v1beta2 (CAPI 1.14) and a v1beta1 (CAPI 1.10) management cluster can run side by side. Children
start in their own session and die with the test process (PR_SET_PDEATHSIG), so nothing outlives
the run even when pytest itself is killed.
"""

from __future__ import annotations

import base64
import ctypes
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from .pki import CertificateAuthority, service_account_keys, write_private

PR_SET_PDEATHSIG = 1
START_TIMEOUT = float(os.environ.get("TEST_APISERVER_START_TIMEOUT", "90"))


def binaries_dir() -> Path:
    if os.environ.get("KUBEBUILDER_ASSETS"):
        return Path(os.environ["KUBEBUILDER_ASSETS"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "kubectl-machinepool" / "testbin"


def pinned_versions() -> dict[str, str]:
    text = (Path(__file__).parent.parent / "testbin" / "versions.env").read_text()
    pairs = (
        line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")
    )
    return {k.strip(): v.strip() for k, v in pairs}


def missing_testbin() -> list[str]:
    """What the test cluster needs and is absent, by name (empty when everything is there)."""
    base, versions = binaries_dir(), pinned_versions()
    needed = [base / name for name in ("etcd", "kube-apiserver", "kubectl")]
    needed += [
        base / "crds" / f"capi-{versions[key]}" / "webhook" / "manifests.yaml"
        for key in ("CAPI_VERSION", "CAPI_V1BETA1_VERSION")
    ]
    return [str(path) for path in needed if not path.exists()]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Enter = Callable[[], None]  # run in a child before exec: joins a network namespace


def _die_with_parent(enter: Enter | None) -> Enter:
    def preexec() -> None:
        os.setsid()
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if enter is not None:
            enter()

    return preexec


class Process:
    def __init__(
        self,
        name: str,
        argv: list[str],
        workdir: Path,
        enter: Enter | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.log = workdir / f"{name}.log"
        with self.log.open("wb") as log:
            self.popen = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_die_with_parent(enter),  # noqa: PLW1509 - single-threaded at spawn
            )

    def check_alive(self) -> None:
        if self.popen.poll() is not None:
            raise RuntimeError(
                f"{self.name} exited with code {self.popen.returncode}\n{self.tail()}"
            )

    def tail(self, size: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-size:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()


def _wait(what: str, check: Any, process: Process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        process.check_alive()
        try:
            if check():
                return
        except Exception as err:
            last = err
        time.sleep(0.2)
    raise TimeoutError(f"{what} not ready after {timeout}s (last error: {last})\n{process.tail()}")


class Etcd:
    def __init__(self, workdir: Path, enter: Enter | None = None) -> None:
        self.port, peer = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        peer_url = f"http://127.0.0.1:{peer}"
        self.process = Process(
            "etcd",
            [
                str(binaries_dir() / "etcd"),
                f"--data-dir={workdir / 'etcd'}",
                f"--listen-client-urls={self.url}",
                f"--advertise-client-urls={self.url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
            workdir,
            enter,
        )
        if enter is None:

            def healthy() -> bool:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as resp:
                    return b'"health":"true"' in resp.read()

            _wait("etcd", healthy, self.process, 30)


@dataclass(frozen=True)
class User:
    name: str
    kubeconfig: Path
    cert: Path
    key: Path


class APIServer:
    """A kube-apiserver on a free loopback port, with RBAC and client-certificate users."""

    def __init__(
        self,
        name: str,
        etcd: Etcd,
        workdir: Path,
        port: int | None = None,
        enter: Enter | None = None,
        disable_admission: str = "ServiceAccount,TaintNodesByCondition",
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.workdir = workdir / name
        pki = self.workdir / "pki"
        pki.mkdir(parents=True)
        self.port = port or free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        serving_ca = CertificateAuthority(f"{name}-serving-ca")
        self.client_ca = CertificateAuthority(f"{name}-client-ca")
        self.ca_file = write_private(pki / "serving-ca.crt", serving_ca.pem)
        serving = serving_ca.issue("kube-apiserver", server_names=("localhost", "127.0.0.1"))
        write_private(pki / "apiserver.crt", serving.cert)
        write_private(pki / "apiserver.key", serving.key)
        write_private(pki / "client-ca.crt", self.client_ca.pem)
        sa_pub, sa_key = service_account_keys(pki)
        self._enter = enter
        self._argv = [
            str(binaries_dir() / "kube-apiserver"),
            f"--etcd-servers={etcd.url}",
            f"--etcd-prefix=/registry-{name}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.port}",
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'client-ca.crt'}",
            f"--service-account-issuer={self.server}/",
            f"--service-account-key-file={sa_pub}",
            f"--service-account-signing-key-file={sa_key}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            # No controllers run here by default: nothing would create service accounts, or
            # lift the not-ready taint TaintNodesByCondition puts on every new Node.
            f"--disable-admission-plugins={disable_admission}",
            "--profiling=false",
            *extra_args,  # e.g. the scale benchmark's audit log
        ]
        self.process = Process(f"kube-apiserver-{name}", self._argv, self.workdir, enter)
        self.admin = self.add_user("admin", ("system:masters",))
        _wait(f"kube-apiserver {name}", self._ready, self.process, START_TIMEOUT)

    def restart(self) -> None:
        """Stop the server and start it again on the same port, etcd and certificates: every
        connection to it drops, and for a few seconds none is accepted."""
        self.process.stop()
        self.process = Process(f"kube-apiserver-{self.name}", self._argv, self.workdir, self._enter)
        _wait(f"kube-apiserver {self.name}", self._ready, self.process, START_TIMEOUT)

    def ssl_context(self, user: User | None = None) -> ssl.SSLContext:
        user = user or self.admin
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        ctx.load_cert_chain(str(user.cert), str(user.key))
        return ctx

    def _ready(self) -> bool:
        for path in ("/readyz", "/api/v1/namespaces/default"):
            try:
                with urllib.request.urlopen(
                    self.server + path, context=self.ssl_context(), timeout=5
                ):
                    pass
            except urllib.error.HTTPError as err:
                err.close()  # holds the socket; a 500 from /readyz just means "not yet"
                return False
        return True

    def kubeconfig_dict(self, user: User, context: str | None = None) -> dict[str, Any]:
        context = context or f"{user.name}@{self.name}"
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.name,
                    "cluster": {
                        "server": self.server,
                        "certificate-authority-data": base64.b64encode(
                            self.ca_file.read_bytes()
                        ).decode(),
                    },
                }
            ],
            "users": [
                {
                    "name": user.name,
                    "user": {
                        "client-certificate-data": base64.b64encode(
                            user.cert.read_bytes()
                        ).decode(),
                        "client-key-data": base64.b64encode(user.key.read_bytes()).decode(),
                    },
                }
            ],
            "contexts": [{"name": context, "context": {"cluster": self.name, "user": user.name}}],
            "current-context": context,
        }

    def add_user(self, name: str, groups: tuple[str, ...] = ()) -> User:
        """A client-certificate user with its own kubeconfig file (RBAC decides what it may do)."""
        users = self.workdir / "users"
        users.mkdir(exist_ok=True)
        issued = self.client_ca.issue(name, groups)
        cert = write_private(users / f"{name}.crt", issued.cert)
        key = write_private(users / f"{name}.key", issued.key)
        user = User(name, users / f"{name}.kubeconfig", cert, key)
        write_private(user.kubeconfig, yaml.safe_dump(self.kubeconfig_dict(user)).encode())
        return user


class ControlPlane:
    """etcd plus named API servers, torn down together."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="kmp-controlplane-"))
        self.servers: dict[str, APIServer] = {}
        self._etcd: Etcd | None = None

    def server(self, name: str, extra_args: tuple[str, ...] = ()) -> APIServer:
        """The named server, started on first use (`extra_args` only apply then)."""
        if name not in self.servers:
            if self._etcd is None:
                self._etcd = Etcd(self.workdir)
            self.servers[name] = APIServer(name, self._etcd, self.workdir, extra_args=extra_args)
        return self.servers[name]

    def stop(self) -> None:
        for server in reversed(list(self.servers.values())):
            server.process.stop()
        if self._etcd is not None:
            self._etcd.process.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def installed_plugin() -> Path:
    """The console script `pip install -e .[test]` put next to this interpreter."""
    script = Path(sys.executable).parent / "kubectl-machinepool"
    if not script.exists():
        message = f"{script} is missing: install the package with pip install -e '.[test]'"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return script
