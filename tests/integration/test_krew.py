"""The krew path, with the real krew (tests/testbin/build.sh builds it) and the real kubectl: the
manifest passes krew's own validation, and `kubectl krew install --manifest --archive` into an
empty HOME gives a plugin that kubectl runs and completes, which `kubectl krew uninstall` removes."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.controlplane import binaries_dir, pinned_versions
from support.singlefile import (
    BRIDGE,
    EXECUTABLE,
    MANIFEST,
    NOW,
    archive_for_here,
    built,
    interpreter_dir,
    run,
    user_env,
)

pytestmark = pytest.mark.xdist_group("single-file")
KREW = f"krew-{pinned_versions()['KREW_VERSION']}"
VALIDATOR = f"validate-krew-manifest-{pinned_versions()['KREW_VERSION']}"
PLACEHOLDER = "https://example.invalid/kubectl-machinepool/releases/download/v0.1.0/"


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for PATH with kubectl, and krew as kubectl's plugin, kubectl-krew: run with
    its upgrade check off wherever it is run from (krew's validator passes on only PATH), so no
    test asks the internet for krew's latest release."""
    missing = [n for n in ("kubectl", KREW, VALIDATOR) if not (binaries_dir() / n).exists()]
    if missing:
        message = f"krew test binaries missing ({', '.join(missing)}); run tests/testbin/build.sh"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    where = tmp_path_factory.mktemp("tools")
    (where / "kubectl").symlink_to(binaries_dir() / "kubectl")
    wrapper = where / "kubectl-krew"
    wrapper.write_text(f'#!/bin/sh\nKREW_NO_UPGRADE_CHECK=1 exec "{binaries_dir() / KREW}" "$@"\n')
    wrapper.chmod(0o755)
    return where


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Path]:
    """The archives served on loopback, and the manifest pointing at them instead of the
    placeholder host."""
    site = tmp_path / "site"
    site.mkdir()
    for name, path in built().items():
        if name.endswith(".tar.gz"):
            shutil.copy(path, site / name)
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    manifest = tmp_path / MANIFEST
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    text = built()[MANIFEST].read_text()
    assert text.count(PLACEHOLDER) == 4
    manifest.write_text(text.replace(PLACEHOLDER, base))
    yield manifest
    server.shutdown()
    server.server_close()


def test_the_manifest_passes_krews_validation(tools: Path, served: Path, tmp_path: Path) -> None:
    validator = str(binaries_dir() / VALIDATOR)
    env = user_env(tmp_path, tools)
    structure = run([validator, "-manifest", str(built()[MANIFEST]), "-skip-install"], env)
    assert structure.returncode == 0, structure.stderr
    # Every platform downloaded from its uri, checked against its sha256 and installed, with
    # its LICENSE, by `kubectl krew install` as krew's own check runs it.
    installed = run([validator, "-manifest", str(served)], env)
    assert installed.returncode == 0, installed.stderr
    assert "all 4 spec.platforms installed fine" in installed.stderr


def local_index(krew_root: Path, tmp_path: Path) -> None:
    """What `kubectl krew update` leaves, a clone of a plugin index (here one on disk, holding
    the manifest), without which krew refuses to uninstall."""
    origin = tmp_path / "index"
    (origin / "plugins").mkdir(parents=True)
    shutil.copy(built()[MANIFEST], origin / "plugins" / MANIFEST)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for argv in (["init", "-q", str(origin)], ["-C", str(origin), "add", "plugins"],
                 ["-C", str(origin), "commit", "-q", "-m", "index"],
                 ["clone", "-q", str(origin), str(krew_root / "index" / "default")]):  # fmt: skip
        done = run([*git, *argv], env)
        assert done.returncode == 0, done.stderr


def test_krew_installs_it_kubectl_runs_and_completes_it_and_krew_removes_it(
    tools: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    krew_root = home / ".krew"
    env = {
        **user_env(home, tools, krew_root / "bin", interpreter_dir(tmp_path)),
        "KREW_ROOT": str(krew_root),
    }
    local_index(krew_root, tmp_path)
    manifest, archive = built()[MANIFEST], archive_for_here()
    install = ["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"]
    installed = run(install, env)
    assert installed.returncode == 0, installed.stderr
    assert "Installed plugin: machinepool" in installed.stderr
    store = krew_root / "store" / "machinepool" / "v0.1.0"
    assert (krew_root / "bin" / EXECUTABLE).resolve() == store / EXECUTABLE

    version = run(["kubectl", "machinepool", "--version"], env)
    assert version.stdout.startswith("kubectl-machinepool 0.1.0 (commit ")
    assert "unknown" not in version.stdout
    described = run(["kubectl", "machinepool", "describe", "-f", "examples/", "--now", NOW], env)
    assert (described.returncode, described.stderr) == (0, "")
    for pool in ("asg-workers", "eks-default", "vmss-workers"):
        assert f"MachinePool capi-prod/{pool}" in described.stdout

    # Completion through kubectl's bridge, once the caveats' copy is made.
    bridge = ["kubectl", "__complete", "machinepool", ""]
    assert run(bridge, env).stdout.splitlines() == [":0"]  # krew alone cannot place it
    shutil.copy(store / BRIDGE, krew_root / "bin" / BRIDGE)
    words = [line.split("\t")[0] for line in run(bridge, env).stdout.splitlines()]
    assert {"describe", "list", "scale", "rollout", "completion"} <= set(words)
    assert words[-1] == ":4"
    pools = run([*bridge[:-1], "describe", "-f", "examples/", "eks-"], env)
    assert [line.split("\t")[0] for line in pools.stdout.splitlines()] == ["eks-default", ":4"]

    listed = run(["kubectl", "krew", "list"], env)
    assert listed.stdout.split() == ["detached/machinepool"]  # from a manifest, not the index
    removed = run(["kubectl", "krew", "uninstall", "machinepool"], env)
    assert removed.returncode == 0, removed.stderr
    assert not (krew_root / "store" / "machinepool").exists()
    assert sorted(p.name for p in (krew_root / "bin").iterdir()) == [BRIDGE]
    assert run(["kubectl", "machinepool", "--version"], env).returncode != 0
    # The copied bridge, until the caveats' rm, answers nothing rather than an error.
    assert run(bridge, env).stdout.splitlines() == [":0"]
