"""What -f reads from disk and stdin (a dump's files, an export's), within one set of bounds.

Whatever -f names comes from someone else. A file is opened without blocking and read only if
it is a regular file: a FIFO with no writer, a device or a socket would hang the command or
never end. A pipe named on the command line is the exception (`-f <(kubectl get ...)`, or a
FIFO the user feeds): it is read to its end, within the budget. A file found in an export's
directory is not followed through a symlink.

A Budget bounds what an input may take: the bytes read (a tarball's decompressed bytes, skipped
ones included, so that no archive takes long to read) and the values held for parsing. A dump
has one for all its files and stdin; an export one for the whole bundle and one for each of its
files, within it (bundlefiles.py). Every JSON or YAML value but a document's first follows one
of `{ [ , : -` or a line end, so counting those bytes bounds the values a parse makes, and its
memory, before it runs (a small file of `{}` stands for many objects).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, TextIO

from kubectl_machinepool.base.errors import MachinePoolError

# A 1000-instance export holds 3,000 objects in 6.3 MB, 640,000 values as counted here: these
# allow about 15,000 instances (47,000 objects) with room to spare, and keep a hostile input
# to about 0.6 GB of parsed values (60 bytes per value at the most).
MAX_BYTES = 256 << 20
MAX_VALUES = 10_000_000
_MARKS = "{[,:-\n"
_BYTE_MARKS = tuple(_MARKS.encode())
_CHUNK = 1 << 20
_HINT = "read fewer pools at a time: export or dump them by namespace, Cluster or name"


def values_in(data: bytes | str) -> int:
    """At least as many as the JSON or YAML values data holds (but one)."""
    if isinstance(data, str):
        return sum(data.count(mark) for mark in _MARKS)
    return sum(data.count(mark) for mark in _BYTE_MARKS)


def mebibytes(size: int) -> str:
    return f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size:,} bytes"


@dataclass
class Budget:
    """What one input may still take: bytes read, values held for parsing. within: the larger
    input this one is part of (an export, of one of its files), charged alike; its bytes are
    checked where they are read, against what it has left."""

    source: str
    max_bytes: int = MAX_BYTES
    max_values: int = MAX_VALUES
    within: Budget | None = None
    hint: str = _HINT
    bytes_read: int = 0
    values: int = 0

    @property
    def bytes_left(self) -> int:
        return self.max_bytes - self.bytes_read

    def too_large(self, what: str) -> MachinePoolError:
        return MachinePoolError(
            f"cannot read {self.source}: {what}, over the {mebibytes(self.max_bytes)} read "
            "at the most",
            hint=self.hint,
        )

    def spend(self, size: int, held: bytes | str = b"") -> None:
        """size bytes read, of which held are kept to be parsed."""
        self.count(size, values_in(held) if held else 0)

    def count(self, size: int, values: int) -> None:
        """size bytes read, values held for parsing."""
        self.bytes_read += size
        self.values += values
        if self.bytes_read > self.max_bytes:
            raise self.too_large("more to read")
        if self.values > self.max_values:
            raise MachinePoolError(
                f"cannot read {self.source}: over {self.max_values:,} JSON or YAML values, "
                "the most parsed",
                hint=self.hint,
            )
        if self.within is not None:
            self.within.count(size, values)


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _opened(path: str, *, named: bool, follow: bool) -> tuple[int, os.stat_result]:
    """A file opened for reading: a regular file, opened without blocking, or a FIFO named on
    the command line, which waits for its writer as the user asked. follow: a symlink is
    followed, as kubectl does; an export's own files are not."""
    flags = os.O_RDONLY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        if not (named and stat.S_ISFIFO(os.stat(path).st_mode)):
            flags |= os.O_NONBLOCK
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ENOENT:
            raise MachinePoolError(
                f'the path "{path}" does not exist', hint="pass a file, a directory or -"
            ) from err
        why = "it is a symbolic link" if err.errno == errno.ELOOP and not follow else err.strerror
        raise MachinePoolError(f"cannot read {path}: {why or err}") from err
    info = os.fstat(fd)
    if named and stat.S_ISFIFO(info.st_mode):
        os.set_blocking(fd, True)
    elif not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "no regular file")
        raise MachinePoolError(
            f"cannot read {path}: it is {kind}, not a regular file",
            hint="pass files, or a directory of files, as they were written",
        )
    return fd, info


def open_file(path: str) -> BinaryIO:
    """A regular file (a tarball), opened for reading."""
    fd, _ = _opened(path, named=False, follow=True)
    return os.fdopen(fd, "rb")


def read_file(
    path: str, budget: Budget, *, named: bool = False, follow: bool = True, limit: int | None = None
) -> bytes:
    """A regular file's bytes (at most limit, and what the budget has left), or a pipe's when
    named on the command line (see _opened)."""
    return b"".join(read_chunks(path, budget, named=named, follow=follow, limit=limit))


def read_chunks(
    path: str,
    budget: Budget,
    *,
    named: bool = False,
    follow: bool = True,
    limit: int | None = None,
    parsed: bool = True,
) -> Iterator[bytes]:
    """read_file's bytes a chunk at a time, as they are read. parsed: their values are counted
    in the budget here (else the reader counts what it keeps)."""
    fd, info = _opened(path, named=named, follow=follow)
    try:
        if limit is not None and info.st_size > limit:
            raise _over(path, limit)
        if info.st_size > budget.bytes_left:
            what = "it" if path == budget.source else path
            raise budget.too_large(f"{what} is {mebibytes(info.st_size)}")
        most = budget.bytes_left if limit is None else limit
        size = 0
        while chunk := os.read(fd, min(_CHUNK, most + 1 - size)):
            budget.spend(len(chunk), chunk if parsed else b"")
            size += len(chunk)
            if size > most:
                raise _over(path, most)
            yield chunk
    except OSError as err:
        raise MachinePoolError(f"cannot read {path}: {err.strerror or err}") from err
    finally:
        os.close(fd)


def _over(path: str, limit: int) -> MachinePoolError:
    return MachinePoolError(
        f"cannot read {path}: larger than {mebibytes(limit)}",
        hint="pass the export as kubectl machinepool wrote it",
    )


def read_stdin(stdin: TextIO | None, budget: Budget) -> str:
    """Standard input to its end, within the budget."""
    # Python sets sys.stdin to None when the process starts with file descriptor 0 closed.
    if stdin is None or stdin.closed:
        raise MachinePoolError(
            "cannot read stdin: it is closed", hint="pipe the dump in, or -f FILE"
        )
    try:
        content = stdin.read(budget.bytes_left + 1)
    except UnicodeDecodeError as err:
        raise MachinePoolError(f"cannot read stdin: not UTF-8 text ({err.reason})") from err
    except (OSError, ValueError) as err:
        raise MachinePoolError(
            f"cannot read stdin: {getattr(err, 'strerror', None) or err}"
        ) from err
    budget.spend(len(content), content)
    return content


def decoded(name: str, content: bytes) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MachinePoolError(f"cannot read {name}: not UTF-8 text ({err.reason})") from err
