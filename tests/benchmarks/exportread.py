"""The export of a fleet-scale management cluster, read back. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/exportread.py [--pools 341] [--nodes 241063]
        [--machines-every 4] [--runs 2] [--keep DIR] [--bin DIR]

Issue 49: `export -A` of a management cluster of 341 pools and 241,063 Nodes wrote a 287 MiB
directory that `describe -A -f` refused. A live pair of API servers cannot hold a fleet that
size in reasonable time on this machine (loading 5000 instances takes minutes), so the bundle is
written directly, in the export's own format by the exporter's own code: the objects come from
the scale benchmark's builders (tests/benchmarks/scalefleet.py: each pool one Cluster in a
namespace of its own, its Nodes as a kubelet and the cloud make them), each file's document from
export.documents_of, the files from bundlefiles.write (a pool's objects are built twice: once for
the management files, once for its Nodes when its workload file is written). Every --machines-every'th pool is a CAPZ
AzureMachinePool with MachinePool Machines and AzureMachinePoolMachines (the `machines` shape),
the others CAPA AWSManagedMachinePools with only Nodes (`nodes`); the Nodes are spread evenly.

The bundle is written as a directory and as a .tar.gz; then `describe -A -f`, `describe -A -f
-o json` and `diagnose -A -f` run --runs times on each, under GNU time: wall seconds and peak
RSS (the command's own, see scalerun.py), and the exit code.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scalefleet import BUILDERS, CLUSTER, GENERATION
from scalerun import GNU_TIME
from support.scenarios import core_manager

from kubectl_machinepool.base.inputfiles import values_in
from kubectl_machinepool.diagnostics.rules import capi_version
from kubectl_machinepool.model.snapshot import Snapshot, WorkloadNodes
from kubectl_machinepool.offline import bundlefiles, export

CAPTURED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
Obj = dict[str, Any]


def plan(pools: int, nodes: int, machines_every: int) -> list[tuple[str, str, int]]:
    """(namespace, shape, instances) of each pool, the Nodes spread evenly."""
    each, more = divmod(nodes, pools)
    return [
        (
            f"fleet-{i:03d}",
            "machines" if machines_every and i % machines_every == 0 else "nodes",
            each + (i < more),
        )
        for i in range(pools)
    ]


class FleetDocuments(Mapping[str, dict[str, Any]]):
    """The export's documents, a workload file made when the writer asks for it: the pools are
    built once for the management cluster's objects (and the manifest, which names the files
    they take), and each again when its workload file is written. So the fleet's Nodes are
    never all in memory."""

    def __init__(self, pools: list[tuple[str, str, int]]) -> None:
        self._pools = pools
        management = [core_manager("capi-system")]
        for ns, shape, n in pools:
            management += (o for o in BUILDERS[shape](GENERATION, ns, n=n) if o["kind"] != "Node")
        workloads = [WorkloadNodes(ns, CLUSTER, ()) for ns, _, _ in pools]
        snapshot = Snapshot(objects=tuple(management), workloads=tuple(workloads))
        capi = capi_version(snapshot, None)
        self._versions = export.Versions("bench", str(capi), capi.source)
        self._made = self._documents(snapshot)
        self.counts = {"objects": len(management), "nodes": 0}

    def _documents(self, snapshot: Snapshot) -> dict[str, dict[str, Any]]:
        return export.documents_of(
            snapshot, captured=CAPTURED, scope=export.Scope(None), versions=self._versions
        )

    def __getitem__(self, name: str) -> dict[str, Any]:
        if not export.WORKLOAD_FILE.fullmatch(name):
            return self._made[name]
        ns, shape, n = self._pools[int(name.removeprefix("workload-").removesuffix(".json")) - 1]
        nodes = tuple(o for o in BUILDERS[shape](GENERATION, ns, n=n) if o["kind"] == "Node")
        self.counts["nodes"] += len(nodes)
        workload = WorkloadNodes(ns, CLUSTER, nodes)
        return self._documents(Snapshot(workloads=(workload,)))["workload-1.json"]

    def __iter__(self) -> Iterator[str]:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)


def write_bundle(pools: list[tuple[str, str, int]], path: Path) -> dict[str, float]:
    started = time.perf_counter()
    documents = FleetDocuments(pools)
    size = bundlefiles.write(documents, str(path), CAPTURED.timestamp())
    return {"seconds": time.perf_counter() - started, "bytes": size, **documents.counts}


def measure(argv: list[str]) -> tuple[float, int, int, float]:
    """Wall seconds, peak RSS (KiB), exit code and CPU seconds of one command, under GNU time:
    on a machine others share, the CPU seconds vary less than the wall time."""
    with tempfile.NamedTemporaryFile("r") as report:
        done = subprocess.run(
            [GNU_TIME, "-f", "%e %M %U %S", "-o", report.name, *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        seconds, rss, user, system = report.read().split()[-4:]
    if done.stderr.startswith("error:"):
        print(f"  {' '.join(argv[1:])}: exit {done.returncode}: {done.stderr.strip()[:300]}")
    return float(seconds), int(rss), done.returncode, float(user) + float(system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=341)
    parser.add_argument("--nodes", type=int, default=241_063)
    parser.add_argument("--machines-every", type=int, default=4, help="0: no machines pools")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write the bundles here and keep them")
    parser.add_argument("--bin", type=Path, help="directory of the installed console scripts")
    args = parser.parse_args()
    plugin = str((args.bin or Path(sys.executable).parent).resolve() / "kubectl-machinepool")
    pools = plan(args.pools, args.nodes, args.machines_every)
    machines = sum(n for _, shape, n in pools if shape == "machines")
    print(
        f"{args.pools} pools ({sum(s == 'machines' for _, s, _ in pools)} with MachinePool "
        f"Machines, {machines:,} instances of theirs), {args.nodes:,} Nodes, one Cluster each"
    )
    work = args.keep or Path(tempfile.mkdtemp(prefix="kmp-exportread-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bundles = [work / "fleet", work / "fleet.tar.gz"]
        for bundle in bundles:
            if not bundle.exists():
                made = write_bundle(pools, bundle)
                print(
                    f"wrote {bundle.name}: {made['bytes'] / 2**20:,.0f} MiB, "
                    f"{made['objects']:,} management objects and {made['nodes']:,} Nodes, "
                    f"in {made['seconds']:.0f} s"
                )
        sizes = {p.name: p.stat().st_size for p in bundles[0].iterdir()}
        values = {p.name: values_in(p.read_bytes()) for p in bundles[0].iterdir()}
        largest = max(sizes, key=sizes.__getitem__)
        workload = max(s for name, s in sizes.items() if name.startswith("workload-"))
        print(
            f"directory: {len(sizes)} files, {sum(sizes.values()) / 2**20:,.0f} MiB, "
            f"{sum(values.values()):,} values; the largest, {largest}, "
            f"{sizes[largest] / 2**20:,.1f} MiB and {values[largest]:,} values; a workload "
            f"file {workload / 2**20:,.1f} MiB at the most; "
            f"{bundles[1].name} {bundles[1].stat().st_size / 2**20:,.1f} MiB"
        )
        report(plugin, bundles, args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def report(plugin: str, bundles: list[Path], runs: int) -> None:
    print(f"\n{runs} runs each, medians (min-max)\n")
    print("| command | bundle | seconds | CPU seconds | peak RSS MB | exit |")
    print("|---|---|---|---|---|---|")
    for bundle in bundles:
        for verb in (["describe"], ["describe", "-o", "json"], ["diagnose"]):
            outcomes = [measure([plugin, *verb, "-A", "-f", str(bundle)]) for _ in range(runs)]
            seconds = [o[0] for o in outcomes]
            rss = statistics.median(o[1] for o in outcomes) / 1024
            cpu = statistics.median(o[3] for o in outcomes)
            print(
                f"| {' '.join(verb)} -A -f | {bundle.name} | {statistics.median(seconds):.1f} "
                f"({min(seconds):.1f}-{max(seconds):.1f}) | {cpu:.1f} | {rss:,.0f} | "
                f"{','.join(sorted({str(o[2]) for o in outcomes}))} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
