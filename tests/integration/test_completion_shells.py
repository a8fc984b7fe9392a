"""Completion against the real test cluster: real bash, zsh and fish loading the shipped scripts,
and the real kubectl running kubectl_complete-machinepool."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.controlplane import binaries_dir, installed_plugin
from support.kubeconfigs import dead_kubeconfig
from support.management import ManagementCluster, create_scenario
from support.scenarios import SCENARIOS

from kubectl_machinepool.cli import suggest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "completions"


def shell(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed (Debian: apt-get install {name})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return found


@pytest.fixture
def scenario(v1beta2: ManagementCluster) -> str:
    namespace = v1beta2.new_namespace()
    create_scenario(v1beta2, SCENARIOS["azure-vmss"]("v1beta2", namespace, namespace[2:]))
    return namespace


@pytest.fixture
def env(v1beta2: ManagementCluster, tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.pathsep.join(
            [str(installed_plugin().parent), str(binaries_dir()), "/usr/bin", "/bin"]
        ),
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "KUBECONFIG": str(v1beta2.kubeconfig),
    }


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd="/", capture_output=True, text=True, timeout=60, check=False
    )


# bash loads the script shipped in completions/, or the one the plugin prints (krew's only way).
BASH_SOURCES = {
    "shipped": f"source {SCRIPTS / 'kubectl-machinepool.bash'}",
    "printed": "source <(kubectl-machinepool completion bash)",
}


@pytest.mark.parametrize("loaded", sorted(BASH_SOURCES))
def test_bash_completes_pools_machines_and_nodes(
    scenario: str, env: dict[str, str], loaded: str
) -> None:
    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        script = (
            f"{BASH_SOURCES[loaded]}\n"
            f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
            "_kubectl_machinepool_completion kubectl-machinepool\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        done = run([shell("bash"), "-c", script], env)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("kubectl-machinepool", "desc") == ["describe"]
    assert complete("kubectl-machinepool", "describe", "-n", scenario, "") == ["vmss-workers"]
    machines = complete("kubectl-machinepool", "delete-machine", "-n", scenario, "--pool", "vmss-workers", "vmss")  # fmt: skip
    assert machines == ["vmss-workers-0", "vmss-workers-1", "vmss-workers-2"]
    nodes = complete("kubectl-machinepool", "delete-machine", "-n", scenario, "--node", "")
    assert nodes == [f"vmss-workers-{scenario[2:]}-00000{i}" for i in range(3)]
    assert scenario in complete("kubectl-machinepool", "list", "-n", "t-")
    # upgrade: the versions the pools ask for, and the fields --set may name for their kind.
    upgrade = ("kubectl-machinepool", "upgrade", "vmss-workers", "-n", scenario)
    assert complete(*upgrade, "--version", "") == ["v1.33.4"]
    assert complete(*upgrade, "--set", "spec.template.image.c") == [
        "spec.template.image.computeGallery.version="
    ]
    # Given a dump, the pools are the dump's, not the cluster's.
    examples = str(REPO / "examples")
    assert complete("kubectl-machinepool", "describe", "-f", examples, "") == [
        "asg-workers", "eks-default", "vmss-batch", "vmss-workers",
    ]  # fmt: skip
    assert complete("kubectl-machinepool", "explain", "mp000") == ["MP0001"]


def test_zsh_loads_the_script_and_completes_pool_names(scenario: str, env: dict[str, str]) -> None:
    # compsys builtins only work inside a completion widget: stand-ins print what they receive.
    script = (
        "autoload -U compinit && compinit -u -D\n"
        f"source {SCRIPTS / '_kubectl-machinepool'}\n"
        '_describe() { print -l -- "${(@P)3}" }\n'
        'compadd() { print -l -- "${(@P)${@[-1]}}" }\n'
        f"words=(kubectl-machinepool describe -n {scenario} ''); CURRENT=5\n"
        "_kubectl_machinepool_completion\n"
    )
    done = run([shell("zsh"), "-f", "-c", script], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["vmss-workers:Cluster prod"]


def test_fish_completes_pool_names(scenario: str, env: dict[str, str]) -> None:
    script = (
        f"source {SCRIPTS / 'kubectl-machinepool.fish'}; "
        f"complete -C 'kubectl-machinepool describe -n {scenario} vm'"
    )
    done = run([shell("fish"), "--no-config", "-c", script], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["vmss-workers\tCluster prod"]


def test_kubectl_runs_kubectl_complete_machinepool(scenario: str, env: dict[str, str]) -> None:
    kubectl = str(binaries_dir() / "kubectl")
    done = run([kubectl, "__complete", "machinepool", "describe", "-n", scenario, ""], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["vmss-workers\tCluster prod", ":4"]
    flags = run([kubectl, "__complete", "machinepool", "delete-machine", "--sc"], env)
    assert flags.stdout.splitlines()[0].startswith("--scale-down\t")


def test_a_dead_cluster_gives_no_candidates(env: dict[str, str], tmp_path: Path) -> None:
    config = dead_kubeconfig(tmp_path)
    done = run(
        [str(installed_plugin().parent / "kubectl_complete-machinepool"), "describe", ""],
        {**env, "KUBECONFIG": str(config)},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, ":4\n", "")


def test_a_second_tab_is_served_from_the_cache(
    v1beta2: ManagementCluster, scenario: str, env: dict[str, str]
) -> None:
    complete = str(installed_plugin().parent / "kubectl_complete-machinepool")
    first = run([complete, "describe", "-n", scenario, ""], env)
    cached = list(Path(env["XDG_CACHE_HOME"]).rglob("*.json"))
    assert len(cached) == 1
    # A pool created now is not offered until the cache entry is older than its TTL.
    pool = v1beta2.api.request(
        "GET", f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{scenario}/machinepools/vmss-workers"
    )
    pool["metadata"] = {"name": "vmss-extra", "namespace": scenario}
    pool.pop("status")
    v1beta2.api.request(
        "POST", f"/apis/cluster.x-k8s.io/v1beta2/namespaces/{scenario}/machinepools", pool
    )
    second = run([complete, "describe", "-n", scenario, ""], env)
    assert first.stdout == second.stdout
    os.utime(cached[0], (0, 0))  # expired
    third = run([complete, "describe", "-n", scenario, ""], env)
    assert "vmss-extra\tCluster prod" in third.stdout.splitlines()
    assert suggest.TTL <= 10  # "a few seconds"
