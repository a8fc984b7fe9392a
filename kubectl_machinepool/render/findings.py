"""diagnose and explain as text and structured documents, and describe's findings list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace
from typing import Any

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import format_time
from kubectl_machinepool.diagnostics.core import CapiVersion, Finding, Rule, Severity
from kubectl_machinepool.diagnostics.ignoring import Ignored
from kubectl_machinepool.diagnostics.thresholds import Thresholds
from kubectl_machinepool.model.description import Description
from kubectl_machinepool.render.color import Palette
from kubectl_machinepool.render.events import event_evidence
from kubectl_machinepool.render.structured import SCHEMA_VERSION, finding_doc, ignored_doc
from kubectl_machinepool.render.table import table
from kubectl_machinepool.render.wrap import line_width, wrap

# Without a width (piped output) text wraps here.
WIDTH = 100
INDENT = " " * 19


@record
class DiagnosisView:
    description: Description
    findings: Sequence[Finding]
    capi: CapiVersion
    thresholds: Thresholds
    palette: Palette
    ignored: Ignored = field(default_factory=Ignored)


def severity_label(severity: Severity, palette: Palette) -> str:
    word = severity.name.ljust(7)
    if severity is Severity.ERROR:
        return palette.bad(word)
    if severity is Severity.WARNING:
        return palette.warn(word)
    return word


def _wrapped(text: str, first: str, rest: str, width: int | None = None) -> list[str]:
    lines = wrap(escape(text), line_width(width, WIDTH), first, rest)
    return lines or [first.rstrip()]


def _heading(text: str, width: int | None) -> list[str]:
    """A heading line: whole without a width, as it always was; else wrapped like the rest."""
    return [escape(text)] if width is None else _wrapped(text, "", "  ", width)


def finding_lines(
    finding: Finding, palette: Palette, detail: bool = True, *, width: int | None = None
) -> list[str]:
    head = f"  {severity_label(finding.severity, palette)}  {finding.code}  "
    lines = _wrapped(finding.message, head, INDENT, width)
    if detail:
        lines += _wrapped(finding.action, INDENT + "what to do: ", INDENT + "  ", width)
        if finding.refs:
            lines += _wrapped(", ".join(finding.refs), INDENT + "refs: ", INDENT + "  ", width)
    for event in finding.events:
        lines += _wrapped(event_evidence(event), INDENT + "event: ", INDENT + "  ", width)
    return lines


def count_line(findings: Sequence[Finding]) -> str:
    by = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    parts = [
        f"{by[Severity.ERROR]} error{'s' if by[Severity.ERROR] != 1 else ''}",
        f"{by[Severity.WARNING]} warning{'s' if by[Severity.WARNING] != 1 else ''}",
        f"{by[Severity.INFO]} info",
    ]
    total = len(findings)
    return f"{total} finding{'s' if total != 1 else ''}: " + ", ".join(parts)


def render_diagnosis(view: DiagnosisView, *, width: int | None = None) -> str:
    """Findings grouped by pool, most severe first, then what belongs to a Cluster only.
    Text wraps at width columns (a terminal's), or at WIDTH when None."""
    out: list[str] = []
    for cluster in view.description.clusters:
        for pool in cluster.pools:
            mp = pool.pool
            mine = [f for f in view.findings if (f.namespace, f.pool) == (mp.namespace, mp.name)]
            title = f"MachinePool {mp.namespace}/{mp.name} (Cluster {mp.cluster})"
            out += _heading(title + ("" if mine else ": no findings"), width)
            for finding in mine:
                out += finding_lines(finding, view.palette, width=width)
            out.append("")
        # Findings about no pool in particular, such as orphan Nodes.
        general = [
            f
            for f in view.findings
            if (f.namespace, f.cluster) == (cluster.namespace, cluster.name) and not f.pool
        ]
        if general:
            out += _heading(f"Cluster {cluster.namespace}/{cluster.name}", width)
            for finding in general:
                out += finding_lines(finding, view.palette, width=width)
            out.append("")
    out += _heading(
        count_line(view.findings) + f" (Cluster API {view.capi}: {view.capi.source})", width
    )
    return "\n".join(out) + "\n" + ignored_line(view.ignored)


def ignored_line(ignored: Ignored) -> str:
    """How many findings were left out and who asked (--ignore, the config file); nothing when
    none was."""
    if not ignored.count:
        return ""
    plural = "s" if ignored.count != 1 else ""
    return escape(f"{ignored.count} finding{plural} ignored ({', '.join(ignored.sources)})") + "\n"


def findings_list(
    findings: Sequence[Finding], palette: Palette, *, width: int | None = None
) -> str:
    """describe's list under the tree: one entry per finding, without the long explanation."""
    if not findings:
        return ""
    lines = _heading("Findings (kubectl machinepool explain CODE tells more):", width)
    for finding in findings:
        where = f"{finding.namespace}/{finding.pool}" if finding.pool else finding.subject
        entry = replace(finding, message=f"{where}: {finding.message}")
        lines += finding_lines(entry, palette, detail=False, width=width)
    return "\n".join(lines) + "\n"


def _seconds(value: Any) -> int:
    return int(value.total_seconds())


def diagnosis_document(view: DiagnosisView) -> dict[str, Any]:
    findings = view.findings
    pools = [
        {"namespace": p.pool.namespace, "name": p.pool.name, "cluster": p.pool.cluster}
        for c in view.description.clusters
        for p in c.pools
    ]
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolDiagnosis",
        "now": format_time(view.description.now),
        "capiVersion": {
            "version": None if not view.capi.known else str(view.capi),
            "source": view.capi.source,
        },
        "thresholdSeconds": {
            "scaling": _seconds(view.thresholds.scaling),
            "taint": _seconds(view.thresholds.taint),
            "deleting": _seconds(view.thresholds.deleting),
            "drain": _seconds(view.thresholds.drain),
        },
        "notes": list(view.description.all_notes),
        "machinePools": pools,
        "findings": [finding_doc(f) for f in findings],
        "summary": {s.label: sum(1 for f in findings if f.severity is s) for s in Severity},
        "ignoredFindings": ignored_doc(view.ignored),
    }


def explain(rule: Rule, *, width: int | None = None) -> str:
    known = f" ({rule.rule})" if rule.rule else ""
    lines = [f"{rule.code}{known} {rule.title}, {rule.severity.label}", ""]
    for label, text in (
        ("Checks", rule.checks),
        ("Why it matters", rule.why),
        ("What to do", rule.action),
    ):
        lines += _wrapped(text, f"{label + ':':<16}", " " * 16, width)
    lines += _wrapped(remedy_text(rule), f"{'Remedy:':<16}", " " * 16, width)
    refs = ", ".join(rule.refs) or "no upstream issue (derived from how Cluster API works)"
    lines += _wrapped(refs, f"{'Refs:':<16}", " " * 16, width)
    return "\n".join(lines) + "\n"


def remedy_text(rule: Rule) -> str:
    """The rule's remedy as explain says it: this tool's command, or outside the tool."""
    if rule.remedy is None:
        return "outside this tool (What to do says it): kubectl machinepool fix never plans it"
    return f"{rule.remedy.usage} (kubectl machinepool fix plans it)"


def explain_list(rules: Sequence[Rule]) -> str:
    rows = [[r.code, r.rule or "-", r.severity.label, r.title] for r in rules]
    return table(["CODE", "RULE", "SEVERITY", "TITLE"], rows, no_headers=False)
