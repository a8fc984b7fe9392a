"""Speed where management clusters really are: the read commands over a wide-area round trip,
beside clusterctl, kubectl and the floor. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/latency.py [--rtt 0,20,100,300] [--n 100,1000] [--runs 3]
        [--commands describe,list,...] [--contexts 10] [--timeout 120] [--slow-timeout 300]
        [--reference-rtt 100] [--mbit 0] [--bin DIR] [--before DIR] [--verbose]
    .venv/bin/python tests/benchmarks/latency.py --rtt 0,100 --n 100 --runs 1    (a quick try)

The servers are scale.py's (the `machines` shape: a CAPZ AzureMachinePool of N Machines,
AzureMachinePoolMachines and Nodes, bystander teams' pools; a management and a workload API
server). A delay proxy (tests/support/delayproxy.py) stands in front of each: the management
kubeconfig and the `<cluster>-kubeconfig` Secret name the proxies, so every request of every
command, the workload cluster's included, crosses the round trip, and a new connection pays one
more before its first byte (the TCP handshake). For each N, the pool is grown, every command run
once to warm caches (byte code, kubectl's discovery cache), then for each RTT in turn --runs
rounds, each in its own seeded order. --mbit limits the bandwidth too: both proxies share one
link of that rate each way (a VPN, an office uplink), at every RTT.

Commands: the plugin's describe, list -A, diagnose, rollout status (-w=false, --stuck-after 24h:
the grown pool's new generation is observed by no controller here), diff-metadata (each a read
made before, as the warm-up run made it: kube/warmstart.py remembers its Clusters), describe
and list -A as first reads (a cache directory of their own),
and list -A over --contexts contexts that all name the management proxy (a fleet: as many
children at once as cores, its default, and with --parallel as many as contexts); clusterctl
describe cluster (default grouping), and once per RTT with --show-machinesets --grouping=false
(one GET per Machine, in a row: under --slow-timeout); kubectl get of the same kinds
(management, and Nodes on the workload server) and kubectl get machinepools -A; the floor
(floor.py: the LISTs describe issues, one connection each, in parallel, each in one answer as
the plugin's pages of 5000 read them here).

Per command and RTT: the median wall time; at --reference-rtt: round-trip depth (the proxies'
longest chain of flights that wait on each other, see delayproxy.py; not counted at RTT 0,
where flights of parallel requests interleave, nor for a fleet, whose processes wait on none
of each other's answers), round trips paid ((time - time at RTT 0) /
RTT), requests per server (the audit logs), bytes, connections and TLS handshakes per server
(resumed ones apart). Then issue 45's targets. --verbose: requests by verb and resource.
--before DIR runs the plugin's commands from another install's scripts too (a tree of the
commit before), in the same rounds, each labelled "(before)".

Needs the test binaries and GNU time, as scale.py does. Everything listens on 127.0.0.1 and
stops when the script ends.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import shlex
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latencyreport import Sample, print_header, print_size, print_targets
from scale import clusterctl, environment, floor_paths
from scalefleet import CLUSTER, SHAPES
from scaleload import Pair, fleet_servers
from scalerun import Command, run
from support.controlplane import APIServer, binaries_dir
from support.delayproxy import Proxies
from support.kinds import Kinds
from support.kubeapi import KubeAPI

SHAPE = SHAPES["machines"]
# Commands the plugin runs, and the rest, by the label --commands names them with.
PLUGIN = (
    "describe", "list -A", "diagnose", "rollout status", "diff-metadata", "fleet list -A",
    "fleet list -A --parallel", "describe (first read)", "list -A (first read)",
)  # fmt: skip

OTHERS = (
    "clusterctl describe", "clusterctl --grouping=false", "kubectl get (same kinds)",
    "kubectl get nodes", "kubectl get machinepools -A", "floor",
)  # fmt: skip


def through(server: APIServer, url: str, context: str) -> dict[str, Any]:
    """The server's admin kubeconfig, its server swapped for the proxy in front of it."""
    config = server.kubeconfig_dict(server.admin, context)
    config["clusters"][0]["cluster"]["server"] = url
    return config


@dataclass(frozen=True)
class Setup:
    """The proxies in front of one server pair, and the kubeconfigs that name them."""

    pair: Pair
    proxies: Proxies
    kubeconfig: Path
    workload_kubeconfig: Path
    fleet_kubeconfig: Path
    contexts: tuple[str, ...]


def set_up(pair: Pair, proxies: Proxies, work: Path, contexts: int) -> Setup:
    management = proxies.add("management", pair.management.port)
    workload = proxies.add("workload", pair.workload.port)
    kubeconfig = work / "management.yaml"
    kubeconfig.write_text(yaml.safe_dump(through(pair.management, management.url, "mgmt")))
    workload_config = through(pair.workload, workload.url, f"{CLUSTER}-admin@{CLUSTER}")
    workload_kubeconfig = work / "workload.yaml"
    workload_kubeconfig.write_text(yaml.safe_dump(workload_config))
    # The Secret CAPI wrote names the workload server; the plugin must reach it by the proxy.
    api = KubeAPI(pair.management.server, pair.management.ssl_context(), Kinds())
    value = base64.b64encode(yaml.safe_dump(workload_config).encode()).decode()
    api.request(
        "PATCH",
        f"/api/v1/namespaces/{pair.namespace}/secrets/{CLUSTER}-kubeconfig",
        {"data": {"value": value}},
        "application/merge-patch+json",
    )
    fleet = through(pair.management, management.url, "ctx-1")
    names = tuple(f"ctx-{i}" for i in range(1, contexts + 1))
    fleet["contexts"] = [
        {"name": n, "context": dict(fleet["contexts"][0]["context"])} for n in names
    ]
    fleet_kubeconfig = work / "fleet.yaml"
    fleet_kubeconfig.write_text(yaml.safe_dump(fleet))
    return Setup(pair, proxies, kubeconfig, workload_kubeconfig, fleet_kubeconfig, names)


def commands(setup: Setup, plugins: Path, work: Path) -> list[Command]:
    pair, pool = setup.pair, SHAPE.pool
    plugin, kc, ns = str(plugins / "kubectl-machinepool"), str(setup.kubeconfig), pair.namespace
    scope = ["-n", ns, "--kubeconfig", kc]
    kubectl = str(binaries_dir() / "kubectl")
    cctl = [str(clusterctl()), "describe", "cluster", CLUSTER, "-n", ns, "--kubeconfig", kc]
    spec = floor_paths(pair, SHAPE)
    for server, proxy in zip(spec, ("management", "workload"), strict=True):
        server["server"] = setup.proxies.proxies[proxy].url
    (work / "floor.json").write_text(json.dumps(spec))
    python = plugins / "python" if (plugins / "python").exists() else Path(sys.executable)
    floor = Path(__file__).resolve().parent / "floor.py"
    contexts = ",".join(setup.contexts)
    fleet = ["--kubeconfig", str(setup.fleet_kubeconfig), "--contexts", contexts]
    # A run with a cache directory of its own: no memory of earlier reads (kube/warmstart.py).
    first = [
        "sh",
        "-c",
        f'XDG_CACHE_HOME="$(mktemp -d -p {shlex.quote(str(work))})" exec "$0" "$@"',
    ]
    return [
        Command("describe", [plugin, "describe", pool, *scope], pool),
        Command("list -A", [plugin, "list", "-A", "--kubeconfig", kc], pool),
        Command("diagnose", [plugin, "diagnose", pool, *scope], pool),
        # Growing the pool made generation 2, which no controller here observes: not stuck.
        Command("rollout status", [plugin, "rollout", "status", pool, *scope, "-w=false", "--stuck-after", "24h"], pool),
        Command("diff-metadata", [plugin, "diff-metadata", pool, *scope], pool),
        Command("describe (first read)", [*first, plugin, "describe", pool, *scope], pool),
        Command("list -A (first read)", [*first, plugin, "list", "-A", "--kubeconfig", kc], pool),
        Command("fleet list -A", [plugin, "list", "-A", *fleet], pool),
        Command("fleet list -A --parallel", [plugin, "list", "-A", *fleet, "--parallel", str(len(setup.contexts))], pool),
        Command("clusterctl describe", cctl, CLUSTER),
        Command("clusterctl --grouping=false", [*cctl, "--show-machinesets", "--grouping=false"], CLUSTER, "once"),
        Command("kubectl get (same kinds)", [kubectl, "--kubeconfig", kc, "get", ",".join(SHAPE.resources()), "-n", ns, "-o", "json"], pool),
        Command("kubectl get nodes", [kubectl, "--kubeconfig", str(setup.workload_kubeconfig), "get", "nodes", "-o", "json"], '"Node"'),
        Command("kubectl get machinepools -A", [kubectl, "--kubeconfig", kc, "get", "machinepools.cluster.x-k8s.io", "-A"], pool),
        Command("floor", [str(python), str(floor), str(work / "floor.json"), "all"], "items"),
    ]  # fmt: skip


def before(chosen: list[Command], plugins: Path, other: Path) -> list[Command]:
    """The plugin's commands again, from another tree's scripts (labelled "... (before)"),
    in the same rounds: a comparison that the machine's load shifts alike."""
    mine, theirs = str(plugins / "kubectl-machinepool"), str(other / "kubectl-machinepool")
    return [
        replace(c, label=f"{c.label} (before)", argv=[theirs, *c.argv[1:]])
        for c in chosen
        if c.argv[0] == mine
    ]


def measure(
    setup: Setup, chosen: list[Command], env: dict[str, str], args: argparse.Namespace
) -> dict[int, dict[str, list[Sample]]]:
    """Every chosen command at every RTT: --runs rounds in seeded orders, the `once` ones once."""
    logs, proxies = setup.pair.audit_logs(), setup.proxies
    found: dict[int, dict[str, list[Sample]]] = {}

    def sample(command: Command, timeout: float) -> Sample:
        proxies.reset()
        outcome = run(command, env, logs, timeout)
        time.sleep(0.1)  # the last bytes past the proxies
        return Sample(outcome, proxies.run())

    proxies.set_rtt(0)
    proxies.set_bandwidth(args.mbit)
    for command in chosen:
        if command.phase != "once":
            run(command, env, logs, args.timeout)
    order = random.Random(45)
    for rtt in args.rtts:
        proxies.set_rtt(rtt / 1000)
        took: dict[str, list[Sample]] = {c.label: [] for c in chosen}
        rounds = [c for c in chosen if c.phase != "once"]
        for _ in range(args.runs):
            order.shuffle(rounds)
            for command in rounds:
                took[command.label].append(sample(command, args.timeout))
        for command in (c for c in chosen if c.phase == "once"):
            took[command.label].append(sample(command, args.slow_timeout))
        found[rtt] = took
        print(f"  RTT {rtt} ms done", flush=True)
    return found


def benchmark(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    plugins = (args.bin or Path(sys.executable).parent).resolve()
    clusterctl()
    print_header(plugins, args)
    results = {}
    with fleet_servers("machines", SHAPE.pool_kinds()) as grown, Proxies() as proxies:
        work = Path(tempfile.mkdtemp(prefix="kmp-latency-"))
        try:
            setup = None
            for n in sorted(args.sizes):
                print(f"grew the pool to N={n} in {grown.grow_to(n):.1f} s", flush=True)
                setup = setup or set_up(grown.pair, proxies, work, args.contexts)
                chosen = [c for c in commands(setup, plugins, work) if c.label in args.commands]
                if args.before:
                    chosen += before(chosen, plugins, args.before.resolve())
                results[n] = measure(setup, chosen, environment(plugins, work), args)
                print_size(n, results[n], args)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print_targets(results, args)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


def _numbers(kind: type, text: str) -> list[Any]:
    return [kind(part) for part in text.split(",") if part]


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.epilog = "\n".join(__doc__.splitlines()[1:])
    add = parser.add_argument
    add(
        "--rtt",
        dest="rtts",
        type=lambda t: _numbers(int, t),
        default=[0, 20, 100, 300],
        help="round-trip times in ms, comma-separated (default 0,20,100,300)",
    )
    add(
        "--n",
        dest="sizes",
        type=lambda t: _numbers(int, t),
        default=[100, 1000],
        help="pool sizes (instances), comma-separated (default 100,1000)",
    )
    add("--runs", type=int, default=3, help="rounds per RTT; medians over them (default 3)")
    add(
        "--commands",
        type=lambda t: t.split(","),
        default=[*PLUGIN, *OTHERS],
        help=f"labels of the commands to run (default all: {', '.join((*PLUGIN, *OTHERS))})",
    )
    add("--contexts", type=int, default=10, help="contexts of the fleet command (default 10)")
    add("--timeout", type=float, default=120, help="seconds each command may take (default 120)")
    add(
        "--slow-timeout",
        type=float,
        default=300,
        help="seconds clusterctl --grouping=false may take, run once per RTT (default 300)",
    )
    add(
        "--reference-rtt",
        type=int,
        default=100,
        help="the RTT (ms) whose depth, connections and handshakes are shown (default 100)",
    )
    add("--mbit", type=float, default=0, help="bandwidth of the link both proxies share, Mbit/s each way (default 0: unlimited)")  # fmt: skip
    add(
        "--bin", type=Path, help="directory of the installed console scripts (default: this venv's)"
    )
    add("--verbose", action="store_true", help="requests per command by verb and resource")  # fmt: skip
    add("--before", type=Path, help="also run the plugin's commands from this directory's console scripts, in the same rounds (a before/after comparison)")  # fmt: skip
    args = parser.parse_args()
    unknown = set(args.commands) - {*PLUGIN, *OTHERS}
    if unknown:
        parser.error(f"unknown commands: {', '.join(sorted(unknown))}")
    if 0 not in args.rtts:
        args.rtts = [0, *args.rtts]  # round trips paid are counted from it
    args.rtts.sort()
    if args.reference_rtt not in args.rtts:
        args.reference_rtt = args.rtts[-1]
    signal.signal(signal.SIGTERM, _interrupt)  # a kill stops the servers too, via finally
    benchmark(args)


if __name__ == "__main__":
    main()
