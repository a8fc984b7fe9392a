"""A long watch over a wide-area round trip: describe -w and rollout status following a pool whose
instances churn, through one dropped connection and one 410 Gone. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/watchsoak.py [--minutes 30] [--n 100] [--rtt 100]
        [--every 3] [--outage 15] [--bin DIR]

The servers and proxies are latency.py's (scale.py's `machines` pool of --n instances, a delay
proxy of --rtt ms in front of the management and the workload API server, the kubeconfig
Secret naming the latter's proxy); the workload server runs without its watch cache, so a
Node watch resumed from a compacted resourceVersion gets 410 Gone from etcd itself. The pool's
template asks for a newer version than its Nodes run, so its rollout goes on for the whole run.

Two followers run for --minutes: `describe POOL -w` (as admin) and `rollout status POOL`
(--stuck-after 24h, as another user on both servers, its workload cluster through
--workload-kubeconfig, so that the audit logs tell their requests apart). Every --every
seconds the pool churns, in a cycle of five steps, each with a mark in its Node's row of the
describe view (every instance is listed, as none runs the target version): an instance
(Machine, AzureMachinePoolMachine, Node) created NotReady, another created NotReady, the first
turned Ready, the second deleted, the first deleted. At a third of the run every connection through both
proxies is reset; at two thirds the workload proxy takes no connection for --outage seconds,
its connections reset, while Nodes change and etcd is compacted: the Node watch then resumes
from a revision that is gone (410) and lists again.

Reported: each follower's RSS after its start-up reads and at the end (the target: within
10%), its requests per minute by verb from the audit logs (mean and busiest minute), the
longest and the median time from a churn step to the first describe view that shows it (each
step's own, and around the reset and the outage apart), the lists the watches made (their first
and one after each 410 Gone), and
whether the last describe view equals a fresh describe's (ages aside). --views FILE keeps every
describe view. Needs what scale.py needs.
Everything listens on 127.0.0.1 and stops when the script ends.
"""

from __future__ import annotations

import argparse
import base64
import calendar
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import SHAPE, set_up
from scale import environment
from scalefleet import CLUSTER, GENERATION, KUBELET, kubelet_node
from scaleload import Fleet, _with_real_uids, fleet_servers
from support.controlplane import APIServer
from support.delayproxy import Proxies
from support.objects import INFRA
from support.scenarios import infra_machine, machine, v1beta1_condition

ROLLOUT_USER = "soak-rollout"
AMP = (INFRA, "v1beta1", "AzureMachinePool")
NOT_READY = 25  # an index kubelet_node makes NotReady
AMPM = (INFRA, "v1beta1", "AzureMachinePoolMachine")
TARGET = "v1.33.5"  # the pool's template version: newer than every Node's KUBELET
# Steps this long after a reset or an outage are counted apart.
AROUND = 20.0
AGE = re.compile(r"\b\d+(?:[smhd]\d*)+[smhd]?\b")


@dataclass
class Step:
    """One churn step: when it was made, and what the describe view shows once it has it."""

    at: float
    node: str
    want: str  # the Node row's reason once the view has it; "": no such row
    phase: str  # steady | reset | outage: what the network did around it
    seen: float | None = None


@dataclass
class Views:
    """describe -w's views as they arrive: each its arrival time and its text."""

    views: list[tuple[float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, stream: Iterable[str]) -> None:
        """A view starts after a `--- TIME: what changed` line (the first, at the start)."""
        current: list[str] = []
        started = 0.0
        for line in stream:
            if line.startswith("--- "):
                self._done(started, current)
                current = []
                continue
            if not current:
                started = time.monotonic()
            current.append(line)
        self._done(started, current)

    def _done(self, started: float, lines: list[str]) -> None:
        if lines:
            with self.lock:
                self.views.append((started, "".join(lines)))

    def last(self) -> str:
        with self.lock:
            return self.views[-1][1] if self.views else ""


class Churn:
    """The pool's instances made, turned Ready and deleted, as a controller and kubelets would."""

    def __init__(self, fleet: Fleet, ns: str) -> None:
        self.fleet, self.ns, self.index = fleet, ns, 0
        self.steps: list[Step] = []
        # What the network did around the steps made until `until`: reset, outage.
        self.phase, self.until = "steady", 0.0

    def around(self, phase: str, seconds: float) -> None:
        self.phase, self.until = phase, time.monotonic() + seconds

    def _objects(self, index: int, ready: bool) -> list[dict[str, Any]]:
        pool, name = SHAPE.pool, f"{SHAPE.pool}-soak-{index}"
        node_name, pid = f"{SHAPE.pool}-soak{index:05d}", f"azure:///soak/{index}"
        objects = [
            machine(GENERATION, self.ns, CLUSTER, pool, name, AMPM, pid, node_name, KUBELET, ready=ready),
            infra_machine(
                GENERATION, self.ns, CLUSTER, pool, AMP, name, "AzureMachinePoolMachine", pid,
                spec={"instanceID": f"soak-{index}"},
                status={"ready": True, "version": KUBELET, "provisioningState": "Succeeded",
                        "latestModelApplied": False, "nodeRef": {"name": node_name},
                        "conditions": [v1beta1_condition("Ready")]},
                labels={"azuremachinepool.infrastructure.cluster.x-k8s.io/machine-pool": pool},
            ),
            kubelet_node(node_name, pid, self.ns, pool, NOT_READY, name),
        ]  # fmt: skip
        if ready:  # the kubelet posting ready status
            for condition in objects[-1]["status"]["conditions"]:
                if condition["type"] == "Ready":
                    condition.update(status="True", reason="KubeletReady", message="kubelet is posting ready status")  # fmt: skip
        for obj in objects:
            obj["metadata"].pop("finalizers", None)  # no controller here to remove them
        return objects

    def _write(self, objects: list[dict[str, Any]], method: str) -> None:
        for fixture in objects:
            route = self.fleet.route[fixture["kind"] == "Node"]
            obj = _with_real_uids(fixture, self.fleet.real)
            if method == "create":
                created = route.create(obj)
                self.fleet.real[fixture["metadata"]["uid"]] = created["metadata"]["uid"]
            elif method == "status":
                path = route.api.path_of(obj, obj["metadata"]["name"]) + "/status"
                route.request("PATCH", path, {"status": obj["status"]}, "application/merge-patch+json")  # fmt: skip
            else:
                route.request("DELETE", route.api.path_of(obj, obj["metadata"]["name"]), {}, "application/json")  # fmt: skip

    def step(self) -> None:
        """The next step of the cycle: a and b created NotReady, a Ready, b and a deleted."""
        kind, cycle = self.index % 5, self.index // 5
        a, b = 2 * cycle, 2 * cycle + 1
        one, ready, method, want = {
            0: (a, False, "create", "KubeletNotReady"),
            1: (b, False, "create", "KubeletNotReady"),
            2: (a, True, "status", "KubeletReady"),
            3: (b, False, "delete", ""),
            4: (a, True, "delete", ""),
        }[kind]
        objects = self._objects(one, ready=ready)
        self._write(list(reversed(objects)) if method == "delete" else objects, method)
        now = time.monotonic()
        phase = self.phase if now < self.until else "steady"
        self.steps.append(Step(now, f"{SHAPE.pool}-soak{one:05d}", want, phase))
        self.index += 1


def _user_kubeconfig(server: APIServer, user: str, url: str, path: Path) -> Path:
    config = server.kubeconfig_dict(server.add_user(user, ("system:masters",)), user)
    config["clusters"][0]["cluster"]["server"] = url
    path.write_text(yaml.safe_dump(config))
    return path


def _compact(server: APIServer) -> int:
    """Compact etcd at its current revision: older watches cannot resume."""
    etcd = next(a.split("=", 1)[1] for a in server._argv if a.startswith("--etcd-servers="))

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(etcd + path, json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())  # type: ignore[no-any-return]

    key = base64.b64encode(b"/").decode()
    revision = int(post("/v3/kv/range", {"key": key, "limit": 1})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision


def _start(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _reader(take: Callable[[Iterable[str]], object], stream: IO[str] | None) -> threading.Thread:
    assert stream is not None
    return threading.Thread(target=take, args=(stream,), daemon=True)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _events(logs: dict[str, Path]) -> list[tuple[str, dict[str, Any]]]:
    """The audit logs' ResponseComplete events, each with its server's name."""
    return [
        (name, event)
        for name, path in logs.items()
        for line in path.read_text().splitlines()
        if (event := json.loads(line)).get("stage") == "ResponseComplete"
    ]


def _watch_lists(events: list[tuple[str, dict[str, Any]]], user: str) -> Counter[str]:
    """A user's LISTs made by its watches, by resource: the view's own ask for pages
    (limit=), a watch's first list and its list after a 410 Gone do not. (The audit log has
    the 410 as an ERROR event inside a watch answered 200, so it is counted by its list.)"""
    return Counter(
        f"{name[0]}:{(e.get('objectRef') or {}).get('resource')}"
        for name, e in events
        if e["user"]["username"] == user and e["verb"] == "list" and "limit=" not in e["requestURI"]
    )


def _requests(
    events: list[tuple[str, dict[str, Any]]], since: float, user: str
) -> tuple[Counter[str], Counter[int]]:
    """A user's requests after `since` (epoch seconds), by verb and resource, and by minute."""
    verbs: Counter[str] = Counter()
    minutes: Counter[int] = Counter()
    for name, event in events:
        if event["user"]["username"] == user:
            stamp = time.strptime(event["stageTimestamp"][:19], "%Y-%m-%dT%H:%M:%S")
            if (when := calendar.timegm(stamp)) >= since:
                resource = (event.get("objectRef") or {}).get("resource", "?")
                verbs[f"{name[0]}:{event['verb']} {resource}"] += 1
                minutes[int((when - since) // 60)] += 1
    return verbs, minutes


def soak(args: argparse.Namespace) -> None:
    plugins = (args.bin or Path(sys.executable).parent).resolve()
    work = Path(tempfile.mkdtemp(prefix="kmp-watchsoak-"))
    no_cache = ("--watch-cache=false",)
    with fleet_servers("machines", SHAPE.pool_kinds(), no_cache) as grown, Proxies(args.rtt / 1000) as proxies:  # fmt: skip
        print(f"grew the pool to N={args.n} in {grown.grow_to(args.n):.1f} s", flush=True)
        pair, ns = grown.pair, grown.pair.namespace
        setup = set_up(pair, proxies, work, 1)
        urls = {name: p.url for name, p in proxies.proxies.items()}
        rollout_mgmt = _user_kubeconfig(pair.management, ROLLOUT_USER, urls["management"], work / "r-mgmt.yaml")  # fmt: skip
        rollout_wl = _user_kubeconfig(pair.workload, ROLLOUT_USER, urls["workload"], work / "r-wl.yaml")  # fmt: skip
        mp = f"/apis/cluster.x-k8s.io/{GENERATION}/namespaces/{ns}/machinepools/{SHAPE.pool}"
        grown.route[False].request("PATCH", mp, {"spec": {"template": {"spec": {"version": TARGET}}}}, "application/merge-patch+json")  # fmt: skip
        env, plugin = environment(plugins, work), str(plugins / "kubectl-machinepool")
        seconds = args.minutes * 60
        describe = [plugin, "describe", SHAPE.pool, "-n", ns, "--kubeconfig", str(setup.kubeconfig)]
        rollout = [
            plugin, "rollout", "status", SHAPE.pool, "-n", ns, "--kubeconfig", str(rollout_mgmt),
            "--workload-kubeconfig", str(rollout_wl), "--stuck-after", "24h",
            "--timeout", f"{int(seconds) + 600}s",
        ]  # fmt: skip
        started_epoch = time.time()
        followers = {"describe -w": _start([*describe, "-w"], env), "rollout status": _start(rollout, env)}  # fmt: skip
        views, outputs = Views(), {name: list[str]() for name in followers}
        readers = [
            _reader(views.read, followers["describe -w"].stdout),
            _reader(outputs["rollout status"].extend, followers["rollout status"].stdout),
            *(_reader(outputs[name].extend, p.stderr) for name, p in followers.items()),
        ]
        for reader in readers:
            reader.start()
        time.sleep(20)  # the start-up reads and the watches' first answers
        rss: dict[str, list[tuple[float, int]]] = {name: [] for name in followers}
        churn, begun = Churn(grown, ns), time.monotonic()
        reset_at, outage_at, happenings = seconds / 3, 2 * seconds / 3, []
        try:
            while (elapsed := time.monotonic() - begun) < seconds:
                if reset_at is not None and elapsed >= reset_at:
                    reset_at = None
                    churn.around("reset", AROUND)
                    proxies.drop("management")
                    proxies.drop("workload")
                    happenings.append(
                        f"{elapsed:.0f} s: every connection through both proxies reset"
                    )
                if outage_at is not None and elapsed >= outage_at:
                    outage_at = None
                    churn.around("outage", args.outage + AROUND)
                    proxies.hold("workload", True)
                    proxies.drop("workload")
                    for _ in range(4):
                        churn.step()
                        time.sleep(1)
                    revision = _compact(pair.workload)
                    time.sleep(max(0.0, args.outage - 4))
                    proxies.hold("workload", False)
                    happenings.append(f"{elapsed:.0f} s: workload path down {args.outage:.0f} s, Nodes changed, etcd compacted at revision {revision}")  # fmt: skip
                    continue
                churn.step()
                for name, process in followers.items():
                    rss[name].append((elapsed, _rss_kib(process.pid)))
                time.sleep(args.every)
            time.sleep(15)  # the last step shown
            for name, process in followers.items():
                rss[name].append((seconds, _rss_kib(process.pid)))
        finally:
            for process in followers.values():
                process.send_signal(signal.SIGTERM)  # a background job ignores SIGINT
            for process in followers.values():
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for reader in readers:
            reader.join(10)
        fresh = subprocess.run(
            describe, env=env, capture_output=True, text=True, check=False
        ).stdout
        report(args, churn.steps, views, happenings, rss, pair.audit_logs(), started_epoch, fresh, outputs, followers)  # fmt: skip


def _node_reason(text: str, node: str) -> str | None:
    """The reason in the view's row of this Node; "" when it has none, None when the view
    shows no Node at all (they could not be read)."""
    if "  Node " not in text and "─Node " not in text:
        return None
    row = next((line for line in text.splitlines() if f"Node {node} " in line), "")
    return next((r for r in ("KubeletNotReady", "KubeletReady") if r in row), "")


def _seen(steps: list[Step], views: Views) -> None:
    for step in steps:
        for at, text in views.views:
            if at >= step.at and _node_reason(text, step.node) == step.want:
                step.seen = at
                break


def report(
    args: argparse.Namespace,
    steps: list[Step],
    views: Views,
    happenings: list[str],
    rss: dict[str, list[tuple[float, int]]],
    logs: dict[str, Path],
    since: float,
    fresh: str,
    outputs: dict[str, list[str]],
    followers: dict[str, subprocess.Popen[str]],
) -> None:
    _seen(steps, views)
    if args.views:
        args.views.write_text("".join(f"=== {at:.2f}\n{text}" for at, text in views.views))
    print(f"\n# Watch soak: {args.minutes:g} minutes, N={args.n}, RTT {args.rtt} ms, a churn step every {args.every:g} s\n")  # fmt: skip
    for happened in happenings:
        print(f"- {happened}")
    print(f"- {len(steps)} churn steps; {len(views.views)} describe views\n")
    print("| follower | RSS after the first minute | at the end | change | at each minute's end | requests per minute (mean) | busiest minute | by verb |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    minutes, events = args.minutes, _events(logs)
    for name, user in (("describe -w", "admin"), ("rollout status", ROLLOUT_USER)):
        verbs, per_minute = _requests(events, since, user)
        total = sum(verbs.values())
        busiest = max(per_minute.values(), default=0)
        by_verb = ", ".join(f"{k} {v}" for k, v in sorted(verbs.items()))
        # After the first minute of churn: what it takes to hold the view, the allocator's
        # pools grown by the first reads; from then on it must stay.
        samples = rss[name]
        start = next((kib for at, kib in samples if at >= min(60.0, minutes * 20)), samples[0][1])
        end = samples[-1][1]
        each = {int(at // 60): kib for at, kib in samples}  # the last sample of each minute
        trend = ", ".join(f"{kib / 1024:.0f}" for _, kib in sorted(each.items()))
        print(
            f"| {name} | {start / 1024:.1f} MB | {end / 1024:.1f} MB | "
            f"{(end - start) / start * 100:+.1f}% | {trend} MB | "
            f"{total / minutes:.1f} | {busiest} | {by_verb} |"
        )
    print("\nTime from a churn step to the first describe view that shows it:\n")
    print("| around | steps | shown | median | longest |")
    print("|---|---|---|---|---|")
    for phase in ("steady", "reset", "outage"):
        chosen = [s for s in steps if s.phase == phase]
        stale = [s.seen - s.at for s in chosen if s.seen is not None]
        if chosen:
            median = f"{statistics.median(stale):.1f} s" if stale else "-"
            longest = f"{max(stale):.1f} s" if stale else "-"
            print(f"| {phase} | {len(chosen)} | {len(stale)} | {median} | {longest} |")
    for name, user in (("describe -w", "admin"), ("rollout status", ROLLOUT_USER)):
        lists = ", ".join(f"{k} {v}" for k, v in sorted(_watch_lists(events, user).items()))
        print(f"\n{name}: its watches' lists (each watch's first, and one after each 410): {lists}")  # fmt: skip
    last = AGE.sub("AGE", views.last())
    same = last == AGE.sub("AGE", fresh)
    print(f"\nThe last describe -w view equals a fresh describe (ages aside): {'yes' if same else 'no'}")  # fmt: skip
    if not same:
        differ = [(a, b) for a, b in zip(last.splitlines(), AGE.sub("AGE", fresh).splitlines(), strict=False) if a != b]  # fmt: skip
        for a, b in differ[:5]:
            print(f"  view:  {a}\n  fresh: {b}")
    for name, process in followers.items():
        said = [line.rstrip() for line in outputs[name] if line.startswith(("warning", "error"))]
        print(f"\n{name}: exit {process.returncode}; {len(said)} warnings")
        for line in said[:8]:
            print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.epilog = "\n".join(__doc__.splitlines()[1:])
    add = parser.add_argument
    add("--minutes", type=float, default=30, help="how long the followers run (default 30)")
    add("--n", type=int, default=100, help="instances in the pool (default 100)")
    add("--rtt", type=int, default=100, help="round-trip time in ms (default 100)")
    add("--every", type=float, default=3, help="seconds between churn steps (default 3)")
    add("--outage", type=float, default=15, help="seconds the workload path is down (default 15)")
    add("--bin", type=Path, help="directory of the installed console scripts (default: this venv's)")  # fmt: skip
    add("--views", type=Path, help="write every describe view here, each after its arrival time")  # fmt: skip
    soak(parser.parse_args())


if __name__ == "__main__":
    main()
