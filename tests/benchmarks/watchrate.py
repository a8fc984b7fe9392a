"""API requests per minute of a followed view against a steady pool. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/watchrate.py [--n 1000] [--minutes 3] [--bin DIR]

Loads the scale benchmark's pool with MachinePool Machines (scale.py's `machines` shape: N
Machines, AzureMachinePoolMachines and Nodes) on a fresh management and workload API server
pair, starts `describe POOL -w`, `list -w` and `rollout status POOL` in turn (the pool does not
change, so rollout status waits as long as it is let), each for --minutes after its start-up
reads, and counts from the servers' audit logs the requests each made, by verb, per minute; then
the same view polled as `watch -n 2` would run it (one describe every 2 s), for comparison.
Everything listens on 127.0.0.1 and stops when the script ends.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import environment
from scalefleet import SHAPES
from scaleload import fleet_servers
from scalerun import _read_requests, _sizes

# Start-up reads (two describes' worth, and the watches' first lists) end well within this.
SETTLE = 15.0
POLL_EVERY = 2.0


def _count(logs: dict[str, Path], before: dict[str, int]) -> Counter[str]:
    """Requests since before, by verb (list, watch, get, ...) over both servers."""
    verbs: Counter[str] = Counter()
    for key, count in _read_requests(logs, before).items():
        verbs[key.split(":", 1)[1].split(" ", 1)[0]] += count
    return verbs


def _followed(
    argv: list[str], env: dict[str, str], logs: dict[str, Path], minutes: float
) -> Counter[str]:
    plugin = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(SETTLE)
        before = _sizes(logs)
        time.sleep(minutes * 60)
        return _count(logs, before)
    finally:
        plugin.send_signal(signal.SIGTERM)  # a background job ignores SIGINT
        plugin.wait(30)


def _polled(
    argv: list[str], env: dict[str, str], logs: dict[str, Path], minutes: float
) -> Counter[str]:
    before = _sizes(logs)
    end = time.monotonic() + minutes * 60
    while time.monotonic() < end:
        started = time.monotonic()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
        time.sleep(max(POLL_EVERY - (time.monotonic() - started), 0))
    return _count(logs, before)


def _row(label: str, verbs: Counter[str], minutes: float) -> str:
    total = sum(verbs.values())
    by_verb = ", ".join(f"{verb} {count / minutes:.1f}" for verb, count in sorted(verbs.items()))
    return f"| {label} | {total / minutes:.1f} | {by_verb or '-'} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--bin", type=Path, default=Path(sys.executable).parent)
    args = parser.parse_args()
    shape = SHAPES["machines"]
    plugin = str(args.bin / "kubectl-machinepool")
    started = time.perf_counter()
    with fleet_servers("machines", shape.pool_kinds()) as grown:
        grown.grow_to(args.n)
        pair = grown.pair
        env = environment(args.bin.resolve(), Path(tempfile.mkdtemp(prefix="kmp-watchrate-")))
        logs = pair.audit_logs()
        scope = ["-n", pair.namespace, "--kubeconfig", str(pair.kubeconfig)]
        describe = [plugin, "describe", shape.pool, *scope]
        rows = [
            _row(
                "describe -w", _followed([*describe, "-w"], env, logs, args.minutes), args.minutes
            ),
            _row(
                "list -w",
                _followed([plugin, "list", *scope, "-w"], env, logs, args.minutes),
                args.minutes,
            ),
            _row(
                "rollout status (waiting)",
                _followed(
                    [plugin, "rollout", "status", shape.pool, *scope], env, logs, args.minutes
                ),
                args.minutes,
            ),
            _row(
                f"describe every {POLL_EVERY:.0f} s (polling)",
                _polled(describe, env, logs, args.minutes),
                args.minutes,
            ),
        ]
    print(
        f"# Requests per minute against a steady pool of N={args.n} instances, {args.minutes:g} min each"
    )
    print("| view | requests per minute | by verb |")
    print("|---|---|---|")
    for row in rows:
        print(row)
    print(f"benchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
