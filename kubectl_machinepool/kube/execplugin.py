"""Exec credential plugins (`aws eks get-token`, `kubelogin`, ...), run the way kubectl runs them,
but never left behind.

kubectl waits for a plugin as long as it takes. Here a plugin runs under the request timeout when
one applies (--request-timeout, or the fleet's bound on each context): it then cannot prompt,
runs in a session of its own, and at the bound it is killed with every process it started. Only
an unbounded plugin with a terminal on stdin and stderr may prompt; it stays in the terminal's
process group, where Ctrl-C reaches it as it reaches kubectl's. Whatever else is still running
when the run ends (an interrupt, an error in another thread) is killed with it, and what a
plugin prints is read up to a bound, not into memory without end.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectl_machinepool.base.errors import ConfigError
from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import parse_time
from kubectl_machinepool.kube.kubeconfig import ClusterEntry, ExecConfig

if TYPE_CHECKING:
    import subprocess

# An ExecCredential is a token or a certificate and key: a few KiB. More is not a credential.
MAX_CREDENTIAL = 1 << 20
# Only the last line of what a failing plugin says is shown.
STDERR_KEPT = 64 << 10
_CHUNK = 64 << 10

HINT = "run the credential plugin named in the kubeconfig by hand to see why"


@record(slots=False)
class Credential:
    token: str | None = None
    cert: bytes | None = None
    key: bytes | None = None
    expiry: datetime | None = None


class _Running:
    """Every plugin still running, so that the end of the run can kill what a thread left."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.processes: dict[int, tuple[subprocess.Popen[bytes], bool]] = {}
        self.ending = False


_running = _Running()


def run(
    plugin: ExecConfig, cluster: ClusterEntry, context: str, timeout: float | None
) -> Credential:
    """The plugin's ExecCredential; timeout (seconds) bounds the whole run of the plugin."""
    failed = f'getting credentials for context "{context}" failed'
    interactive = timeout is None and _interactive(plugin)
    command = plugin.command
    if plugin.directory and os.sep in command and not os.path.isabs(command):
        command = str(Path(plugin.directory) / command)
    env = {
        **os.environ,
        **dict(plugin.env),
        "KUBERNETES_EXEC_INFO": json.dumps(_exec_info(plugin, cluster, interactive)),
    }
    process = _start([command, *plugin.args], env, interactive, failed)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        output, said = _outputs(process, deadline, failed)
    except _TimedOut:
        # kubectl names the executable, never its arguments: they may carry an account or role.
        raise ConfigError(
            f"{failed}: the credential plugin {escape(shlex.quote(plugin.command))} gave no "
            f"credential within {timeout:g}s and was stopped",
            hint=HINT + ", or give it longer with --request-timeout",
        ) from None
    finally:
        _end(process, grouped=not interactive)
    if process.returncode != 0:
        lines = said.decode(errors="replace").strip().splitlines()
        why = f": {lines[-1]}" if lines else ""
        raise ConfigError(f"{failed}: the plugin exited with {process.returncode}{why}", hint=HINT)
    return _credential(output, plugin, failed)


def end_all() -> None:
    """The run is ending: every plugin still running is killed with what it started, and none
    starts after this."""
    with _running.lock:
        _running.ending = True
        for process, grouped in _running.processes.values():
            if process.returncode is None:  # not reaped: its group id is still its own
                _kill(process, grouped)


def _interactive(plugin: ExecConfig) -> bool:
    if plugin.interactive_mode == "Never":
        return False
    # Prompts go to stderr, answers come from stdin: both must be the terminal.
    return all(s is not None and s.isatty() for s in (sys.stdin, sys.stderr))


def _exec_info(plugin: ExecConfig, cluster: ClusterEntry, interactive: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"interactive": interactive}
    if plugin.provide_cluster_info:
        import base64

        spec["cluster"] = {
            "server": cluster.server,
            "tls-server-name": cluster.tls_server_name,
            "insecure-skip-tls-verify": cluster.insecure,
            "disable-compression": cluster.disable_compression,
            "certificate-authority-data": base64.b64encode(cluster.ca_data).decode()
            if cluster.ca_data
            else None,
        }
    return {"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec}


def _start(
    argv: list[str], env: dict[str, str], interactive: bool, failed: str
) -> subprocess.Popen[bytes]:
    import subprocess  # only for exec plugins: kept off every other run's start-up

    with _running.lock:
        if _running.ending:
            raise ConfigError(f"{failed}: the run is ending")
        try:
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=None if interactive else subprocess.PIPE,
                stdin=None if interactive else subprocess.DEVNULL,
                env=env,
                # Its own session: its process group is all it started, to be killed as one,
                # and no terminal signal reaches it but through this process.
                start_new_session=not interactive,
            )
        except OSError as err:
            # The executable, never its arguments (they may name an account or a role).
            named = escape(shlex.quote(argv[0]))
            raise ConfigError(
                f"{failed}: cannot run {named}: {err.strerror or err}", hint=HINT
            ) from err
        _running.processes[process.pid] = (process, not interactive)
    return process


class _TimedOut(Exception):
    pass


def _outputs(
    process: subprocess.Popen[bytes], deadline: float | None, failed: str
) -> tuple[bytes, bytes]:
    """What the plugin printed on stdout and the end of its stderr, once it has exited."""
    import selectors
    import subprocess

    kept: dict[Any, bytearray] = {s: bytearray() for s in (process.stdout, process.stderr) if s}
    with selectors.DefaultSelector() as selector:
        for stream in kept:
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise _TimedOut
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:  # closed by the plugin and by every child it handed it to
                    selector.unregister(key.fileobj)
                    continue
                buffer = kept[key.fileobj]
                buffer += chunk
                if key.fileobj is process.stderr:
                    del buffer[:-STDERR_KEPT]
                elif len(buffer) > MAX_CREDENTIAL:
                    raise ConfigError(
                        f"{failed}: the plugin printed more than {MAX_CREDENTIAL >> 20} MiB",
                        hint=HINT,
                    )
    try:
        process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # it closed its output but goes on running
        raise _TimedOut from None
    return bytes(kept.get(process.stdout, b"")), bytes(kept.get(process.stderr, b""))


def _end(process: subprocess.Popen[bytes], *, grouped: bool) -> None:
    """Reaped; killed first, with its group, unless it was seen to exit. The group is killed
    before its leader is reaped: until then its id cannot name anyone else's processes."""
    try:
        if process.returncode is None:
            _kill(process, grouped)
        process.wait()
    finally:
        with _running.lock:
            _running.processes.pop(process.pid, None)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _kill(process: subprocess.Popen[bytes], grouped: bool) -> None:
    try:
        if grouped:
            os.killpg(process.pid, signal.SIGKILL)
        else:  # in the terminal's process group, which is also this process's
            process.kill()
    except ProcessLookupError:
        pass


def _credential(output: bytes, plugin: ExecConfig, failed: str) -> Credential:
    try:
        answer = json.loads(output)
    except (ValueError, RecursionError):
        raise ConfigError(f"{failed}: the plugin did not print an ExecCredential") from None
    status = answer.get("status") if isinstance(answer, dict) else None
    if not isinstance(status, dict) or answer.get("apiVersion") != plugin.api_version:
        raise ConfigError(
            f"{failed}: the plugin did not print a {plugin.api_version} ExecCredential"
        )
    expiry = status.get("expirationTimestamp")
    when = parse_time(expiry) if isinstance(expiry, str) else None
    token, cert, key = (status.get(k) for k in ("token", "clientCertificateData", "clientKeyData"))
    if isinstance(token, str) and token:
        return Credential(token=token, expiry=when)
    if isinstance(cert, str) and isinstance(key, str) and cert and key:
        return Credential(cert=cert.encode(), key=key.encode(), expiry=when)
    raise ConfigError(f"{failed}: the plugin gave neither a token nor a client certificate and key")
