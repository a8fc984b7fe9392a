"""Fleet output (--contexts, --all-contexts): each context's own view, under its name, in one
text or one document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.diagnostics.core import Finding, Severity
from kubectl_machinepool.model.fleet import Read
from kubectl_machinepool.render.findings import (
    DiagnosisView,
    count_line,
    diagnosis_document,
    render_diagnosis,
)
from kubectl_machinepool.render.structured import SCHEMA_VERSION


def unread_line(reads: Sequence[Read[Any]]) -> str:
    read = sum(1 for r in reads if r.error is None)
    return f"{read} of {len(reads)} context{'s' if len(reads) != 1 else ''} read"


@record(slots=False)
class ContextDiagnosis:
    """One context's diagnosis as the fleet shows it, made in the process that read the context:
    only this travels to the fleet's process, not the objects it was judged from."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    # render_diagnosis's text, or diagnosis_document's document: what the output format needs.
    text: str = ""
    document: dict[str, Any] | None = None


def context_diagnosis(
    view: DiagnosisView, output_format: str, width: int | None
) -> ContextDiagnosis:
    findings, notes = tuple(view.findings), tuple(view.description.all_notes)
    if output_format == "text":
        return ContextDiagnosis(findings, notes, text=render_diagnosis(view, width=width))
    return ContextDiagnosis(findings, notes, document=diagnosis_document(view))


def diagnosis_block(read: Read[ContextDiagnosis], first: bool) -> str:
    """One context's part of the fleet's text, printed as soon as it is in."""
    gap = "" if first else "\n"
    if read.value is not None:
        return f"{gap}Context {escape(read.context)}\n{read.value.text}"
    return f"{gap}Context {escape(read.context)}: not read: {escape(read.error or '')}\n"


def diagnosis_summary(reads: Sequence[Read[ContextDiagnosis]]) -> str:
    findings = [f for r in reads if r.value is not None for f in r.value.findings]
    return f"\nFleet: {unread_line(reads)}; {count_line(findings)}\n"


def diagnosis_fleet_document(reads: Sequence[Read[ContextDiagnosis]]) -> dict[str, Any]:
    documents = []
    summary = {s.label: 0 for s in Severity}
    for read in reads:
        diagnosis = None if read.value is None else read.value.document
        for label, count in (diagnosis or {}).get("summary", {}).items():
            summary[label] += count
        documents.append({"context": read.context, "error": read.error, "diagnosis": diagnosis})
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolFleetDiagnosis",
        "contexts": documents,
        "summary": summary,
    }
