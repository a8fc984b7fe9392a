"""An export's files: written to a directory or a .tar.gz, and read back from either.

An export comes from someone else (a support ticket). A tarball is read in memory, member by
member (tarball.py), never unpacked to disk; a directory's files are opened as regular files
only (inputfiles.py). Only the files the manifest names are parsed, one at a time as they are
read, each object bounded (listfile.py), each file and the whole bundle within a budget of
bytes and values; a workload file's Nodes are kept as their states only. So a crafted export
cannot write anywhere, link anywhere, hang or fill memory, and the export of a fleet is read
at the memory its objects take, not its files.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.inputfiles import (
    Budget,
    decoded,
    open_file,
    read_chunks,
    read_file,
    values_in,
)
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline import export, listfile, tarball

TARBALL_SUFFIXES = (".tar.gz", ".tgz")
# A manifest of 5000 Clusters (export.MAX_WORKLOADS) is 0.85 MB and 120,000 values; parsed
# as YAML, 150,000 values take about a second.
MAX_MANIFEST = 1 << 20
MAX_MANIFEST_VALUES = 150_000
# The whole bundle: a tarball's decompressed bytes (skipped and read again included) and every
# value parsed. The export of 341 pools and 241,063 Nodes (tests/benchmarks/exportread.py)
# is BENCH; these leave it room to grow, and keep a hostile bundle to what they say.
MAX_BUNDLE_BYTES = 2 << 30
MAX_BUNDLE_VALUES = 100_000_000
_BUNDLE_HINT = "export fewer pools at a time: by namespace, Cluster or name"
Parse = listfile.Parse
Take = Callable[[str, Iterator[bytes]], None]
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def is_tarball(path: str) -> bool:
    return path.endswith(TARBALL_SUFFIXES)


def is_export(path: str) -> bool:
    """Whether -f PATH names an export (a directory with its manifest, or a tarball)."""
    if is_tarball(path):
        return True
    # Whatever the manifest is (a FIFO, a link), the directory is read as an export, and so
    # refused in one line.
    return Path(path).is_dir() and os.path.lexists(Path(path) / export.MANIFEST)


def check_target(path: str) -> None:
    """Refuse a target that would overwrite something, before anything is read."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f'the directory "{parent}" does not exist', hint="create it first")
    if is_tarball(path):
        if target.exists():
            raise UsageError(f'"{path}" already exists', hint="choose a new name, or remove it")
    elif target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(
            f'"{path}" already exists and is not an empty directory',
            hint="choose a new directory, or name a FILE.tar.gz",
        )


def _text(name: str, document: dict[str, Any]) -> bytes:
    """The manifest as YAML, for people; the objects as JSON an object a line (listfile.py),
    which pyyaml's representer writes 40 times slower (7.4 s against 0.18 s for a 1000-instance
    pool)."""
    if name == export.MANIFEST:
        text: str = yaml.dump(
            document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
        )
        return text.encode("utf-8")
    return listfile.written(document["items"])


def write(documents: Mapping[str, dict[str, Any]], path: str, mtime: float) -> int:
    """Write the export, a file at a time as each is made from its document; the bytes written.
    It appears whole or not at all."""
    contents = ((name, _text(name, doc)) for name, doc in documents.items())
    try:
        if is_tarball(path):
            return _write_tarball(contents, Path(path), mtime)
        return _write_directory(contents, Path(path))
    except OSError as err:
        raise MachinePoolError(f"cannot write {path}: {err.strerror or err}") from err


def _write_directory(contents: Iterator[tuple[str, bytes]], path: Path) -> int:
    """Written beside the target and renamed into place: it appears whole or not at all."""
    temporary = Path(tempfile.mkdtemp(prefix=".export-", dir=path.parent))
    size = 0
    try:
        for name, content in contents:
            (temporary / name).write_bytes(content)
            size += len(content)
        temporary.chmod(0o755)
        if path.is_dir():
            path.rmdir()  # check_target let only an empty one through
        temporary.rename(path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return size


def _write_tarball(contents: Iterator[tuple[str, bytes]], path: Path, mtime: float) -> int:
    fd, temporary = tempfile.mkstemp(prefix=".export-", suffix=".tar.gz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for name, content in contents:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(content), int(mtime), 0o644
                tar.addfile(info, io.BytesIO(content))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path.stat().st_size


def _manifest(path: str, content: bytes, parse: Parse) -> RawObject:
    if values_in(content) > MAX_MANIFEST_VALUES:
        raise MachinePoolError(
            f"cannot read {path}:{export.MANIFEST}: over {MAX_MANIFEST_VALUES:,} values",
            hint="pass the export as kubectl machinepool wrote it",
        )
    source = f"{path}:{export.MANIFEST}"
    found = [o for o in parse(source, decoded(source, content)) if export.is_manifest(o)]
    if len(found) != 1:
        raise MachinePoolError(
            f"{path} is not an export of kubectl machinepool: its {export.MANIFEST} holds "
            f"no {export.MANIFEST_KIND}",
            hint="pass the export's directory or .tar.gz as it was written",
        )
    return found[0]


def _named(manifest: RawObject) -> set[str]:
    """The files an export's manifest names: only these are ever parsed."""
    return {*export.management_files(manifest), *export.workload_files(manifest)}


def _may_be_named(name: str) -> bool:
    return any(p.fullmatch(name) for p in (export.MANAGEMENT_FILE, export.WORKLOAD_FILE))


def _from_tarball(path: str, budget: Budget, parse: Parse, take: Take) -> RawObject:
    """The manifest; take is given each file it names as it is read. Files an export could
    name that come before the manifest (tar puts them in the directory's order) are skipped
    unread, and read in a second pass over the archive if the manifest names them."""
    manifest: RawObject | None = None
    seen: set[str] = set()
    early: set[str] = set()

    def wanted(name: str) -> int | None:
        if name in seen and (name == export.MANIFEST or _may_be_named(name)):
            raise MachinePoolError(
                f"cannot read {path}: it holds {name} twice",
                hint="pass the export's .tar.gz as it was written",
            )
        seen.add(name)
        if name == export.MANIFEST:
            return MAX_MANIFEST
        if manifest is None:
            if _may_be_named(name):
                early.add(name)
            return None
        return listfile.MAX_FILE_BYTES if name in _named(manifest) else None

    for name, content in _members(path, budget, wanted):
        if name == export.MANIFEST:
            manifest = _manifest(path, b"".join(content), parse)
        else:
            take(name, content)
    if manifest is None:
        raise MachinePoolError(
            f"{path} is not an export of kubectl machinepool: it holds no {export.MANIFEST}",
            hint="pass the export's .tar.gz as it was written",
        )
    missed = early & _named(manifest)
    if missed:
        for name, content in _members(
            path, budget, lambda n: listfile.MAX_FILE_BYTES if n in missed else None
        ):
            take(name, content)
    return manifest


def _members(
    path: str, budget: Budget, wanted: Callable[[str], int | None]
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """tarball.members, each member's content read within the same verdict on the archive."""
    with _archive(path), open_file(path) as raw:
        for name, content in tarball.members(
            raw, path, budget, wanted, largest=listfile.MAX_FILE_BYTES
        ):
            yield name, _within_archive(path, content)


def _within_archive(path: str, content: Iterator[bytes]) -> Iterator[bytes]:
    with _archive(path):
        yield from content


@contextmanager
def _archive(path: str) -> Iterator[None]:
    """A malformed archive (or a corrupt deflate stream, zlib.error) as one error line."""
    try:
        yield
    except (ValueError, EOFError, OSError, zlib.error) as err:
        raise MachinePoolError(f"cannot read {path}: not a gzipped tar archive ({err})") from err


def _from_directory(path: str, budget: Budget, parse: Parse, take: Take) -> RawObject:
    manifest_path = os.path.join(path, export.MANIFEST)
    content = read_file(manifest_path, budget, follow=False, limit=MAX_MANIFEST)
    manifest = _manifest(path, content, parse)
    for name in sorted(_named(manifest)):
        file = os.path.join(path, name)
        take(
            name,
            read_chunks(file, budget, follow=False, limit=listfile.MAX_FILE_BYTES, parsed=False),
        )
    return manifest


def load(path: str, parse: Parse) -> Snapshot:
    """The Snapshot an export holds. parse: a file's objects (dump's bounded parser)."""
    budget = Budget(path, MAX_BUNDLE_BYTES, MAX_BUNDLE_VALUES, hint=_BUNDLE_HINT)
    management: dict[str, list[RawObject]] = {}
    workloads: dict[str, export.WorkloadFile] = {}

    def take(name: str, content: Iterator[bytes]) -> None:
        objects = listfile.objects(f"{path}:{name}", content, budget, parse)
        if export.MANAGEMENT_FILE.fullmatch(name):
            management[name] = list(objects)
        else:
            workloads[name] = export.workload_file(objects)

    read = _from_tarball if is_tarball(path) else _from_directory
    manifest = read(path, budget, parse, take)
    return export.snapshot_of(manifest, management, workloads)
