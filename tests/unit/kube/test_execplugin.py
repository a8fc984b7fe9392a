"""Exec credential plugins that never answer, print too much, or are interrupted: each is
stopped with every process it started. Real scripts; no API server is reached."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.execplugins import (
    FLOOD,
    FOREVER,
    FORKS,
    exec_user,
    left_running,
    pids_of,
    plugin,
    reap,
    wait_for,
)
from support.kubeconfigs import DEAD_SERVER
from support.run import start_plugin

from kubectl_machinepool.base.errors import ConfigError, ExitCode
from kubectl_machinepool.kube.connection import load_connection

# Only keeps a plugin the code failed to stop from hanging the suite; never what is asserted.
GUARD = 120.0


def kubeconfig(path: Path, script: Path) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "eks",
        "clusters": [{"name": "eks", "cluster": {"server": DEAD_SERVER}}],
        "users": [{"name": "u", "user": exec_user(script)}],
        "contexts": [{"name": "eks", "context": {"cluster": "eks", "user": "u"}}],
    }))  # fmt: skip
    return path


def raised(call: Callable[[], Any]) -> BaseException:
    """What call raised, waited for in a thread so that a hang fails the test instead."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as err:  # handed to the test
            outcome.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(GUARD)
    assert not thread.is_alive(), "the plugin was never stopped"
    assert outcome, "the plugin was taken for a credential"
    return outcome[0]


@pytest.fixture
def scripts(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    reap(*tmp_path.glob("*.pids"))


@pytest.mark.parametrize("body", [FOREVER, FORKS], ids=["sleeps", "forks-a-sleeping-child"])
def test_a_plugin_that_never_answers_is_stopped_with_all_it_started(
    scripts: Path, body: str
) -> None:
    script, pids = plugin(scripts, "get-token", body)
    config = kubeconfig(scripts / "config.yaml", script)

    error = raised(lambda: load_connection(str(config), None, {}, plugin_timeout=1))

    assert isinstance(error, ConfigError)
    assert error.message == (
        f'getting credentials for context "eks" failed: the credential plugin {script} '
        "gave no credential within 1s and was stopped"
    )
    assert "--request-timeout" in (error.hint or "")
    assert left_running(pids_of(pids)) == []


def test_the_plugin_is_named_escaped_and_without_its_arguments(scripts: Path) -> None:
    script, _ = plugin(scripts, "get-token\x1b]0;owned\x07", FOREVER)
    config = kubeconfig(scripts / "config.yaml", script)
    document = yaml.safe_load(config.read_text())
    document["users"][0]["user"]["exec"]["args"] = ["--role-arn", "arn:aws:iam::1:role/secret"]
    config.write_text(yaml.safe_dump(document))

    error = raised(lambda: load_connection(str(config), None, {}, plugin_timeout=1))

    assert isinstance(error, ConfigError)
    assert f"plugin '{scripts}/get-token\\x1b]0;owned\\x07' gave no credential" in error.message
    assert "role" not in error.message


def test_a_plugin_that_prints_more_than_a_credential_is_stopped_at_a_mebibyte(
    scripts: Path,
) -> None:
    script, pids = plugin(scripts, "get-token", FLOOD)
    config = kubeconfig(scripts / "config.yaml", script)

    # No time bound: the size bound alone stops it, before its end.
    error = raised(lambda: load_connection(str(config), None, {}))

    assert isinstance(error, ConfigError)
    assert error.message.endswith(": the plugin printed more than 1 MiB")
    assert left_running(pids_of(pids)) == []


@pytest.mark.parametrize("fleet", [False, True], ids=["one-context", "fleet"])
def test_ctrl_c_stops_the_plugin_with_all_it_started(scripts: Path, fleet: bool) -> None:
    """Alone the plugin runs in the main thread; in a fleet, in a thread Ctrl-C does not reach."""
    script, pids = plugin(scripts, "get-token", FORKS)
    config = kubeconfig(scripts / "config.yaml", script)
    which = ["--contexts", "eks"] if fleet else ["--context", "eks"]
    # A bound the interrupt comes long before: what stops the plugin here is Ctrl-C.
    args = ["list", *which, "--kubeconfig", str(config), "--request-timeout", "1h"]
    tool = start_plugin(args, scripts)
    try:
        started = wait_for(pids)
        tool.send_signal(signal.SIGINT)
        tool.communicate(timeout=GUARD)
    finally:
        tool.kill()
        tool.wait(GUARD)

    assert tool.returncode == ExitCode.INTERRUPTED
    assert left_running(started) == []


def test_a_plugin_that_cannot_be_started_is_named(tmp_path: Path) -> None:
    """It said only 'No such file or directory', not which executable."""
    missing = tmp_path / "no-such-plugin"
    config = kubeconfig(tmp_path / "config.yaml", missing)
    error = raised(lambda: load_connection(str(config), None, {}, plugin_timeout=5))
    assert isinstance(error, ConfigError)
    assert error.message == (
        f'getting credentials for context "eks" failed: cannot run {missing}: '
        "No such file or directory"
    )
