"""Fleet-scale speed beside clusterctl, kubectl and a raw-LIST floor. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/scale.py [--sizes 100,1000,5000] [--runs 7] [--bin DIR]
        [--shapes machines,nodes] [--timeout 120] [--reference-runs 2] [--verbose]
    .venv/bin/python tests/benchmarks/scale.py serve --n 1000 --shape machines

Per size N and pool shape (`machines`: a CAPZ AzureMachinePool with N MachinePool Machines,
AzureMachinePoolMachines and Nodes; `nodes`: a CAPA AWSManagedMachinePool, providerIDList and N
Nodes), a fresh etcd with a management and a workload API server (the `<cluster>-kubeconfig`
Secret points at the latter) is loaded with that pool, a few other teams' pools and Clusters and
~2% NotReady Nodes; from one N to the next the pool grows in place. After a warm-up of cheap
commands, in rounds that each take the commands in another order (seeded), so that a load
spike, or the servers' garbage collection after a large read, hits every command alike: the plugin's describe
(tree, -o json), list, diagnose and diff-metadata; `clusterctl describe cluster`; the floor
(tests/benchmarks/floor.py: the LISTs describe issues, in parallel; its three server-side modes
are tried once each first and the fastest runs in the rounds); in the first --reference-runs rounds `kubectl get -o json` of the
same collections (management, and Nodes on the workload server). Once per N, after the rounds:
`clusterctl describe cluster --grouping=false` (the only clusterctl view listing every Machine,
2N+18 requests) and describe -o yaml. Every command runs under --timeout and must exit 0 with
the pool's name in its output. Printed: one markdown table per shape with medians and min-max
spread, requests per command from the servers' audit logs (--verbose: by verb and resource),
peak RSS (GNU time's, see scalerun.py), ratios, and the targets of issues 13 and 31.

`serve` loads one pair, prints the commands that reach it and waits for Ctrl-C (for profiling).

--bin names the directory with the console scripts (default: next to this interpreter); pass a
non-editable install's bin/ to leave out the import hook an editable install adds. clusterctl at
the CAPI_VERSION of tests/testbin/versions.env is built into the test-binary cache
(tests/testbin/build.sh clusterctl) when missing; it runs with a scratch HOME and its version
check off, so nothing leaves the machine. Needs the test binaries (tests/testbin/build.sh) and
GNU time (/usr/bin/time). Everything listens on 127.0.0.1 and stops when the script ends.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scalefleet import CLUSTER, SHAPES, FleetShape
from scaleload import Pair, fleet_servers
from scalereport import Measured, print_header, print_shape, print_targets
from scalerun import Command, Outcome, run
from support.controlplane import binaries_dir, pinned_versions

HERE = Path(__file__).resolve().parent
CAPI_VERSION = pinned_versions()["CAPI_VERSION"]


def clusterctl() -> Path:
    binary = binaries_dir() / f"clusterctl-{CAPI_VERSION}"
    if not binary.exists():
        print(f"building clusterctl {CAPI_VERSION} (tests/testbin/build.sh clusterctl)", flush=True)
        start = time.perf_counter()
        build = HERE.parent / "testbin" / "build.sh"
        subprocess.run([str(build), "clusterctl"], check=True, stdout=subprocess.DEVNULL)
        print(f"  built in {time.perf_counter() - start:.0f} s", flush=True)
    return binary


def environment(plugins: Path, home: Path) -> dict[str, str]:
    env = {
        "PATH": os.pathsep.join([str(plugins), str(binaries_dir()), "/usr/bin", "/bin"]),
        # kubectl's discovery cache, clusterctl's config and the plugin's caches, all fresh.
        "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_CONFIG_HOME": str(home / "config"),
        # clusterctl would otherwise ask GitHub for its latest release.
        "CLUSTERCTL_DISABLE_VERSIONCHECK": "true", "NO_COLOR": "1",
    }  # fmt: skip
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def floor_paths(pair: Pair, shape: FleetShape) -> list[dict[str, object]]:
    """The LISTs describe issues for the pool (management, then workload), by server."""
    ns = f"/namespaces/{pair.namespace}"
    infra = {"AzureMachinePool": "v1beta1", "AWSManagedMachinePool": "v1beta2"}[shape.pool_kind]
    group = f"/apis/{shape.group}/{infra}{ns}"
    paths = [
        f"/apis/cluster.x-k8s.io/v1beta2{ns}/machinepools",
        f"/apis/cluster.x-k8s.io/v1beta2{ns}/clusters",
        f"{group}/{shape.pool_kind.lower()}s",
    ]
    if shape.bootstrap_kind:
        paths.append(
            f"/apis/bootstrap.cluster.x-k8s.io/v1beta2{ns}/{shape.bootstrap_kind.lower()}s"
        )
    if shape.machine_kind:
        paths += [
            f"/apis/cluster.x-k8s.io/v1beta2{ns}/machines",
            f"{group}/{shape.machine_kind.lower()}s",
        ]
    spec = []
    for server, server_paths in ((pair.management, paths), (pair.workload, ["/api/v1/nodes"])):
        user = server.admin
        spec.append(
            {"server": server.server, "ca": str(server.ca_file), "cert": str(user.cert),
             "key": str(user.key), "paths": server_paths}
        )  # fmt: skip
    return spec


FLOOR_MODES = ("limit=500", "all", "rv=0")


def commands(pair: Pair, shape: FleetShape, plugins: Path, work: Path) -> list[Command]:
    plugin, kc, ns, pool = (
        str(plugins / "kubectl-machinepool"),
        str(pair.kubeconfig),
        pair.namespace,
        shape.pool,
    )
    scope = ["-n", ns, "--kubeconfig", kc]
    kubectl = str(binaries_dir() / "kubectl")
    cctl = [str(clusterctl()), "describe", "cluster", CLUSTER, "-n", ns, "--kubeconfig", kc]
    spec = work / "floor.json"
    spec.write_text(json.dumps(floor_paths(pair, shape)))
    python = plugins / "python" if (plugins / "python").exists() else Path(sys.executable)
    rows = [
        Command("describe", [plugin, "describe", pool, *scope], pool),
        Command("describe -o json", [plugin, "describe", pool, *scope, "-o", "json"], pool),
        Command("list", [plugin, "list", *scope], pool),
        Command("diagnose", [plugin, "diagnose", pool, *scope], pool),
        Command("diff-metadata", [plugin, "diff-metadata", pool, *scope], pool),
        Command("clusterctl describe", cctl, CLUSTER),
        Command("kubectl get (management)", [kubectl, "--kubeconfig", kc, "get", ",".join(shape.resources()), "-n", ns, "-o", "json"], pool, "reference"),
        Command("kubectl get nodes", [kubectl, "--kubeconfig", str(pair.workload.admin.kubeconfig), "get", "nodes", "-o", "json"], '"Node"', "reference"),
    ]  # fmt: skip
    rows += [
        Command(f"floor {mode}", [str(python), str(HERE / "floor.py"), str(spec), mode], "items", "floor")
        for mode in FLOOR_MODES
    ]  # fmt: skip
    # What describe imports, imported by a script that does nothing else: its least time here.
    modules, imports = str(work / "modules.txt"), str(HERE / "importfloor.py")
    rows += [
        Command("describe's imports", [str(python), imports, "import", modules], "imported"),
        Command("record describe's imports", [str(python), imports, "record", modules, "describe", pool, *scope], "", "warm"),
    ]  # fmt: skip
    wl = str(pair.workload.admin.kubeconfig)
    rows += [
        Command("clusterctl describe --grouping=false", [*cctl, "--grouping=false"], CLUSTER, "once"),
        Command("describe -o yaml", [plugin, "describe", pool, *scope, "-o", "yaml"], pool, "once"),
        # Byte code, the page cache, kubectl's discovery cache: all warm before the first figure.
        Command("warm list", [plugin, "list", *scope], pool, "warm"),
        Command("warm clusterctl", [str(clusterctl()), "version"], CAPI_VERSION, "warm"),
        Command("warm kubectl", [kubectl, "--kubeconfig", kc, "api-resources"], "machinepools", "warm"),
        Command("warm kubectl nodes", [kubectl, "--kubeconfig", wl, "api-resources"], "nodes", "warm"),
    ]  # fmt: skip
    return rows


FLOOR_TRIALS = 1


def measure(pair: Pair, shape: FleetShape, plugins: Path, args: argparse.Namespace) -> Measured:
    work = Path(tempfile.mkdtemp(prefix="kmp-scale-"))
    try:
        env, logs = environment(plugins, work), pair.audit_logs()
        rows = commands(pair, shape, plugins, work)
        took: dict[str, list[Outcome]] = {c.label: [] for c in rows if c.phase != "warm"}

        def measured(command: Command) -> None:
            took[command.label].append(run(command, env, logs, args.timeout))

        for command in (c for c in rows if c.phase == "warm"):
            run(command, env, logs, args.timeout)
        floors = [c for c in rows if c.phase == "floor"]
        for _ in range(FLOOR_TRIALS):
            for command in floors:
                measured(command)
        best = min(floors, key=lambda c: statistics.median(o.seconds for o in took[c.label]))
        rounds = [c for c in rows if c.phase in ("round", "reference")] + [best]
        # Each round in its own order (seeded: the same every run): a command slowed by the one
        # before it (the servers' garbage collection after a large read) follows a different
        # one each round, rather than always the same.
        order = random.Random(0)
        for index in range(args.runs):
            taking = [c for c in rounds if c.phase != "reference" or index < args.reference_runs]
            order.shuffle(taking)
            for command in taking:
                measured(command)
        for command in (c for c in rows if c.phase == "once"):
            measured(command)
        return Measured(took)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def serve(args: argparse.Namespace) -> None:
    shape = SHAPES[args.shape]
    plugins = (args.bin or Path(sys.executable).parent).resolve()
    with fleet_servers(args.shape, shape.pool_kinds()) as grown:
        load_time, pair = grown.grow_to(args.n), grown.pair
        work = Path(tempfile.mkdtemp(prefix="kmp-scale-serve-"))
        env = environment(plugins, work)
        print(f"loaded {args.n} instances ({args.shape}) in {load_time:.1f} s")
        print(f"management kubeconfig: {pair.kubeconfig}")
        print(f"workload kubeconfig:   {pair.workload.admin.kubeconfig}")
        print(f"namespace: {pair.namespace}  pool: {shape.pool}  cluster: {CLUSTER}")
        print(f"audit logs: {' '.join(str(p) for p in pair.audit_logs().values())}")
        print("commands (environment: HOME and caches in a scratch directory):")
        print(f"  export HOME={env['HOME']} XDG_CACHE_HOME={env['XDG_CACHE_HOME']} XDG_CONFIG_HOME={env['XDG_CONFIG_HOME']} CLUSTERCTL_DISABLE_VERSIONCHECK=true")  # fmt: skip
        for command in commands(pair, shape, plugins, work):
            if command.phase != "warm":
                print(f"  {' '.join(command.argv)}")
        print("Ctrl-C stops the servers.", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("stopping")
        finally:
            shutil.rmtree(work, ignore_errors=True)


def benchmark(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    plugins = (args.bin or Path(sys.executable).parent).resolve()
    clusterctl()
    print_header(plugins, args, CAPI_VERSION)
    results: dict[str, dict[int, tuple[float, Measured]]] = {}
    for shape_name in args.shapes.split(","):
        shape = SHAPES[shape_name]
        # One server pair per shape, the pool grown from size to size.
        with fleet_servers(shape_name, shape.pool_kinds()) as grown:
            for n in sorted(int(size) for size in args.sizes.split(",")):
                load_time = grown.grow_to(n)
                print(f"grew {shape_name} to N={n} in {load_time:.1f} s", flush=True)
                measured = measure(grown.pair, shape, plugins, args)
                results.setdefault(shape_name, {})[n] = (load_time, measured)
                if args.verbose:
                    measured.print_requests(f"{shape_name} N={n}")
        print_shape(shape_name, results[shape_name], args)
    print_targets(results)
    print(f"\nbenchmark took {time.perf_counter() - started:.0f} s")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=("run", "serve"), default="run")
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--shapes", default="machines,nodes")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--reference-runs", type=int, default=2, help="rounds kubectl get takes part in"
    )
    parser.add_argument("--timeout", type=float, default=120, help="seconds, for each command")
    parser.add_argument("--bin", type=Path, help="directory of the installed console scripts")
    parser.add_argument("--verbose", action="store_true", help="requests per command, by verb")
    parser.add_argument("--n", type=int, default=1000, help="serve: instances")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="machines", help="serve")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # a kill stops the servers too, via finally
    serve(args) if args.mode == "serve" else benchmark(args)


if __name__ == "__main__":
    main()
