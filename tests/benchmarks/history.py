"""rollout history on a pool of 1000 Machines: what it asks the API server. Prints figures,
asserts none.

    .venv/bin/python tests/benchmarks/history.py [--n 1000] [--runs 5] [--bin DIR]

Issue 43: the history lives on the MachinePool (its kubectl-machinepool/revisions annotation),
so reading it must cost one GET of that pool, however many Machines it has: no Machine LIST.
The scale benchmark's `machines` shape (tests/benchmarks/scalefleet.py: a CAPZ AzureMachinePool
with N MachinePool Machines, AzureMachinePoolMachines and Nodes, bystander teams' pools beside
it) is loaded on a fresh management and workload server pair with audit logs, ten revisions
recorded on the pool as upgrade, scale and restart write them, then `rollout history` (the table,
and -o json) and, for scale, `describe` run --runs times each under GNU time: wall seconds, peak
RSS and every request the audit logs saw, by verb and resource (tests/benchmarks/scalerun.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import environment
from scalefleet import SHAPES
from scaleload import fleet_servers
from scalerun import Command, Outcome, run

from kubectl_machinepool.model.revisions import (
    ANNOTATION,
    REPLICAS,
    START,
    VERSION,
    Change,
    Revision,
    encode,
)


def history(pool: str, infra_kind: str, n: int) -> str:
    """Ten revisions as the tool writes them: upgrades (version and image), scales, restarts."""
    revisions = []
    for number in range(1, 11):
        at = f"2026-11-{number:02d}T10:00:00Z"
        mp = ("MachinePool", "cluster.x-k8s.io", pool)
        if number % 3 == 1:
            changes: tuple[Change, ...] = (
                Change(*mp, VERSION, f"v1.33.{number - 1}", f"v1.33.{number}"),
                Change(
                    infra_kind, "infrastructure.cluster.x-k8s.io", pool,
                    "spec.template.image.computeGallery.version",
                    f"1.33.{number - 1}", f"1.33.{number}",
                ),
            )  # fmt: skip
            cause = f"upgrade --version v1.33.{number}"
        elif number % 3 == 2:
            changes = (Change(*mp, REPLICAS, n - 1, n),)
            cause = f"scale --replicas {n}"
        else:
            changes = (Change(*mp, START, None, at),)
            cause = "rollout restart"
        revisions.append(Revision(number, cause, at, "0.1.0", changes))
    return encode(revisions)


def median(outcomes: list[Outcome]) -> str:
    seconds = statistics.median(o.seconds for o in outcomes)
    rss = statistics.median(o.rss_kib for o in outcomes) / 1024
    return f"{seconds:.2f} s, {rss:.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bin", type=Path, help="directory of the installed console scripts")
    args = parser.parse_args()
    plugins = args.bin or Path(sys.executable).parent
    shape = SHAPES["machines"]
    with (
        fleet_servers(shape.name, shape.pool_kinds()) as grown,
        tempfile.TemporaryDirectory() as tmp,
    ):
        print(f"loading {args.n} instances ...", flush=True)
        grown.grow_to(args.n)
        pair = grown.pair
        loader = grown.route[False]
        path = loader.api.path_of(
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool",
             "metadata": {"namespace": pair.namespace}},
            shape.pool,
        )  # fmt: skip
        value = history(shape.pool, shape.pool_kind, args.n)
        body = {"metadata": {"annotations": {ANNOTATION: value}}}
        loader.request("PATCH", path, body, "application/merge-patch+json")
        plugin = str(plugins / "kubectl-machinepool")
        scope = [shape.pool, "-n", pair.namespace, "--kubeconfig", str(pair.kubeconfig)]
        commands = [
            Command("rollout history", [plugin, "rollout", "history", *scope], "REVISION"),
            Command("rollout history -o json", [plugin, "rollout", "history", *scope, "-o", "json"], '"revisions"'),
            Command("describe", [plugin, "describe", *scope], shape.pool),
        ]  # fmt: skip
        env, logs = environment(plugins, Path(tmp)), pair.audit_logs()
        print(f"pool {shape.pool}: {args.n} Machines, annotation {len(value.encode())} bytes")
        print("| command | median wall, peak RSS | requests |")
        print("|---|---|---|")
        for command in commands:
            outcomes = [run(command, env, logs, 120) for _ in range(args.runs)]
            asked = outcomes[-1].requests
            said = ", ".join(f"{k} x{v}" for k, v in sorted(asked.items()))
            print(
                f"| {command.label} | {median(outcomes)} | {outcomes[-1].request_count}: {said} |"
            )


if __name__ == "__main__":
    main()
