"""Findings an operator has accepted (--ignore, the config file's ignore list): each by its
rule's code, everywhere or in one Cluster or one pool, set aside with where it was accepted so
that a run can say how many it did not show, and why.

Light on purpose: app/options.py holds these, and the command line imports it for --help.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from kubectl_machinepool.base.records import record

if TYPE_CHECKING:
    from kubectl_machinepool.diagnostics.core import Finding

FLAG = "--ignore"


@record
class Ignore:
    """One accepted rule code: everywhere, or only in one Cluster or one pool, each named by
    (namespace, name)."""

    code: str
    cluster: tuple[str, str] | None = None
    pool: tuple[str, str] | None = None
    # Where it was accepted: --ignore, or the config file as shown to the user.
    source: str = FLAG

    def covers(self, finding: Finding) -> bool:
        if finding.code != self.code:
            return False
        if self.cluster is not None:
            return (finding.namespace, finding.cluster) == self.cluster
        if self.pool is not None:
            # A Cluster-level finding (pool "") belongs to no pool.
            return (finding.namespace, finding.pool) == self.pool
        return True


@record
class Ignored:
    """The findings set aside, and where the ignores that covered them were given (each once,
    in the order the ignores come)."""

    findings: tuple[Finding, ...] = ()
    sources: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.findings)


def set_aside(
    findings: Iterable[Finding], ignores: Sequence[Ignore], into: list[tuple[Finding, str]]
) -> list[Finding]:
    """The findings no ignore covers; each one covered goes into `into` with the first
    ignore's source."""
    kept: list[Finding] = []
    for finding in findings:
        source = next((i.source for i in ignores if i.covers(finding)), None)
        if source is None:
            kept.append(finding)
        else:
            into.append((finding, source))
    return kept


def ignored(aside: Sequence[tuple[Finding, str]], ignores: Sequence[Ignore]) -> Ignored:
    used = {source for _, source in aside}
    sources = dict.fromkeys(i.source for i in ignores if i.source in used)
    return Ignored(tuple(finding for finding, _ in aside), tuple(sources))
