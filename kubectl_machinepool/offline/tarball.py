"""A gzipped tar archive read member by member, every header bounded before it is read.

tarfile reads a PAX or GNU long-name header whole, whatever size it claims, and decompresses a
member it skips, however large; an export's tarball comes from someone else. Here each 512-byte
header is parsed by hand (POSIX ustar with PAX headers, GNU long names: what tar, bsdtar and
tarfile write), and an extended header over MAX_EXTENDED or a member larger than what the
budget has left is refused from its header, before anything of it is read. Only regular members
whose names are wanted are read; every other byte is skipped unread (and counted: skipping
still decompresses). Nothing is ever written to disk.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from typing import BinaryIO

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.inputfiles import Budget, mebibytes

BLOCK = 512
# PAX records (bsdtar writes extended attributes there) or a GNU long name: far less than this.
MAX_EXTENDED = 1 << 20
# An export has three files, or a few more; a tarball of many entries is not one.
MAX_MEMBERS = 10_000
_REGULAR = (b"0", b"\0", b"7")
_EXTENDED = (b"x", b"g", b"L", b"K")
# What a header's typeflag says holds data; tar's other types (links, directories, devices,
# FIFOs) carry none whatever size they claim, as tarfile reads them.
_NO_DATA = (b"1", b"2", b"3", b"4", b"5", b"6")
_CHUNK = 1 << 20


class _Stream:
    """The decompressed archive, read exactly, every byte counted in the budget."""

    def __init__(self, raw: BinaryIO, budget: Budget) -> None:
        self._gzip = gzip.GzipFile(fileobj=raw, mode="rb")
        self.budget = budget

    def read(self, size: int, *, keep: bool = False) -> bytes:
        """size bytes, kept or skipped; a short read is a truncated archive."""
        return b"".join([chunk for chunk in self.chunks(size) if keep])

    def chunks(self, size: int) -> Iterator[bytes]:
        """size bytes a chunk at a time, each counted in the budget."""
        while size > 0:
            chunk = self._gzip.read(min(size, _CHUNK))
            if not chunk:
                raise EOFError("the archive ends inside a member")
            self.budget.spend(len(chunk))
            size -= len(chunk)
            yield chunk

    def header(self) -> bytes:
        """The next 512-byte header; empty where the archive's data ends."""
        block = self._gzip.read(BLOCK)
        self.budget.spend(len(block))
        if 0 < len(block) < BLOCK:
            raise EOFError("the archive ends inside a header")
        return block


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _number(field: bytes) -> int:
    """A header's octal number, or GNU's base-256 (a negative one is invalid)."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    if field[:1] == b"\xff":
        raise ValueError("a negative number in a header")
    digits = field.split(b"\0", 1)[0].strip(b" ")
    return int(digits, 8) if digits else 0


def _checked(block: bytes) -> None:
    stored = _number(block[148:156])
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    signed = unsigned - 2 * sum(b for b in block[:148] + block[156:] if b > 127)
    if stored not in (unsigned, signed):
        raise ValueError("a header's checksum does not match")


def _name(block: bytes) -> str:
    name = block[:100].split(b"\0", 1)[0]
    prefix = block[345:500].split(b"\0", 1)[0]
    if block[257:263] == b"ustar\0" and prefix:  # POSIX; GNU's own format keeps no prefix
        name = prefix + b"/" + name
    return name.decode("utf-8", "replace")


def _pax(data: bytes) -> dict[str, str]:
    """PAX records: `<length> <key>=<value>\\n`, each length counting the whole record."""
    records: dict[str, str] = {}
    position = 0
    while position < len(data) and data[position] != 0:
        space = data.index(b" ", position)
        length = int(data[position:space])
        record = data[space + 1 : position + length]
        if length <= space - position or not record.endswith(b"\n") or b"=" not in record:
            raise ValueError("a PAX header is malformed")
        key, _, value = record[:-1].partition(b"=")
        records[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        position += length
    return records


def _refused(source: str, what: str) -> MachinePoolError:
    return MachinePoolError(
        f"cannot read {source}: {what}", hint="pass the export's .tar.gz as it was written"
    )


class _Extended:
    """What extended headers (PAX, GNU long names) say of the member after them."""

    def __init__(self) -> None:
        self.pax: dict[str, str] = {}
        self.long_name: str | None = None

    def read(self, stream: _Stream, kind: bytes, size: int, source: str) -> None:
        if size > MAX_EXTENDED:
            raise _refused(
                source, f"a tar header claims {mebibytes(size)}, over {mebibytes(MAX_EXTENDED)}"
            )
        data = stream.read(_padded(size), keep=True)[:size]
        if kind == b"x":
            self.pax = _pax(data)
        elif kind == b"L":
            self.long_name = data.split(b"\0", 1)[0].decode("utf-8", "replace")

    def member(self, block: bytes) -> tuple[str, int]:
        """The member's name and size, and the extended headers used up."""
        name = (self.long_name or self.pax.get("path") or _name(block)).removeprefix("./")
        size = int(self.pax.get("size", _number(block[124:136])))
        if size < 0:
            raise ValueError(f"{name} has a negative size")
        self.pax, self.long_name = {}, None
        return name, size


def members(
    raw: BinaryIO,
    source: str,
    budget: Budget,
    wanted: Callable[[str], int | None],
    *,
    largest: int,
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(name, content a chunk at a time) of each regular member that wanted gives a size bound
    (None: skipped), in the archive's order; what the caller leaves of a member is skipped when
    it asks for the next. No member may claim more than largest. Raises ValueError, EOFError
    or OSError on a malformed archive."""
    stream = _Stream(raw, budget)
    extended = _Extended()
    for _ in range(MAX_MEMBERS):
        block = stream.header()
        if not block.strip(b"\0"):
            return  # two zero blocks end an archive; one, or none at all, is enough
        _checked(block)
        kind = block[156:157]
        if kind in _EXTENDED:
            extended.read(stream, kind, _number(block[124:136]), source)
            continue
        name, size = extended.member(block)
        if kind in _NO_DATA:
            continue
        if kind == b"S":
            raise ValueError(f"{name} is a GNU sparse file")
        if size > largest:
            raise _refused(
                source, f"{name} claims {mebibytes(size)}, over the {mebibytes(largest)} of a file"
            )
        if size > budget.bytes_left:
            raise budget.too_large(f"{name} claims {mebibytes(size)}")
        limit = wanted(name) if kind in _REGULAR else None
        if limit is not None and size > limit:
            raise _refused(source, f"{name} is {mebibytes(size)}, over {mebibytes(limit)}")
        if limit is None:
            stream.read(_padded(size))
            continue
        content = stream.chunks(size)
        yield name, content
        for _ in content:
            pass
        stream.read(_padded(size) - size)
    raise _refused(source, f"over {MAX_MEMBERS} entries, not an export")
