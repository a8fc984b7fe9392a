"""Write commands with generated flags and pool annotations on the real API server: every request
that changes state is one of the writes the plan listed, the server takes each of them, and a
client dry run sends none.

tests/property/test_property_writes.py feeds hundreds of generated command lines to the write
commands planning from a dump. Here fewer (CI: 8 per Cluster API generation) run against the
test API server through the fault proxy, with no fault: it records every request. Each example
gets a fresh namespace holding a scenario whose MachinePool carries generated annotations (the
autoscaler bounds, the pause and restart records, paused, replicas-managed-by), runs the command
with --dry-run=client, then the same command with --yes, and holds the real run to its plan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.faultmatrix import changes_state
from support.faultproxy import FaultProxy, Seen
from support.faultstate import ThroughProxy
from support.management import ManagementCluster, create_scenario, delete_nodes
from support.run import Result, run_cli
from support.scenarios import SCENARIOS
from support.waiting import polls

EXAMPLES = 8
LISTED = re.compile(r"^(\S+) .* \(dry run\)$", re.MULTILINE)
# /apis/GROUP/VERSION/namespaces/NS/PLURAL/NAME[/SUBRESOURCE], or /api/v1/... for core kinds.
OBJECT_PATH = re.compile(r"^/apis?/(?:([^/]+)/)?v[^/]+/namespaces/[^/]+/([^/]+)/([^/]+)")

POOLS = {"capd": ("dev-mp-0", ("dev-mp-0-x7q2p", "dev-mp-0-k9d4m")),
         "azure-vmss": ("vmss-workers", ("vmss-workers-0", "vmss-workers-1", "vmss-workers-2"))}  # fmt: skip
PAUSED, RECORD, RESTART = (
    "cluster.x-k8s.io/paused", "kubectl-machinepool/paused", "kubectl-machinepool/restart-started"
)  # fmt: skip
MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
ANNOTATIONS = {
    PAUSED: st.just(""),
    RECORD: st.sampled_from(["MachinePool/dev-mp-0", "Bogus/x", "\x1b[2J"]),
    RESTART: st.sampled_from(["2020-01-01T00:00:00Z", "2099-01-01T00:00:00Z", "yesterday", ""]),
    MIN: st.sampled_from(["1", "3", "-1", "abc", "1e0", "9" * 30]),
    MAX: st.sampled_from(["2", "5", "0", "1.0", "\x1b[2J"]),
    "cluster.x-k8s.io/replicas-managed-by": st.sampled_from(["", "external-autoscaler"]),
}
DURATIONS = st.sampled_from(["0", "1s", "10m", "1h", "1000000h", "2562047h"])
COUNTS = st.sampled_from(["0", "1", "2", "3", str(2**31 - 1)])
VERSIONS = st.sampled_from(["v1.34.1", "v1.34.0", "v1.35.0", "v1.36.0", "1.34.2"])
SETS = st.sampled_from(
    ["spec.template.customImage=kindest/node:v1.34.1", "spec.template.customImage=",
     "spec.template.customImage=my/image:1\x1b[2J", "spec.template.image.id=img-1",
     "metadata.labels=", "status.replicas=5"]
)  # fmt: skip


@st.composite
def commands(draw: st.DrawFn, scenario: str) -> list[str]:
    pool, machines = POOLS[scenario]

    def maybe(flag: str, values: st.SearchStrategy[str]) -> list[str]:
        return [flag, draw(values)] if draw(st.booleans()) else []

    choice = draw(st.sampled_from(["upgrade", "scale", "restart", "pause", "delete-machine"]))
    if choice == "upgrade":
        sets = [f"--set={draw(SETS)}" for _ in range(draw(st.integers(0, 2)))]
        return ["upgrade", pool, "--version", draw(VERSIONS), *sets, "--no-wait",
                *draw(st.sampled_from([[], ["--force"]]))]  # fmt: skip
    if choice == "scale":
        return ["scale", pool, "--replicas", draw(COUNTS), *maybe("--current-replicas", COUNTS),
                *draw(st.sampled_from([[], ["--force"]]))]  # fmt: skip
    if choice == "restart":
        return ["rollout", "restart", pool, "--no-wait", *maybe("--drain-timeout", DURATIONS),
                *maybe("--max-unavailable", st.sampled_from(["1", "2"]))]  # fmt: skip
    if choice == "pause":
        return ["rollout", draw(st.sampled_from(["pause", "resume"])), pool]
    return ["delete-machine", draw(st.sampled_from(machines)), "--no-wait",
            *draw(st.sampled_from([[], ["--replace"], ["--scale-down"]])),
            *maybe("--drain-timeout", DURATIONS)]  # fmt: skip


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, str], list[str]]:
    scenario = draw(st.sampled_from(["capd", "capd", "capd", "azure-vmss"]))
    keys = draw(st.lists(st.sampled_from(sorted(ANNOTATIONS)), max_size=3, unique=True))
    annotations = {key: draw(ANNOTATIONS[key]) for key in keys}
    return scenario, annotations, draw(commands(scenario))


def target(seen: Seen) -> str:
    """The object a request is about, as kubectl names it (machinepool.cluster.x-k8s.io/NAME)."""
    match = OBJECT_PATH.match(seen.path)
    if match is None:
        return seen.path
    group, plural, name = match.groups()
    kind = plural.removesuffix("s")
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


def mutations(proxy: FaultProxy) -> list[Seen]:
    return [s for s in proxy.log if changes_state(s)]


def broken_promises(
    planned: Result,
    planned_log: list[Seen],
    ran: Result,
    ran_log: list[Seen],
    argv: list[str],
    own: set[str],
) -> list[str]:
    """What the run owes to its plan: the broken promises."""
    broken = [f"the client dry run sent {s}" for s in planned_log]
    listed = set(LISTED.findall(planned.out)) if planned.code == 0 else set()
    for result in (planned, ran):
        if "Traceback" in result.out + result.err:
            broken.append("a traceback")
    if ran.code != planned.code:
        broken.append(
            f"exit {ran.code}, where the plan made from the same state gave {planned.code}"
        )
    sent = {target(s) for s in ran_log}
    broken += [f"{s} is none of the writes listed: {sorted(listed)}" for s in ran_log
               if target(s) not in listed]  # fmt: skip
    broken += [f"{s} is not about the pool or its Machines" for s in ran_log
               if target(s).rpartition("/")[2] not in own]  # fmt: skip
    broken += [f"the server refused {s}: {s.upstream_status}" for s in ran_log
               if s.upstream_status is not None and s.upstream_status >= 400]  # fmt: skip
    # A restart with --no-wait replaces what may start now, not every instance listed.
    if ran.code == 0 and argv[:2] != ["rollout", "restart"] and sent != listed:
        broken.append(f"listed {sorted(listed)}, written {sorted(sent)}")
    return broken


@dataclass(frozen=True)
class Site:
    """The test API server through a recording proxy, as the plugin and the workload
    kubeconfig Secrets of the scenarios reach it."""

    cluster: ManagementCluster
    proxy: FaultProxy
    kubeconfig: Path

    def __repr__(self) -> str:  # a failing example's report: not every namespace made
        return f"Site({self.cluster.generation})"


def _after_this_second() -> None:
    """Wait for the next second: the API server stamps creation in whole seconds, and a restart
    begun in the second the instances were made counts them as new (its dry run would have
    nothing to do, and the run a moment later would replace them)."""
    started = datetime.now(UTC).replace(microsecond=0)
    for _ in polls(0.02):
        if datetime.now(UTC) >= started + timedelta(seconds=1):
            return


@pytest.fixture
def site(mgmt: ManagementCluster, tmp_path: Path, no_cluster: None) -> Iterator[Site]:
    with FaultProxy.for_apiserver(mgmt.server, mgmt.server.admin, tmp_path / "proxy") as proxy:
        kubeconfig = proxy.write_kubeconfig(tmp_path / "kubeconfig", mgmt.server.admin)
        through = ThroughProxy(mgmt.server.admin, proxy)
        yield Site(ManagementCluster(mgmt.generation, through, mgmt.api), proxy, kubeconfig)  # type: ignore[arg-type]
        assert not proxy.errors


# A fixed sequence, everywhere: the random exploring is the dump test's, at a far lower cost.
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(calls())
@example(
    (
        "capd",
        {PAUSED: "", RECORD: "Cluster/dev,Machine/dev-mp-0-x7q2p,MachinePool/dev-mp-0"},
        ["rollout", "resume", "dev-mp-0"],
    )
)  # a record naming what is not the pool's
@example(
    ("capd", {RESTART: "2099-01-01T00:00:00Z"}, ["rollout", "restart", "dev-mp-0", "--no-wait"])
)
@example(("capd", {MIN: "abc", MAX: "5"}, ["scale", "dev-mp-0", "--replicas", "3"]))
@example(
    (
        "capd",
        {},
        [
            "upgrade",
            "dev-mp-0",
            "--version",
            "v1.34.1",
            "--no-wait",
            "--set=spec.template.customImage=my/image:1\x1b[2J",
        ],
    )
)
@example(
    (
        "capd",
        {},
        [
            "delete-machine",
            "dev-mp-0-x7q2p",
            "--scale-down",
            "--no-wait",
            "--drain-timeout",
            "2562047h",
        ],
    )
)  # above an int32 of seconds
def test_writes_stay_within_their_plans(
    site: Site, capsys: pytest.CaptureFixture[str], call: tuple[str, dict[str, str], list[str]]
) -> None:
    scenario, annotations, argv = call
    cluster, proxy = site.cluster, site.proxy
    namespace = cluster.new_namespace()
    objects = SCENARIOS[scenario](cluster.generation, namespace, namespace.removeprefix("t-"))
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    pool["metadata"].setdefault("annotations", {}).update(annotations)
    create_scenario(cluster, objects)
    if argv[:2] == ["rollout", "restart"]:
        _after_this_second()
    try:
        where = ["-n", namespace, "--kubeconfig", str(site.kubeconfig)]
        proxy.arm()
        planned = run_cli(capsys, *argv, *where, "--dry-run=client")
        planned_log = mutations(proxy)
        proxy.arm()
        ran = run_cli(capsys, *argv, *where, "--yes")
        ran_log = mutations(proxy)
    finally:
        delete_nodes(cluster, objects)
    pool_name, machines = POOLS[scenario]
    broken = broken_promises(planned, planned_log, ran, ran_log, argv, {pool_name, *machines})
    assert broken == [], json.dumps(
        {"plan": planned.out[-2500:] + planned.err, "run": ran.out[-1500:] + ran.err}, indent=1
    )
