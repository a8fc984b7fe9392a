"""Start-up of the plugin beside kubectl's, on the real test cluster. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/startup.py [--runs 30] [--bin DIR]

Runs, alternating so that a load spike hits every command alike: `kubectl-machinepool --help`
against `kubectl get --help`, and a warm `kubectl_complete-machinepool describe ""` (pool names
from the few-seconds cache) against `kubectl __complete get machinepools`; then the two ratios of
medians against the 1.5x targets, and where a bare click group's --help (the floor of any click
program on this interpreter) stands. --bin names the directory holding the two console scripts
(default: next to this interpreter); pass a non-editable install's bin/ to leave out the import
hook an editable install adds to every start. PYTHONPATH, when set, is passed on.

Needs the test binaries (tests/testbin/build.sh) and the package installed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from completion import scenario_cluster
from support.controlplane import binaries_dir, installed_plugin

TARGET = 1.5
# The floor of any click program: the same interpreter printing a one-command group's help.
BARE_CLICK = """import click
@click.group()
def group():
    "A group."
@group.command()
def one():
    "One command."
group()
"""
POOL = "vmss-workers"  # a pool of the azure-vmss scenario: proof the answer is the real one


@dataclass(frozen=True)
class Row:
    label: str
    argv: list[str]
    expect: str  # a piece of the standard output that shows the command did its job
    warm_cache: bool = False


def run_once(row: Row, env: dict[str, str], cache: Path) -> float:
    if row.warm_cache:
        _freshen(cache / "kubectl-machinepool" / "completion")
    start = time.perf_counter()
    done = subprocess.run(row.argv, env=env, capture_output=True, text=True, check=False)
    took = (time.perf_counter() - start) * 1000
    if done.returncode != 0 or row.expect not in done.stdout:
        raise SystemExit(f"{' '.join(row.argv)} failed: {done.stdout[-300:]!r} {done.stderr!r}")
    return took


def _freshen(directory: Path) -> None:
    """Cache entries live a few seconds; a long benchmark keeps them young so that every warm
    run is answered from the cache, as the second TAB of a word is."""
    now = time.time()
    for entry in directory.glob("*.json"):
        os.utime(entry, (now, now))


def spread(took: list[float]) -> str:
    ordered = sorted(took)
    quartiles = statistics.quantiles(ordered, n=4)
    return (
        f"{statistics.median(ordered):7.1f} {quartiles[0]:7.1f} {quartiles[2]:7.1f}"
        f" {ordered[0]:7.1f} {ordered[-1]:7.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--bin", type=Path, help="directory of the installed console scripts")
    args = parser.parse_args()
    plugins = (args.bin or installed_plugin().parent).resolve()
    kubectl = str(binaries_dir() / "kubectl")
    with scenario_cluster(plugins) as (namespace, cache, env):
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        scope = ["-n", namespace]
        bare = cache / "bare_click.py"
        bare.write_text(BARE_CLICK)
        rows = [
            Row("kubectl-machinepool --help", [str(plugins / "kubectl-machinepool"), "--help"], "describe"),
            Row("kubectl get --help", [kubectl, "get", "--help"], "Usage:"),
            Row('kubectl_complete-machinepool describe "" (warm)', [str(plugins / "kubectl_complete-machinepool"), "describe", *scope, ""], POOL, warm_cache=True),
            Row("kubectl __complete get machinepools", [kubectl, "__complete", "get", "machinepools", *scope, ""], POOL),
            Row("a bare click group --help (the floor)", [str(plugins / "python"), str(bare), "--help"], "one"),
        ]  # fmt: skip
        for row in rows:  # the first run fills caches (ours, kubectl's discovery, byte code)
            run_once(row, env, cache)
        took: dict[str, list[float]] = {row.label: [] for row in rows}
        for _ in range(args.runs):
            for row in rows:
                took[row.label].append(run_once(row, env, cache))
    print(
        f"{args.runs} alternating runs, milliseconds, {os.cpu_count()} CPUs, scripts in {plugins}"
    )
    print(f"  {'':<50} {'median':>7} {'p25':>7} {'p75':>7} {'min':>7} {'max':>7}")
    for row in rows:
        print(f"  {row.label:<50} {spread(took[row.label])}")
    for ours, theirs in ((rows[0], rows[1]), (rows[2], rows[3])):
        ratio = statistics.median(took[ours.label]) / statistics.median(took[theirs.label])
        verdict = "within" if ratio <= TARGET else "over"
        print(f"  {ours.label} / {theirs.label}: {ratio:.2f}x ({verdict} the {TARGET}x target)")
    floor = statistics.median(took[rows[4].label])
    print(
        f"  {rows[4].label} / {rows[1].label}: {floor / statistics.median(took[rows[1].label]):.2f}x;"
        f" {rows[0].label} / {rows[4].label}: {statistics.median(took[rows[0].label]) / floor:.2f}x"
    )


if __name__ == "__main__":
    main()
