"""An export's List files (management.json, workload-N.json): written an object a line, and read
back a line at a time, each object bounded before it is parsed.

export writes `{"apiVersion":"v1","kind":"List","items":[` on a line of its own, each object on
a line of its own (JSON escapes every line end inside a string, so a line is an object), and
`]}`: one JSON document still, for any other reader. This reader bounds each line (an object)
in bytes and values before it parses it, and parses the lines a batch at a time, as the List
they stand for (one parse per MiB keeps a batch's keys shared, as one parse of the whole file
would), so a file costs one batch of memory beyond the objects the caller keeps of it. A file
laid out otherwise (written by an earlier version, or reformatted) is parsed whole, within the
tighter bound of a whole parse.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain
from typing import Any

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.inputfiles import Budget, decoded, mebibytes, values_in

HEADER = b'{"apiVersion":"v1","kind":"List","items":['
FOOTER = b"]}"
# No object the API server stores is this large (it takes 3 MiB a request at the most), and
# an export keeps only part of one; a Node is about 2 KB, a MachinePool of 1000 instances 250 KB.
MAX_OBJECT_BYTES = 4 << 20
MAX_OBJECT_VALUES = 1_000_000
# One file of an export: every file and tar member is refused from its size past this.
MAX_FILE_BYTES = 256 << 20
# A file read a line at a time holds the objects the caller keeps (a workload's Node states);
# one parsed whole holds every value of it at once, up to 60 bytes each.
MAX_LINED_VALUES = 30_000_000
MAX_WHOLE_VALUES = 10_000_000
_BATCH = 1 << 20
_dumps = partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
Parse = Callable[[str, str], list[RawObject]]


def written(objects: Sequence[Any]) -> bytes:
    """A List of objects as export writes it: an object a line."""
    lines = b",\n".join(_dumps(o).encode("utf-8") for o in objects)
    return HEADER + b"\n" + lines + (b"\n" if objects else b"") + FOOTER + b"\n"


def _refused(source: str, what: str) -> MachinePoolError:
    return MachinePoolError(
        f"cannot read {source}: {what}", hint="pass the export as kubectl machinepool wrote it"
    )


def _not_written(source: str, what: str) -> MachinePoolError:
    return _refused(source, f"{what}, not the JSON List an export writes")


def objects(
    source: str, chunks: Iterable[bytes], within: Budget, parse: Parse
) -> Iterator[RawObject]:
    """The objects of one List file, read from its chunks as they come; within: the bundle's
    budget, charged with every value. parse: a whole file's objects (dump's bounded parser)."""
    rest = iter(chunks)
    start = b""
    for chunk in rest:
        start += chunk
        if len(start) > len(HEADER):
            break
    if not start.startswith(HEADER + b"\n"):
        whole = Budget(source, MAX_FILE_BYTES, MAX_WHOLE_VALUES, within)
        yield from _whole(source, start, rest, whole, parse)
        return
    budget = Budget(source, MAX_FILE_BYTES, MAX_LINED_VALUES, within)
    yield from _lined(source, _lines(source, start[len(HEADER) + 1 :], rest), budget, parse)


def _whole(
    source: str, start: bytes, rest: Iterator[bytes], budget: Budget, parse: Parse
) -> Iterator[RawObject]:
    held = [start]
    budget.count(0, values_in(start))
    for chunk in rest:
        budget.count(0, values_in(chunk))
        held.append(chunk)
    text = decoded(source, b"".join(held))
    del held  # the bytes go before the parse comes
    if not text.lstrip().startswith("{"):
        raise _refused(source, "it is not the JSON object an export writes")
    yield from parse(source, text)


def _lines(source: str, start: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of the chunks, none longer than an object may be, read only that far."""
    partial_line = b""
    for chunk in chain((start,), rest):
        partial_line += chunk
        lines = partial_line.split(b"\n")
        partial_line = lines.pop()
        if len(partial_line) > MAX_OBJECT_BYTES:
            raise _too_large(source, f"a line is over {mebibytes(MAX_OBJECT_BYTES)}")
        yield from lines
    if partial_line:
        yield partial_line


def _too_large(source: str, what: str) -> MachinePoolError:
    return _refused(source, f"{what}, larger than any object an export holds")


def _lined(
    source: str, lines: Iterator[bytes], budget: Budget, parse: Parse
) -> Iterator[RawObject]:
    batch: list[bytes] = []
    size, first = 0, 2  # the batch's bytes, and its first line's number (the List's is 1)
    comma: bool | None = None  # whether the last object's line ended with one; None: no object
    for line in lines:
        if line == FOOTER:
            if comma:
                raise _not_written(source, "a comma before its end")
            yield from _parsed(source, batch, first, parse)
            if any(after.strip() for after in lines):
                raise _not_written(source, "something after its end")
            return
        if comma is False:
            raise _not_written(source, "an object without a comma after it")
        if len(line) > MAX_OBJECT_BYTES:
            raise _too_large(source, f"a line is over {mebibytes(MAX_OBJECT_BYTES)}")
        values = values_in(line)
        if values > MAX_OBJECT_VALUES:
            raise _too_large(source, f"a line holds over {MAX_OBJECT_VALUES:,} values")
        budget.count(0, values)
        comma = line.endswith(b",")
        batch.append(line[:-1] if comma else line)
        size += len(line)
        if size >= _BATCH:
            yield from _parsed(source, batch, first, parse)
            first += len(batch)
            batch, size = [], 0
    raise _not_written(source, "it ends before its List does")


def _parsed(source: str, batch: list[bytes], first: int, parse: Parse) -> list[RawObject]:
    """The objects of a batch of lines, first the number of its first line: parsed as the List
    they stand for, so that its items read as a whole file's do."""
    if not batch:
        return []
    lines = f"{source}, lines {first:,} to {first + len(batch) - 1:,}"
    found = parse(lines, decoded(lines, HEADER + b",".join(batch) + FOOTER))
    if len(found) != len(batch):
        raise _not_written(source, f"{lines[len(source) + 2 :]} do not hold an object each")
    return found
