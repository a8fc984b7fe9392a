"""The scale benchmark's printed tables: medians with spread, ratios, requests, RSS, targets."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from scalerun import Outcome

FLOOR = ("floor limit=500", "floor all", "floor rv=0")
PLUGIN = ("describe", "describe -o json", "list", "diagnose", "diff-metadata")
RSS_FORMATS = ("describe", "describe -o json", "describe -o yaml")
MB = 1024  # ru_maxrss is in KiB on Linux


@dataclass(frozen=True)
class Measured:
    runs: dict[str, list[Outcome]]

    def median(self, label: str) -> float:
        return statistics.median(o.seconds for o in self.runs[label])

    def timed_out(self, label: str) -> bool:
        return any(o.timed_out for o in self.runs[label])

    def floor(self) -> tuple[str, float]:
        """The fastest of the floor's server-side modes, by median."""
        best = min(FLOOR, key=self.median)
        return best.removeprefix("floor "), self.median(best)

    def cell(self, label: str, timeout: float) -> str:
        if self.timed_out(label):
            return f"> {timeout:.0f} s"
        took = [o.seconds for o in self.runs[label]]
        if len(took) == 1:
            return f"{took[0]:.2f} s"
        return f"{statistics.median(took):.2f} s ({min(took):.2f}-{max(took):.2f})"

    def requests(self, label: str) -> int:
        """Requests of one run (they do not vary between runs of a read-only command)."""
        return self.runs[label][0].request_count

    def rss_mb(self, label: str) -> float:
        """The largest peak over the runs (of a run killed at the timeout: its peak so far)."""
        return max(o.rss_kib for o in self.runs[label]) / MB

    def rss_cell(self, label: str) -> str:
        return f"{'≥ ' if self.timed_out(label) else ''}{self.rss_mb(label):.0f}"

    def print_requests(self, title: str) -> None:
        print(f"\nrequests per command, {title} (m: management, w: workload server)")
        for label, outcomes in self.runs.items():
            counts: Counter[str] = outcomes[0].requests
            detail = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counts.items()))
            print(f"  {label}: {outcomes[0].request_count}: {detail}")


def _version(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def print_header(plugins: Path, args: argparse.Namespace, capi: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    commit = _version(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"])
    plugin_commit = "?"
    for parent in plugins.parents:  # the checkout the console scripts were installed from
        if (parent / ".git").exists():
            plugin_commit = _version(["git", "-C", str(parent), "rev-parse", "--short", "HEAD"])
            break
    from support.controlplane import binaries_dir, pinned_versions

    versions = pinned_versions()
    print(f"# Scale benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(
        f"benchmark at {commit}; plugin scripts {plugins} (checkout at {plugin_commit}); "
        f"{os.cpu_count()} CPUs; Python {platform.python_version()}; kube-apiserver/kubectl "
        f"{versions['KUBERNETES_VERSION']}; etcd {versions['ETCD_VERSION']}; CAPI CRDs and "
        f"clusterctl {capi} ({_version([str(binaries_dir() / f'clusterctl-{capi}'), 'version', '-o', 'short'])})"
    )
    print(
        f"{args.runs} rounds after a warm-up, each in its own (seeded) order: median (min-max); kubectl get in the "
        f"first {min(args.reference_runs, args.runs)}; the floor's three server-side modes tried "
        f"once each, the fastest then in every round; --grouping=false and -o yaml once, after "
        f"the rounds; every command under a {args.timeout:.0f} s timeout"
    )


def _per_thousand(n: int, describe: float, previous: tuple[int, float] | None) -> str:
    """Seconds per 1000 instances, and between this N and the one before (the fixed costs
    cancel out there: constant when time is linear in N)."""
    overall = f"{describe / n * 1000:.2f} s"
    if previous is None or previous[0] >= n:
        return overall
    return f"{overall}; {(describe - previous[1]) / (n - previous[0]) * 1000:.2f} s from N={previous[0]}"


def _row(
    n: int, load: float, m: Measured, timeout: float, previous: tuple[int, float] | None
) -> str:
    floor_mode, floor = m.floor()
    describe, cctl = m.median("describe"), m.median("clusterctl describe")
    kubectl = m.median("kubectl get (management)") + m.median("kubectl get nodes")
    kubectl_rss = max(m.rss_mb("kubectl get (management)"), m.rss_mb("kubectl get nodes"))
    cells = [
        f"{n}", f"{load:.0f} s",
        *(m.cell(label, timeout) for label in PLUGIN),
        m.cell("describe -o yaml", timeout),
        m.cell("clusterctl describe", timeout), m.cell("clusterctl describe --grouping=false", timeout),
        f"{kubectl:.2f} s ({m.median('kubectl get (management)'):.2f} + {m.median('kubectl get nodes'):.2f})",
        f"{floor:.2f} s ({floor_mode})",
        f"{describe / cctl:.1f}x", f"{describe / floor:.2f}x",
        _per_thousand(n, describe, previous),
        " / ".join(str(m.requests(label)) for label in ("describe", "describe -o json", "clusterctl describe", "clusterctl describe --grouping=false", "kubectl get (management)", "floor limit=500")),
        " / ".join(m.rss_cell(label) for label in (*RSS_FORMATS, "clusterctl describe")) + f" / {kubectl_rss:.0f}",
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


HEADINGS = (
    "N", "load (growth to N)", "describe", "describe -o json", "list", "diagnose", "diff-metadata", "describe -o yaml (once)",
    "clusterctl describe cluster", "clusterctl --grouping=false", "kubectl get -o json (mgmt + nodes)",
    "floor (mode)", "describe / clusterctl", "describe / floor", "describe per 1000 instances; marginal",
    "requests: describe / -o json / clusterctl / --grouping=false / kubectl get / floor",
    "peak RSS MB: describe / -o json / -o yaml / clusterctl / kubectl",
)  # fmt: skip
TITLES = {
    "machines": "with Machines (AzureMachinePool: Machine + AzureMachinePoolMachine + Node each)",
    "nodes": "without Machines (AWSManagedMachinePool: providerIDList + Node each)",
}


def print_shape(
    shape: str, rows: dict[int, tuple[float, Measured]], args: argparse.Namespace
) -> None:
    print(f"\n## {TITLES[shape]}\n")
    print("| " + " | ".join(HEADINGS) + " |")
    print("|" + "---|" * len(HEADINGS))
    previous = None
    for n, (load, measured) in sorted(rows.items()):
        print(_row(n, load, measured, args.timeout, previous))
        previous = (n, measured.median("describe"))
    for n, (_, measured) in sorted(rows.items()):
        modes = ", ".join(
            f"{label.removeprefix('floor ')} {measured.median(label):.2f} s" for label in FLOOR
        )
        print(f"floor N={n}: {modes}")
    print(flush=True)


def _verdict(ok: bool | None) -> str:
    return "unknown (timed out)" if ok is None else "met" if ok else "not met"


Target = tuple[str, str, bool | None]


def _print_table(title: str, lines: list[Target]) -> None:
    print(f"\n## Targets ({title})\n")
    print("| target | measured | verdict |")
    print("|---|---|---|")
    for target, measured, ok in lines:
        print(f"| {target} | {measured} | {_verdict(ok)} |")


def print_targets(results: dict[str, dict[int, tuple[float, Measured]]]) -> None:
    """Issues 13's and 31's targets, where this run measured what they need."""
    _print_table("issue 13", _issue_13(results))
    _print_table("issue 31", _issue_31(results))


def _issue_31(results: dict[str, dict[int, tuple[float, Measured]]]) -> list[Target]:
    """describe at most 1.2x the floor at every size, with Machines and without; with
    Machines at N=1000 no slower than clusterctl describe cluster."""
    lines: list[Target] = []
    for shape, title in (("nodes", "without Machines"), ("machines", "with Machines")):
        for n, (_, m) in sorted(results.get(shape, {}).items()):
            mode, floor = m.floor()
            ratio = m.median("describe") / floor
            measured = f"{ratio:.2f}x ({m.median('describe'):.3f} s / {floor:.3f} s, {mode})"
            imports = m.median("describe's imports")
            measured += f"; its imports alone {imports:.3f} s = {imports / floor:.2f}x"
            lines.append((f"{title} N={n}: describe ≤ 1.2x floor", measured, ratio <= 1.2))
    if 1000 in results.get("machines", {}):
        m = results["machines"][1000][1]
        ratio = m.median("describe") / m.median("clusterctl describe")
        measured = f"{ratio:.2f}x ({m.median('describe'):.3f} s / "
        measured += f"{m.median('clusterctl describe'):.3f} s)"
        lines.append(
            ("with Machines N=1000: describe ≤ 1.0x clusterctl describe", measured, ratio <= 1.0)
        )
    return lines


def _issue_13(results: dict[str, dict[int, tuple[float, Measured]]]) -> list[Target]:
    lines: list[Target] = []
    machines, nodes = results.get("machines", {}), results.get("nodes", {})
    if 1000 in machines:
        m = machines[1000][1]
        ratio = m.median("describe") / m.median("clusterctl describe")
        lines.append(
            (
                "with Machines N=1000: describe ≤ 1.5x clusterctl describe cluster",
                f"{ratio:.2f}x",
                ratio <= 1.5,
            )
        )
        ratio = m.median("describe") / m.floor()[1]
        lines.append(("with Machines N=1000: describe ≤ 1.2x floor", f"{ratio:.2f}x", ratio <= 1.2))
    for shape, rows, limit in (("with Machines", machines, 1.1), ("without Machines", nodes, 1.2)):
        if 5000 in rows:
            ratio = rows[5000][1].median("describe") / rows[5000][1].floor()[1]
            lines.append(
                (f"{shape} N=5000: describe ≤ {limit}x floor", f"{ratio:.2f}x", ratio <= limit)
            )
    for shape, rows in (("with Machines", machines), ("without Machines", nodes)):
        if 5000 in rows:
            m = rows[5000][1]
            peak = {
                label: m.rss_mb(label)
                for label in (*RSS_FORMATS, "list", "diagnose", "diff-metadata")
            }
            text = ", ".join(f"{label} {m.rss_cell(label)}" for label in peak)
            lines.append(
                (
                    f"{shape} N=5000: peak RSS < 200 MB in every output format",
                    f"{text} MB",
                    # A run killed at the timeout only gives a lower bound.
                    None
                    if max(peak.values()) < 200 and any(m.timed_out(label) for label in peak)
                    else max(peak.values()) < 200,
                )
            )
    return lines
