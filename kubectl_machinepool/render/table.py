"""kubectl-style tables: left-aligned columns, three spaces apart, no rules."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.render.wrap import visible_width

SEPARATOR = "   "


@functools.cache
def _kubectl_table() -> Any:
    """kubectl's printer: left-aligned columns separated by three spaces, no rules. tabulate
    is imported here, at first need: a describe tree does not use it (it costs tens of ms)."""
    from tabulate import DataRow, TableFormat

    return TableFormat(
        lineabove=None,
        linebelowheader=None,
        linebetweenrows=None,
        linebelow=None,
        headerrow=None,
        datarow=DataRow("", SEPARATOR, ""),
        padding=0,
        with_header_hide=None,
    )


# A table pads every row to its widest cell: one huge value from a dump (a Node writes its own
# kubeletVersion) would multiply the output by the number of rows. Cells are cut to these.
CELL_WIDTH = 48
NAME_WIDTH = 200


def clip(text: str, width: int = CELL_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], no_headers: bool) -> str:
    if not rows:
        return ""
    # Headers go in as a data row: tabulate pads real headers by two extra spaces, kubectl doesn't.
    from tabulate import tabulate

    body = list(rows) if no_headers else [list(headers), *rows]
    text = tabulate(
        body,
        tablefmt=_kubectl_table(),
        disable_numparse=True,
        preserve_whitespace=True,  # tree prefixes start with spaces
        colalign=("left",) * len(headers),
    )
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def column_widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's width in terminal columns: colour codes take none, CJK characters two."""
    widths: list[int] = []
    for row in rows:
        for index, cell in enumerate(row):
            if index == len(widths):
                widths.append(0)
            widths[index] = max(widths[index], visible_width(cell))
    return widths


def aligned(headers: Sequence[str], rows: Sequence[Sequence[str]], no_headers: bool) -> str:
    """table()'s layout, padded by visible width, for cells that hold colour or wide text."""
    if not rows:
        return ""
    body = list(rows) if no_headers else [list(headers), *rows]
    widths = column_widths(body)
    lines = [
        SEPARATOR.join(cell + " " * (widths[i] - visible_width(cell)) for i, cell in enumerate(row))
        for row in body
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"
