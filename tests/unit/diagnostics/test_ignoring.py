"""Findings an operator accepted: set aside by rule, Cluster or pool, on the shipped examples."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kubectl_machinepool.diagnostics.core import Finding, Severity
from kubectl_machinepool.diagnostics.ignoring import Ignore, Ignored
from kubectl_machinepool.diagnostics.rules import capi_version, diagnose, diagnosis
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import describe
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.offline.dump import load_dump

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
NOW = datetime(2026, 11, 29, 15, tzinfo=UTC)
FILE = "~/.config/kubectl-machinepool/config.yaml"


def judged(*ignores: Ignore) -> tuple[list[Finding], Ignored]:
    snapshot = load_dump([str(EXAMPLES)], None)
    description = describe(snapshot, Selection(), NOW)
    return diagnosis(description, snapshot, capi_version(snapshot, None), Thresholds(), ignores)


def keys(findings: list[Finding] | tuple[Finding, ...]) -> Counter[tuple[str, str, str]]:
    return Counter((f.code, f.cluster, f.pool) for f in findings)


def test_no_ignore_sets_nothing_aside() -> None:
    snapshot = load_dump([str(EXAMPLES)], None)
    description = describe(snapshot, Selection(), NOW)
    everything = diagnose(description, snapshot, capi_version(snapshot, None), Thresholds())
    assert judged() == (everything, Ignored())


def test_a_rule_ignored_everywhere_goes_from_every_cluster_and_pool() -> None:
    every, _ = judged()
    kept, ignored = judged(Ignore("MP1102"))
    wanted = [f for f in every if f.code == "MP1102"]
    assert len(wanted) == 2  # vmss-batch's and vmss-workers', in two Clusters
    assert ignored == Ignored(tuple(wanted), ("--ignore",))
    assert keys(kept) + keys(ignored.findings) == keys(every)


def test_a_rule_ignored_in_one_cluster_stays_in_the_others() -> None:
    kept, ignored = judged(Ignore("MP1102", cluster=("capi-prod", "batch"), source=FILE))
    assert [(f.code, f.cluster) for f in ignored.findings] == [("MP1102", "batch")]
    assert ignored.sources == (FILE,)
    assert [f.cluster for f in kept if f.code == "MP1102"] == ["prod"]
    # Another namespace's Cluster of that name is another Cluster.
    assert judged(Ignore("MP1102", cluster=("capi-dev", "batch")))[1] == Ignored()


def test_a_rule_ignored_on_one_pool_stays_on_the_others() -> None:
    kept, ignored = judged(Ignore("MP1102", pool=("capi-prod", "vmss-batch")))
    assert [(f.code, f.pool) for f in ignored.findings] == [("MP1102", "vmss-batch")]
    assert [f.pool for f in kept if f.code == "MP1102"] == ["vmss-workers"]


def test_the_cluster_looks_healthy_counts_only_what_is_shown() -> None:
    """MP1701 says how many warnings the pool has: those accepted are not among them, and with
    none left it is not said at all (nor counted as ignored: nobody ignored it)."""
    every, _ = judged()
    healthy = [f for f in every if f.code == "MP1701" and f.pool == "vmss-workers"]
    assert "has 2 warning or error findings" in healthy[0].message
    kept, ignored = judged(Ignore("MP0102", pool=("capi-prod", "vmss-workers")))
    (healthy,) = [f for f in kept if f.code == "MP1701" and f.pool == "vmss-workers"]
    assert "has 1 warning or error finding:" in healthy.message
    kept, ignored = judged(Ignore("MP0101"))
    assert [f.code for f in ignored.findings] == ["MP0101"]
    assert not [f for f in kept if f.code == "MP1701" and f.pool == "asg-workers"]


def test_sources_are_named_once_in_the_order_the_ignores_come() -> None:
    _, ignored = judged(
        Ignore("MP1801", source=FILE), Ignore("MP1102"), Ignore("MP1801"), Ignore("MP0104")
    )
    assert Counter(f.code for f in ignored.findings) == {"MP1801": 2, "MP1102": 2, "MP0104": 1}
    assert ignored.sources == (FILE, "--ignore")
    assert ignored.count == 5


FINDING = Finding(
    "MP0104", "R1e", Severity.WARNING, "capi-prod", "batch", "", "Node n", "m", "a", ()
)


@pytest.mark.parametrize(
    ("ignore", "covered"),
    [
        (Ignore("MP0104"), True),
        (Ignore("MP0801"), False),
        (Ignore("MP0104", cluster=("capi-prod", "batch")), True),
        (Ignore("MP0104", cluster=("capi-prod", "prod")), False),
        # A Cluster-level finding is in no pool, so no pool's ignore covers it.
        (Ignore("MP0104", pool=("capi-prod", "vmss-batch")), False),
    ],
)
def test_what_an_ignore_covers(ignore: Ignore, covered: bool) -> None:
    assert ignore.covers(FINDING) is covered


def test_a_pool_ignore_covers_that_pool_of_that_namespace() -> None:
    pooled = replace(FINDING, pool="vmss-batch")
    assert Ignore("MP0104", pool=("capi-prod", "vmss-batch")).covers(pooled)
    assert not Ignore("MP0104", pool=("capi-dev", "vmss-batch")).covers(pooled)
