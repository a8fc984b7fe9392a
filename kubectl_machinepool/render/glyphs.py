"""The characters that draw trees and marks: Unicode, or ASCII when the output is not UTF-8."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
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
