"""The plugin as users get it: installed by pip, found and run by the real kubectl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.controlplane import binaries_dir, installed_plugin
from support.objects import list_scenario

REPO = Path(__file__).resolve().parents[2]


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Outside the repository, so `python -c` cannot import the package from the working tree.
    return subprocess.run(
        argv, env=env, cwd="/", capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def plugin_env(v1beta2, tmp_path: Path) -> dict[str, str]:
    """A shell-like environment: the plugin and the built kubectl on PATH, the test cluster's kubeconfig."""
    return {
        "PATH": os.pathsep.join(
            [str(installed_plugin().parent), str(binaries_dir()), "/usr/bin", "/bin"]
        ),
        "HOME": str(tmp_path),
        "KUBECONFIG": str(v1beta2.kubeconfig),
    }


def test_kubectl_dispatches_to_the_plugin(v1beta2, plugin_env: dict[str, str]) -> None:
    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    v1beta2.workload_kubeconfig_secret(ns, "prod")  # list reads the Cluster's Nodes too
    kubectl = str(binaries_dir() / "kubectl")

    plugins = run([kubectl, "plugin", "list"], plugin_env)
    assert str(installed_plugin()) in plugins.stdout

    via_kubectl = run([kubectl, "machinepool", "list", "-n", ns, "-o", "json"], plugin_env)
    direct = run([str(installed_plugin()), "list", "-n", ns, "-o", "json"], plugin_env)
    assert (via_kubectl.returncode, via_kubectl.stderr) == (0, "")
    assert json.loads(via_kubectl.stdout) == json.loads(direct.stdout)
    assert len(json.loads(via_kubectl.stdout)["items"]) == 4

    table = run([kubectl, "machinepool", "list", "-n", ns], plugin_env)
    assert table.stdout.splitlines()[0].split()[:2] == ["NAME", "CLUSTER"]

    completion = run([kubectl, "__complete", "machinepool", "li"], plugin_env)
    assert [line.split("\t")[0] for line in completion.stdout.splitlines()] == ["list", ":4"]


def test_pip_install_in_a_fresh_venv(v1beta2, tmp_path: Path) -> None:
    """`pip install .` gives both executables, and they work against the test cluster."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    # Build from a clean copy: an in-tree build/ directory can hold modules that no longer exist.
    source = tmp_path / "source"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache"
        ),
    )
    wheels = tmp_path / "wheels"
    built = run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], dict(os.environ))
    assert built.returncode == 0, built.stderr
    fresh = tmp_path / "fresh"
    assert (
        run(
            [sys.executable, "-m", "venv", "--without-pip", str(fresh)], dict(os.environ)
        ).returncode
        == 0
    )
    wheel = next(wheels.glob("kubectl_machinepool-*.whl"))
    installed = run(
        [*pip, "--python", str(fresh / "bin" / "python"), "install", "--no-deps", str(wheel)],
        dict(os.environ),
    )
    assert installed.returncode == 0, installed.stderr
    # Dependencies come from this test environment instead of a second download.
    site = Path(
        run(
            [
                str(fresh / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            {},
        ).stdout.strip()
    )
    (site / "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    env = {"PATH": str(fresh / "bin"), "HOME": str(tmp_path), "KUBECONFIG": str(v1beta2.kubeconfig)}
    where = run(
        [str(fresh / "bin" / "python"), "-c", "import kubectl_machinepool as k; print(k.__file__)"],
        env,
    )
    assert where.stdout.startswith(str(fresh))
    version = run([str(fresh / "bin" / "kubectl-machinepool"), "--version"], env)
    assert version.stdout.startswith("kubectl-machinepool ")
    assert run([str(fresh / "bin" / "kubectl-machinepool"), "--help"], env).returncode == 0
    completer = run([str(fresh / "bin" / "kubectl_complete-machinepool"), ""], env)
    assert completer.returncode == 0
    packaged = run(
        [
            str(fresh / "bin" / "python"),
            "-c",
            "import importlib.resources as r; print(sorted(p.name for p in r.files('kubectl_machinepool.completions').iterdir()));"
            "print(r.files('kubectl_machinepool').joinpath('schemas/describe.json').is_file())",
        ],
        env,
    )
    assert "kubectl-machinepool.bash" in packaged.stdout
    assert packaged.stdout.splitlines()[-1] == "True"  # the describe -o json schema ships too

    ns = v1beta2.new_namespace()
    v1beta2.create(list_scenario("v1beta2", ns))
    listed = run([str(fresh / "bin" / "kubectl-machinepool"), "list", "-A"], env)
    assert listed.returncode == 0, listed.stderr
    asg = next(
        line.split()
        for line in listed.stdout.splitlines()
        if line.startswith(f"{ns} ") and " asg-workers " in line
    )
    # NAMESPACE NAME CLUSTER DESIRED CURRENT READY UP-TO-DATE AVAILABLE: the ASG says 3, 2 Nodes
    # are Ready; no kubeconfig Secret, so whether they are up to date is unknown.
    assert asg[:8] == [ns, "asg-workers", "prod", "3", "3", "2", "<unknown>", "2"]
