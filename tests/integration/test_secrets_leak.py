"""Distinctive credentials never leave memory: not in any output, not in a traceback, not in a file.

Each run is a subprocess of the installed plugin with HOME, TMPDIR and XDG_CACHE_HOME pointing at
fresh directories, so every byte it writes there can be scanned afterwards. The credentials are
seeded where the tool meets them: the management kubeconfig file (client-key-data, as the test
cluster's admin kubeconfig has) and the `<cluster>-kubeconfig` Secret of the workload cluster (a
bearer token, one with a trailing newline, a client key, a password in the server URL).
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.controlplane import User, free_port, installed_plugin
from support.management import ManagementCluster, create_scenario
from support.scenarios import SCENARIOS

POOL = "dev-mp-0"
MACHINE = "dev-mp-0-x7q2p"
# What the workload credentials may do there: what describe and delete-machine read.
WORKLOAD_RULES = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["pods", "secrets"], "verbs": ["list"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list"]},
]
# Every command in every output format, against one namespace.
READS = [
    *(["list", "-o", fmt] for fmt in ("table", "wide", "json", "yaml", "name")),
    *(["describe", "-o", fmt] for fmt in ("tree", "json", "yaml")),
    *(["diagnose", "-o", fmt] for fmt in ("text", "json", "yaml")),
    *(["diff-metadata", "-o", fmt] for fmt in ("text", "json", "yaml")),
    ["delete-machine", MACHINE, "--dry-run=client"],
]


def key_forms(pem: bytes) -> dict[str, bytes]:
    """A private key as it may show up: PEM, base64 of the PEM (kubeconfig data), the DER inside,
    and each line of the PEM body (a partial copy or a different line wrapping)."""
    body = [line for line in pem.splitlines() if line and not line.startswith(b"-----")]
    forms = {
        "PEM": pem.strip(),
        "base64 PEM": base64.b64encode(pem),
        "DER": base64.b64decode(b"".join(body)),
        "PEM body": b"".join(body),
    }
    forms.update({f"PEM line {i + 1}": line for i, line in enumerate(body) if len(line) >= 32})
    return forms


@dataclass(frozen=True)
class Secrets:
    """The distinctive strings of one run, by name; a hit names the secret, never shows it."""

    values: dict[str, bytes] = field(default_factory=dict)

    def add(self, name: str, value: bytes) -> None:
        self.values[name] = value

    def add_key(self, name: str, pem: bytes) -> None:
        for form, value in key_forms(pem).items():
            self.add(f"{name} ({form})", value)

    def found_in(self, data: bytes) -> list[str]:
        return [name for name, value in self.values.items() if value in data]

    def redact(self, text: str) -> str:
        for name, value in self.values.items():
            text = text.replace(value.decode(errors="replace"), f"<{name}>")
        return text


@dataclass(frozen=True)
class Sandbox:
    """The directories a run may write to, and its environment."""

    root: Path
    kubeconfig: Path

    @property
    def dirs(self) -> dict[str, Path]:
        return {name: self.root / name for name in ("home", "tmp", "cache")}

    def env(self) -> dict[str, str]:
        dirs = self.dirs
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        return {
            "PATH": os.pathsep.join([str(installed_plugin().parent), "/usr/bin", "/bin"]),
            "HOME": str(dirs["home"]),
            "TMPDIR": str(dirs["tmp"]),
            "XDG_CACHE_HOME": str(dirs["cache"]),
            "KUBECONFIG": str(self.kubeconfig),
            "LANG": "C.UTF-8",
        }

    def files(self) -> list[Path]:
        return sorted(p for d in self.dirs.values() for p in d.rglob("*") if p.is_file())

    def scan(self, secrets: Secrets) -> list[str]:
        """Every file under HOME, TMPDIR and the cache that holds a secret, read byte for byte."""
        hits = []
        for path in self.files():
            try:
                data = path.read_bytes()
            except OSError:
                continue  # removed while we looked
            hits += [f"{path}: {name}" for name in secrets.found_in(data)]
        return hits

    def temp_files(self) -> list[str]:
        tmp = self.dirs["tmp"]
        return [str(p.relative_to(tmp)) for p in tmp.rglob("*")]


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, env=env, cwd="/", capture_output=True, timeout=120, check=False)


def tail(text: str, lines: int = 4) -> str:
    """The end of a traceback: where it was raised and the exception, secrets redacted."""
    return "\n".join(text.splitlines()[-lines:])


def leaks(result: subprocess.CompletedProcess[bytes], what: str, secrets: Secrets) -> list[str]:
    """What a run's output gave away: secrets by name, or a traceback (which quotes values)."""
    found = []
    for stream, data in (("stdout", result.stdout), ("stderr", result.stderr)):
        found += [f"{what}: {stream} holds {name}" for name in secrets.found_in(data)]
    if b"Traceback" in result.stderr:
        found.append(
            f"{what}: traceback (exit {result.returncode}):\n"
            + tail(secrets.redact(result.stderr.decode(errors="replace")))
        )
    return found


def management_kubeconfig(mgmt: ManagementCluster, directory: Path, server: str = "") -> Path:
    """The admin kubeconfig (client-key-data inline), outside every directory a run may write."""
    config = mgmt.server.kubeconfig_dict(mgmt.server.admin)
    if server:
        config["clusters"][0]["cluster"]["server"] = server
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "management.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def seeded(mgmt: ManagementCluster) -> tuple[str, str]:
    namespace = mgmt.new_namespace()
    salt = namespace.removeprefix("t-")
    create_scenario(mgmt, SCENARIOS["capd"](mgmt.generation, namespace, salt))
    return namespace, salt


def put_workload_kubeconfig(
    mgmt: ManagementCluster, namespace: str, config: dict[str, Any]
) -> None:
    value = base64.b64encode(yaml.safe_dump(config).encode()).decode()
    mgmt.api.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/secrets/dev-kubeconfig",
        {"data": {"value": value}},
        "application/merge-patch+json",
    )


def service_account_token(mgmt: ManagementCluster, namespace: str) -> str:
    """A real bearer token the API server accepts, bound to the workload rules."""
    mgmt.api.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "nodes", "namespace": namespace},
        }
    )
    mgmt.grant(f"system:serviceaccount:{namespace}:nodes", None, WORKLOAD_RULES)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/nodes/token"
    return str(mgmt.api.request("POST", path, request)["status"]["token"])


def workload_user(mgmt: ManagementCluster, namespace: str) -> User:
    user = mgmt.server.add_user(f"workload-{namespace}")
    mgmt.grant(user.name, None, WORKLOAD_RULES)
    return user


def token_config(mgmt: ManagementCluster, token: str, server: str = "") -> dict[str, Any]:
    config = mgmt.server.kubeconfig_dict(mgmt.server.admin, "dev-admin@dev")
    config["users"][0]["user"] = {"token": token}
    if server:
        config["clusters"][0]["cluster"]["server"] = server
    return config


VARIANTS = ["token", "token-newline", "client-key", "password-url", "password-url-down"]


def workload_secret(
    mgmt: ManagementCluster, namespace: str, variant: str, secrets: Secrets
) -> dict[str, Any]:
    """The kubeconfig the variant puts into `<cluster>-kubeconfig`, its secrets registered."""
    if variant.startswith("token"):
        token = service_account_token(mgmt, namespace)
        secrets.add("bearer token", token.encode())
        secrets.add("bearer token signature", token.rpartition(".")[2].encode())
        # `token: |` in YAML: the value ends in a newline, which no HTTP header may carry.
        return token_config(mgmt, token + "\n" if variant == "token-newline" else token)
    user = workload_user(mgmt, namespace)
    secrets.add_key("workload client key", user.key.read_bytes())
    config = mgmt.server.kubeconfig_dict(user, "dev-admin@dev")
    if variant.startswith("password-url"):
        password = f"kmpPW{namespace[2:]}x9"
        secrets.add("password in the server URL", password.encode())
        port = free_port() if variant.endswith("down") else mgmt.server.port
        config["clusters"][0]["cluster"]["server"] = f"https://kmp:{password}@127.0.0.1:{port}"
    return config


@pytest.fixture
def sandbox(v1beta2: ManagementCluster, tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path / "run", management_kubeconfig(v1beta2, tmp_path / "config"))


def management_secrets(mgmt: ManagementCluster) -> Secrets:
    secrets = Secrets()
    secrets.add_key("management client key", mgmt.server.admin.key.read_bytes())
    return secrets


def test_list_and_completion_never_leak_the_management_key(
    v1beta2: ManagementCluster, sandbox: Sandbox
) -> None:
    namespace, _ = seeded(v1beta2)
    secrets = management_secrets(v1beta2)
    env = sandbox.env()
    found = []
    for args in READS[:5]:
        result = run([str(installed_plugin()), *args, "-n", namespace], env)
        assert result.returncode == 0, result.stderr.decode()
        found += leaks(result, " ".join(args), secrets)
    completer = installed_plugin().parent / "kubectl_complete-machinepool"
    for words in (
        ["describe", "-n", namespace, ""],
        ["delete-machine", "-n", namespace, "--pool", POOL, ""],
    ):
        result = run([str(completer), *words], env)
        assert result.returncode == 0
        assert POOL.encode() in result.stdout or b"dev-mp-0-" in result.stdout, result.stdout
        found += leaks(result, "completion " + " ".join(words), secrets)
    assert any(sandbox.dirs["cache"].rglob("*.json")), "the completion cache was not written"
    found += sandbox.scan(secrets)
    found += [f"left in TMPDIR: {name}" for name in sandbox.temp_files()]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("variant", VARIANTS)
def test_workload_credentials_never_leak(
    v1beta2: ManagementCluster, sandbox: Sandbox, variant: str
) -> None:
    namespace, _ = seeded(v1beta2)
    secrets = management_secrets(v1beta2)
    put_workload_kubeconfig(
        v1beta2, namespace, workload_secret(v1beta2, namespace, variant, secrets)
    )
    env = sandbox.env()
    found = []
    for args in READS[5:]:
        result = run([str(installed_plugin()), *args, "-n", namespace], env)
        found += leaks(result, " ".join(args), secrets)
        # Unreadable Nodes are a note, never the end of a read command.
        if args[0] != "delete-machine" and result.returncode != 0:
            found.append(f"{' '.join(args)}: exit {result.returncode}")
    found += sandbox.scan(secrets)
    found += [f"left in TMPDIR: {name}" for name in sandbox.temp_files()]
    assert not found, "\n".join(found)


class StalledServer:
    """Accepts TCP on 127.0.0.1 and never answers: a request to it blocks until the run dies."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        # accept() wakes up now and then to see whether to stop: closing the socket from
        # another thread does not interrupt an accept() blocked on it.
        self.socket.settimeout(0.1)
        self.port = self.socket.getsockname()[1]
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.socket.accept()
            except TimeoutError:
                continue
            self._held.append(conn)
            self.connected.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def stalled() -> Iterator[StalledServer]:
    server = StalledServer()
    yield server
    server.close()


def file_kubeconfig(mgmt: ManagementCluster, directory: Path) -> Path:
    """The admin kubeconfig naming files instead of holding data: the client library has nothing
    to copy for the management cluster, so whatever lands in TMPDIR came from the workload Secret."""
    admin = mgmt.server.admin
    config = mgmt.server.kubeconfig_dict(admin)
    config["clusters"][0]["cluster"] = {
        "server": mgmt.server.server,
        "certificate-authority": str(mgmt.server.ca_file),
    }
    config["users"][0]["user"] = {
        "client-certificate": str(admin.cert),
        "client-key": str(admin.key),
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "files.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("stalls", ["management", "workload"])
def test_a_blocked_run_has_written_no_credential_to_disk(
    v1beta2: ManagementCluster,
    tmp_path: Path,
    stalled: StalledServer,
    stalls: str,
    sig: signal.Signals,
) -> None:
    """While a request hangs, and after the run is killed, TMPDIR holds nothing at all."""
    secrets = management_secrets(v1beta2)
    if stalls == "management":
        kubeconfig = management_kubeconfig(v1beta2, tmp_path / "config", server=stalled.url)
        args = ["list", "-n", "default"]
    else:
        namespace, _ = seeded(v1beta2)
        user = workload_user(v1beta2, namespace)
        secrets.add_key("workload client key", user.key.read_bytes())
        config = v1beta2.server.kubeconfig_dict(user, "dev-admin@dev")
        config["clusters"][0]["cluster"]["server"] = stalled.url
        put_workload_kubeconfig(v1beta2, namespace, config)
        kubeconfig = file_kubeconfig(v1beta2, tmp_path / "config")
        args = ["describe", "-n", namespace]
    box = Sandbox(tmp_path / "run", kubeconfig)
    process = subprocess.Popen(
        [str(installed_plugin()), *args, "--request-timeout", "0"],
        env=box.env(), cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert stalled.connected.wait(60), "the run never reached the stalled server"
        during = box.scan(secrets) + [f"in TMPDIR while blocked: {n}" for n in box.temp_files()]
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    after = box.scan(secrets) + [f"left in TMPDIR after {sig.name}: {n}" for n in box.temp_files()]
    found = during + after + [f"stderr holds {n}" for n in secrets.found_in(err)]
    if b"Traceback" in err:
        found.append("traceback:\n" + tail(secrets.redact(err.decode(errors="replace"))))
    assert not found, "\n".join(found)
