"""An export's size and time, and the fleet view's time across ten contexts. Prints figures,
asserts none.

    .venv/bin/python tests/benchmarks/exportfleet.py [--n 1000] [--contexts 10] [--runs 5]
        [--large-fleet 50] [--parallel N] [--bin DIR]

On a fresh etcd with a management and a workload API server (tests/benchmarks/scaleload.py),
one pool of N instances with MachinePool Machines (the `machines` shape of scale.py) is loaded.
Then, each command --runs times in rounds of seeded shuffled order:

- export of the pool's namespace to a directory and to a .tar.gz: seconds, peak RSS and the
  bytes written (the workload's Nodes are half of them);
- the fleet view: `list -A` and `diagnose -n NS` with --contexts naming --contexts contexts
  that all point at the same management server (so every context reads the N instances),
  against the same command with --context naming one of them; the ratio says how much of a
  sequential walk over the contexts the parallel one costs, printed beside issue 31's targets;
- once after the rounds, `diagnose` over --large-fleet contexts (50 by default): time and memory;
- the CPU seconds of the plugin and of the servers for the diagnose commands: on a machine whose
  cores they share, their sum over the cores is the least time the fleet view can take.

Everything listens on 127.0.0.1 and stops when the script ends.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import environment
from scalefleet import SHAPES
from scaleload import Pair, fleet_servers
from scalerun import Command, Outcome, run


def fleet_kubeconfig(pair: Pair, count: int, path: Path) -> list[str]:
    """count contexts, all naming the management server as its admin."""
    config = pair.management.kubeconfig_dict(pair.management.admin, "ctx-1")
    config["contexts"] = [
        {"name": f"ctx-{i}", "context": dict(config["contexts"][0]["context"])}
        for i in range(1, count + 1)
    ]
    path.write_text(yaml.safe_dump(config))
    return [c["name"] for c in config["contexts"]]


def commands(
    pair: Pair, plugins: Path, work: Path, contexts: list[str], parallel: list[str]
) -> list[Command]:
    plugin = str(plugins / "kubectl-machinepool")
    fleet_config = str(work / "fleet.yaml")
    pool = SHAPES["machines"].pool
    one = ["--kubeconfig", fleet_config, "--context", contexts[0]]
    many = ["--kubeconfig", fleet_config, "--contexts", ",".join(contexts), *parallel]
    ns = ["-n", pair.namespace]
    exported = str(work / "out")
    return [
        Command("export to a directory", [plugin, "export", *ns, "--kubeconfig", str(pair.kubeconfig), "-o", f"{exported}-dir"], "exported 1 MachinePool"),
        Command("export to a .tar.gz", [plugin, "export", *ns, "--kubeconfig", str(pair.kubeconfig), "-o", f"{exported}.tar.gz"], "exported 1 MachinePool"),
        Command("list -A, one context", [plugin, "list", "-A", *one], pool),
        Command(f"list -A, {len(contexts)} contexts", [plugin, "list", "-A", *many], pool),
        Command("diagnose, one context", [plugin, "diagnose", *ns, *one], pool),
        Command(f"diagnose, {len(contexts)} contexts", [plugin, "diagnose", *ns, *many], pool),
    ]  # fmt: skip


def clear_exports(work: Path) -> None:
    shutil.rmtree(work / "out-dir", ignore_errors=True)
    (work / "out.tar.gz").unlink(missing_ok=True)


def sizes(work: Path) -> dict[str, int]:
    directory = work / "out-dir"
    found = {p.name: p.stat().st_size for p in directory.iterdir()} if directory.exists() else {}
    tarball = work / "out.tar.gz"
    if tarball.exists():
        found["out.tar.gz"] = tarball.stat().st_size
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--contexts", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--bin", type=Path, help="directory of the installed console scripts")
    parser.add_argument(
        "--parallel", type=int, help="the fleet commands' --parallel (default: theirs)"
    )
    parser.add_argument(
        "--large-fleet",
        type=int,
        default=50,
        help="contexts of one diagnose run after the rounds (0: none)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    plugins = (args.bin or Path(sys.executable).parent).resolve()
    shape = SHAPES["machines"]
    with fleet_servers("machines", shape.pool_kinds()) as grown:
        print(f"loaded {args.n} instances in {grown.grow_to(args.n):.1f} s", flush=True)
        work = Path(tempfile.mkdtemp(prefix="kmp-exportfleet-"))
        try:
            env = environment(plugins, work)
            contexts = fleet_kubeconfig(grown.pair, args.contexts, work / "fleet.yaml")
            measured: dict[str, list[Outcome]] = {}
            parallel = ["--parallel", str(args.parallel)] if args.parallel else []
            listed = commands(grown.pair, plugins, work, contexts, parallel)
            order = random.Random(16)
            written: dict[str, int] = {}
            for _ in range(args.runs):
                clear_exports(work)
                for command in order.sample(listed, len(listed)):
                    measured.setdefault(command.label, []).append(
                        run(command, env, grown.pair.audit_logs(), args.timeout)
                    )
                written = sizes(work)
            report(measured, written, args)
            if args.large_fleet:
                large(grown.pair, plugins, work, env, args)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


def large(
    pair: Pair, plugins: Path, work: Path, env: dict[str, str], args: argparse.Namespace
) -> None:
    """One diagnose over --large-fleet contexts of the N instances: its time and memory."""
    contexts = fleet_kubeconfig(pair, args.large_fleet, work / "fleet.yaml")
    parallel = ["--parallel", str(args.parallel)] if args.parallel else []
    [*_, command] = commands(pair, plugins, work, contexts, parallel)
    outcome = run(command, env, pair.audit_logs(), args.timeout)
    print(
        f"\ndiagnose, {args.large_fleet} contexts of {args.n} instances (once): "
        f"{outcome.seconds:.2f} s, peak RSS {outcome.rss_kib / 1024:.0f} MB, "
        f"{outcome.request_count} requests"
    )


def report(
    measured: dict[str, list[Outcome]], written: dict[str, int], args: argparse.Namespace
) -> None:
    print(f"\nN={args.n}, {args.runs} runs each, medians (min-max)\n")
    print("| command | seconds | peak RSS MB | requests |")
    print("|---|---|---|---|")
    median: dict[str, float] = {}
    for label, outcomes in measured.items():
        seconds = [o.seconds for o in outcomes]
        median[label] = statistics.median(seconds)
        rss = statistics.median(o.rss_kib for o in outcomes) / 1024
        print(
            f"| {label} | {median[label]:.2f} ({min(seconds):.2f}-{max(seconds):.2f}) "
            f"| {rss:.0f} | {outcomes[-1].request_count} |"
        )
    print("\nexport files (bytes):")
    for name, size in sorted(written.items()):
        print(f"  {name}: {size:,}")
    for verb in ("list -A", "diagnose"):
        one, many = median[f"{verb}, one context"], median[f"{verb}, {args.contexts} contexts"]
        print(
            f"{verb}: {args.contexts} contexts took {many / one:.2f}x one context "
            f"({many:.2f} s against {one:.2f} s; {args.contexts} times one context: {args.contexts * one:.2f} s)"
        )
    print("\nAgainst the targets of issue 31 (diagnose, the judging command):\n")
    print("| target | measured | verdict |")
    print("|---|---|---|")
    one, many = "diagnose, one context", f"diagnose, {args.contexts} contexts"
    ratio = median[many] / median[one]
    rss = {k: statistics.median(o.rss_kib for o in measured[k]) / 1024 for k in (one, many)}
    for target, value, limit in (
        (f"{args.contexts} contexts <= 5.5x one context's time", ratio, 5.5),
        (f"{args.contexts} contexts' peak RSS <= 2x one context's", rss[many] / rss[one], 2.0),
    ):
        print(f"| {target} | {value:.2f}x | {'met' if value <= limit else 'NOT met'} |")
    cpu_bound(measured, one, many)


def cpu_bound(measured: dict[str, list[Outcome]], one: str, many: str) -> None:
    """Where the servers share the plugin's cores, all the CPU both spend bounds the wall time."""
    cores = os.cpu_count() or 1
    print(f"\nCPU seconds, medians ({cores} cores, shared by the plugin and the servers):\n")
    print("| command | plugin | servers and etcd | both / cores | seconds |")
    print("|---|---|---|---|---|")
    bound: dict[str, float] = {}
    for label in (one, many):
        plugin = statistics.median(o.cpu for o in measured[label])
        servers = statistics.median(o.server_cpu for o in measured[label])
        bound[label] = (plugin + servers) / cores
        seconds = statistics.median(o.seconds for o in measured[label])
        print(f"| {label} | {plugin:.2f} | {servers:.2f} | {bound[label]:.2f} | {seconds:.2f} |")
    one_seconds = statistics.median(o.seconds for o in measured[one])
    print(
        f"\nHere no {many} can take less than {bound[many]:.2f} s: "
        f"{bound[many] / one_seconds:.2f}x one context's {one_seconds:.2f} s."
    )


if __name__ == "__main__":
    main()
