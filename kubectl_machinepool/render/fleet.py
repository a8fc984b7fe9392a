"""Fleet output (--contexts, --all-contexts): each context's own view, under its name, in one
text or one document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.diagnostics.core import Severity
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


def diagnosis_text(reads: Sequence[Read[DiagnosisView]], *, width: int | None) -> str:
    blocks = []
    for read in reads:
        if read.value is not None:
            blocks.append(
                f"Context {escape(read.context)}\n" + render_diagnosis(read.value, width=width)
            )
        else:
            blocks.append(f"Context {escape(read.context)}: not read: {escape(read.error or '')}\n")
    findings = [f for r in reads if r.value is not None for f in r.value.findings]
    return "\n".join(blocks) + f"\nFleet: {unread_line(reads)}; {count_line(findings)}\n"


def diagnosis_fleet_document(reads: Sequence[Read[DiagnosisView]]) -> dict[str, Any]:
    documents = []
    summary = {s.label: 0 for s in Severity}
    for read in reads:
        diagnosis = None if read.value is None else diagnosis_document(read.value)
        for label, count in (diagnosis or {}).get("summary", {}).items():
            summary[label] += count
        documents.append({"context": read.context, "error": read.error, "diagnosis": diagnosis})
    return {
        "apiVersion": SCHEMA_VERSION,
        "kind": "MachinePoolFleetDiagnosis",
        "contexts": documents,
        "summary": summary,
    }
