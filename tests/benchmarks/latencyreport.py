"""The latency benchmark's printed tables: times per RTT, what a run costs at the reference RTT,
and issue 45's targets."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from scalereport import _version
from scalerun import Outcome
from support.delayproxy import Run

SERVERS = ("management", "workload")
READS = ("describe", "list -A", "diagnose", "rollout status", "diff-metadata")


@dataclass(frozen=True)
class Sample:
    outcome: Outcome
    proxied: Run


Samples = dict[str, list[Sample]]


def _median(samples: list[Sample]) -> float:
    return statistics.median(s.outcome.seconds for s in samples)


def _spread(values: list[int]) -> str:
    low, high = min(values), max(values)
    return f"{low}" if low == high else f"{low}-{high}"


def _per_server(samples: list[Sample], field: str) -> str:
    return " / ".join(
        _spread([getattr(s.proxied.counts[server], field) for s in samples]) for server in SERVERS
    )


def _requests(samples: list[Sample]) -> str:
    """Requests per server, from the audit logs (their keys start m: or w:)."""
    per = []
    for prefix in ("m:", "w:"):
        counts = [
            sum(n for key, n in s.outcome.requests.items() if key.startswith(prefix))
            for s in samples
        ]
        per.append(_spread(counts))
    return " / ".join(per)


def _kib(samples: list[Sample]) -> str:
    return " / ".join(
        f"{statistics.median(s.proxied.counts[server].down for s in samples) / 1024:,.0f}"
        for server in SERVERS
    )


def _handshakes(samples: list[Sample]) -> str:
    full = _per_server(samples, "full_handshakes")
    resumed = [sum(s.proxied.counts[server].resumed for s in samples) for server in SERVERS]
    return full + (f" (+{resumed[0]} / +{resumed[1]} resumed)" if any(resumed) else "")


def print_header(plugins: Path, args: argparse.Namespace) -> None:
    repo = Path(__file__).resolve().parents[2]
    commit = _version(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"])
    print(f"# Latency benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    before = f" (before: {args.before})" if args.before else ""
    print(
        f"benchmark at {commit}; plugin scripts {plugins}{before}; {os.cpu_count()} CPUs; "
        f"Python {platform.python_version()}; "
        f"RTTs {', '.join(map(str, args.rtts))} ms; N {', '.join(map(str, args.sizes))}; "
        f"{args.runs} rounds per RTT, medians; "
        f"bandwidth {f'{args.mbit:g} Mbit/s each way' if args.mbit else 'unlimited'}"
    )


def print_size(n: int, found: dict[int, Samples], args: argparse.Namespace) -> None:
    labels = list(next(iter(found.values())))
    print(f"\n## N={n}: wall time, median of {args.runs} (clusterctl --grouping=false: once)\n")
    print("| command | " + " | ".join(f"RTT {rtt} ms" for rtt in found) + " |")
    print("|---|" + "---|" * len(found))
    for label in labels:
        cells = []
        for samples in found.values():
            timed_out = any(s.outcome.timed_out for s in samples[label])
            cells.append(
                f"> {_median(samples[label]):.0f} s"
                if timed_out
                else f"{_median(samples[label]):.2f} s"
            )
        print(f"| {label} | " + " | ".join(cells) + " |")
    rtt = args.reference_rtt
    at, zero = found[rtt], found[0]
    print(f"\n## N={n}: at RTT {rtt} ms, per server (management / workload)\n")
    print("| command | depth | deepest flight | round trips paid | requests | KiB received | connections | of them opened late | TLS handshakes |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for label in labels:
        samples = at[label]
        paid = (_median(samples) - _median(zero[label])) / (rtt / 1000) if rtt else 0.0
        fleet = label.startswith("fleet")  # processes that wait on none of each other's answers
        depth = _spread([s.proxied.depth for s in samples]) if rtt and not fleet else "-"
        print(
            f"| {label} | {depth} | {_per_server(samples, 'deepest') if depth != '-' else '-'} | "
            f"{paid:.1f} | {_requests(samples)} | {_kib(samples)} | "
            f"{_per_server(samples, 'connections')} | {_per_server(samples, 'late')} | "
            f"{_handshakes(samples)} |"
        )
    if args.verbose:
        for label in labels:
            counts = at[label][0].outcome.requests
            print(f"  {label}: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    print(flush=True)


def _verdict(ok: bool) -> str:
    return "met" if ok else "not met"


def print_targets(results: dict[int, dict[int, Samples]], args: argparse.Namespace) -> None:
    """Issue 45's targets, at the largest N and the reference RTT, where both were measured."""
    n, rtt = max(results), args.reference_rtt
    found = results[n][rtt]
    print(f"\n## Targets (issue 45), N={n}, RTT {rtt} ms\n")
    print("| target | measured | verdict |")
    print("|---|---|---|")

    def depth(label: str) -> int:
        return statistics.median(s.proxied.depth for s in found[label])

    def ratio(label: str, against: str, limit: float) -> None:
        if label in found and against in found:
            value = _median(found[label]) / _median(found[against])
            measured = (
                f"{value:.2f}x ({_median(found[label]):.2f} s / {_median(found[against]):.2f} s)"
            )
            print(f"| {label} ≤ {limit}x {against} | {measured} | {_verdict(value <= limit)} |")

    if "floor" in found:
        for label in (r for r in READS if r in found):
            measured = f"{depth(label):.0f} against {depth('floor'):.0f}"
            ok = depth(label) <= depth("floor") + 1
            print(f"| {label}: depth ≤ floor's + 1 | {measured} | {_verdict(ok)} |")
    for label in (r for r in READS if r in found):
        late = [max(s.proxied.counts[server].late for s in found[label]) for server in SERVERS]
        measured = " / ".join(map(str, late)) + " connections opened after the first level"
        print(f"| {label}: no handshake after the first level | {measured} | {_verdict(not any(late))} |")  # fmt: skip
    ratio("describe", "clusterctl describe", 0.3)
    ratio("describe", "clusterctl --grouping=false", 0.3)
    ratio("list -A", "kubectl get machinepools -A", 1.2)
    ratio("fleet list -A", "list -A", 1.3)
    ratio("fleet list -A --parallel", "list -A", 1.3)
