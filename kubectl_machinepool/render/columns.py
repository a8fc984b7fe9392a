"""kubectl get's list printing through JSONPath: -o custom-columns and --sort-by.

Both run a template (jsonpath.py) on each item of a kubectl List. A custom column shows what
its path finds as Go's fmt.Sprint does (several values joined by commas, <none> for nothing)
in kubectl's tabwriter layout; --sort-by orders the items by the first value its path finds,
compared as kubectl's sorter compares them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal
from functools import cmp_to_key
from typing import Any

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.render.jsonpath import (
    Budget,
    Template,
    TemplateError,
    as_read,
    parse,
    relaxed,
    sprint,
)

SPEC_HINT = "e.g. -o custom-columns=NAME:.metadata.name,READY:.summary.replicas.ready"
FILE_FORMAT = (
    "Expected format is one line of space separated headers, one line of space separated "
    "column specs."
)
# kubectl's tabwriter: a column is its widest cell plus 3 spaces, and at least 6 wide.
_MIN_WIDTH, _PADDING = 6, 3


@record
class Column:
    header: str
    template: Template


def from_spec(spec: str) -> tuple[Column, ...]:
    """-o custom-columns=HEADER:PATH,HEADER:PATH…"""
    if not spec:
        raise TemplateError(
            "custom-columns format specified but no custom columns given", hint=SPEC_HINT
        )
    columns = []
    for part in spec.split(","):
        header, colon, path = part.partition(":")
        if not colon:
            raise TemplateError(
                f"unexpected custom-columns spec: {escape(part)}, expected "
                "<header>:<json-path-expr>",
                hint=SPEC_HINT,
            )
        columns.append(Column(header, parse(relaxed(path))))
    return tuple(columns)


def from_file(content: str) -> tuple[Column, ...]:
    """-o custom-columns-file=FILE: a line of headers, then a line of paths."""
    lines = [line.removesuffix("\r") for line in content.split("\n")]
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise TemplateError(f"invalid template, missing header line. {FILE_FORMAT}")
    if len(lines) < 2:
        raise TemplateError(f"invalid template, missing spec line. {FILE_FORMAT}")
    headers, paths = lines[0].split(), lines[1].split()
    if len(headers) != len(paths):
        raise TemplateError(
            f"number of headers ({len(headers)}) and field specifications ({len(paths)}) "
            "don't match"
        )
    return tuple(Column(h, parse(relaxed(p))) for h, p in zip(headers, paths, strict=True))


def _cell(groups: list[list[Any]]) -> str:
    shown = ["<none>"] if not groups or not groups[0] else []
    shown += [sprint(value) for group in groups for value in group]
    # Controls shown as in all text output here (kubectl's ^[ for ESC is as safe): a cell
    # stays one line.
    return escape(",".join(shown))


def tabbed(rows: Sequence[Sequence[str]]) -> str:
    """Rows laid out as kubectl's tabwriter does; the last column is not padded."""
    if not rows:
        return ""
    count = len(rows[0]) - 1
    widths = [max(_MIN_WIDTH, *(len(row[i]) + _PADDING for row in rows)) for i in range(count)]
    return "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        + row[-1]
        + "\n"
        for row in rows
    )


def render(columns: Sequence[Column], items: Sequence[Any], no_headers: bool) -> str:
    budget = Budget()
    rows = [] if no_headers else [[escape(column.header) for column in columns]]
    for item in items:
        try:
            row = [_cell(column.template.results(item, budget)) for column in columns]
        except RecursionError:  # Go's fmt of a value nested deeper than the stack
            raise TemplateError("custom-columns: the data nests too deeply") from None
        budget.spend(chars=sum(map(len, row)))
        rows.append(row)
    return tabbed(rows)


# -- --sort-by --------------------------------------------------------------------------------

_MISSING = object()
_QUANTITY = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]{1,19})")  # int() of more digits is refused


def quantity(text: str) -> Decimal | None:
    """A string as a Kubernetes resource quantity ("1.5Gi", "100m", "12345"), or None.

    kubectl sorts two strings that both read as quantities by amount, which is what makes
    --sort-by=.metadata.resourceVersion numeric.
    """
    match = _QUANTITY.fullmatch(text) if text else None
    if match is None:
        return None
    sign, whole, fraction, suffix = match.groups()
    context = Context(prec=len(text) + 40, Emax=MAX_EMAX, Emin=MIN_EMIN)
    amount = Decimal(f"{sign}{whole or '0'}.{fraction or ''}")
    if suffix in _DECIMAL_SUFFIXES:
        return context.scaleb(amount, _DECIMAL_SUFFIXES[suffix])
    if suffix in _BINARY_SUFFIXES:
        return context.multiply(amount, 2 ** _BINARY_SUFFIXES[suffix])
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None or not -(2**63) <= int(exponent.group(1)) < 2**63:
        return None
    # Kubernetes keeps the exponent in an int32.
    return context.scaleb(amount, (int(exponent.group(1)) + 2**31) % 2**32 - 2**31)


def _family(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "numbers"
    if isinstance(value, str):
        return "strings"
    if isinstance(value, dict):
        return "maps"
    return "lists" if isinstance(value, list) else "other values"


def _compared(left: tuple[Any, Decimal | None], right: tuple[Any, Decimal | None]) -> int:
    """Missing values first, then null, then the values in order: two strings that both read
    as quantities by amount. Each side is (value, its amount as a quantity)."""
    ranks = [0 if v is _MISSING else 1 if v is None else 2 for v, _ in (left, right)]
    if ranks[0] != ranks[1] or ranks[0] < 2:
        return ranks[0] - ranks[1]
    if left[1] is not None and right[1] is not None:
        return (left[1] > right[1]) - (left[1] < right[1])
    return int(left[0] > right[0]) - int(left[0] < right[0])


def sort_template(path: str) -> Template:
    """--sort-by's path, in any of the forms kubectl takes (.a.b, a.b, {.a.b})."""
    return parse(relaxed(path))


def sorted_order(items: Sequence[Any], template: Template) -> list[int]:
    """The items' indices, ordered by what the template finds first in each (a stable sort)."""
    field = template.source
    budget = Budget()
    keys = []
    for item in items:
        groups = template.results(item, budget)
        keys.append(as_read(groups[0][0]) if groups and groups[0] else _MISSING)
    hint = "sort by a field that holds a string or a number, e.g. --sort-by=.metadata.name"
    if items and all(key is _MISSING for key in keys):
        raise TemplateError(
            f'couldn\'t find any field with path "{escape(field)}" in the list of objects',
            hint=hint,
        )
    families = {_family(key) for key in keys if key is not _MISSING and key is not None}
    if not families <= {"numbers"} and not families <= {"strings"}:
        found = " and ".join(sorted(families))
        raise TemplateError(f"cannot sort by {escape(field)}: it finds {found}", hint=hint)

    amounts = [quantity(key) if isinstance(key, str) else None for key in keys]

    def compared(a: int, b: int) -> int:
        return _compared((keys[a], amounts[a]), (keys[b], amounts[b]))

    return sorted(range(len(keys)), key=cmp_to_key(compared))
