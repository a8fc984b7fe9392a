"""The characters that draw trees and marks: Unicode, or ASCII when the output is not UTF-8."""

from __future__ import annotations

from kubectl_machinepool.base.records import record


@record
class Glyphs:
    tee: str
    last: str
    pipe: str
    blank: str
    ok: str
    dot: str
    ellipsis: str


UNICODE = Glyphs("├─", "└─", "│ ", "  ", "✓", "·", "…")
ASCII = Glyphs("|-", "`-", "| ", "  ", "ok", "-", "...")
