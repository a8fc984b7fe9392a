"""Completion latency beside kubectl's own, on the real test cluster. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/completion.py [--runs 20]

Needs the test binaries (tests/testbin/build.sh) and the package installed in .venv.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.controlplane import ControlPlane, binaries_dir, installed_plugin
from support.management import create_scenario, management_cluster
from support.scenarios import SCENARIOS


def timed(
    argv: list[str], env: dict[str, str], before: Callable[[], None], runs: int
) -> list[float]:
    took = []
    for _ in range(runs):
        before()
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        took.append((time.perf_counter() - start) * 1000)
        if done.returncode != 0 or "vmss-workers" not in done.stdout:
            raise SystemExit(f"{' '.join(argv)} did not complete: {done.stdout!r} {done.stderr!r}")
    return took


@contextmanager
def scenario_cluster(plugins: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """The test API server holding one azure-vmss scenario: its namespace, a fresh cache (and
    home) directory, and the environment that reaches it with the plugins in plugins/ on PATH."""
    plane = ControlPlane()
    cache = Path(tempfile.mkdtemp(prefix="kmp-bench-cache-"))
    try:
        mgmt = management_cluster(plane, "v1beta2")
        namespace = mgmt.new_namespace()
        create_scenario(mgmt, SCENARIOS["azure-vmss"]("v1beta2", namespace, namespace[2:]))
        env = {
            "PATH": os.pathsep.join([str(plugins), str(binaries_dir()), "/usr/bin", "/bin"]),
            "HOME": str(cache), "XDG_CACHE_HOME": str(cache), "KUBECONFIG": str(mgmt.kubeconfig),
        }  # fmt: skip
        yield namespace, cache, env
    finally:
        plane.stop()
        shutil.rmtree(cache, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    with scenario_cluster(installed_plugin().parent) as (namespace, cache, env):
        kubectl = str(binaries_dir() / "kubectl")

        def cold() -> None:
            shutil.rmtree(cache / "kubectl-machinepool", ignore_errors=True)

        def warm() -> None:
            """The cache entry is fresh: the previous run wrote it."""

        ours = [kubectl, "__complete", "machinepool", "describe", "-n", namespace, ""]
        direct = [str(installed_plugin().parent / "kubectl_complete-machinepool"), "describe", "-n", namespace, ""]  # fmt: skip
        rows = [
            ("kubectl __complete get machinepools (kubectl's own)", [kubectl, "__complete", "get", "machinepools", "-n", namespace, ""], cold),
            ("kubectl __complete machinepool describe, cold cache", ours, cold),
            ("kubectl __complete machinepool describe, warm cache", ours, warm),
            ("kubectl_complete-machinepool describe, cold cache", direct, cold),
            ("kubectl_complete-machinepool describe, warm cache", direct, warm),
        ]  # fmt: skip
        print(f"{runs} runs each, milliseconds (median / p90 / max), {os.cpu_count()} CPUs")
        for label, argv, before in rows:
            took = sorted(timed(argv, env, before, runs))
            p90 = took[int(len(took) * 0.9) - 1]
            print(f"  {label:<55} {statistics.median(took):7.0f} {p90:7.0f} {took[-1]:7.0f}")


if __name__ == "__main__":
    main()
