"""An export's files: written to a directory or a .tar.gz, and read back from either.

An export comes from someone else (a support ticket). A tarball is read in memory, member by
member (tarball.py), never unpacked to disk; a directory's files are opened as regular files
only (inputfiles.py). Only the files the manifest names are parsed, within one budget of bytes
and values, so a crafted export cannot write anywhere, link anywhere, hang or fill memory.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.base.fields import RawObject
from kubectl_machinepool.base.inputfiles import (
    MAX_BYTES,
    Budget,
    decoded,
    open_file,
    read_file,
    values_in,
)
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.offline import export, tarball

TARBALL_SUFFIXES = (".tar.gz", ".tgz")
# A manifest of 5000 Clusters (export.MAX_WORKLOADS) is 0.85 MB and 120,000 values; parsed
# as YAML, 150,000 values take about a second.
MAX_MANIFEST = 1 << 20
MAX_MANIFEST_VALUES = 150_000
Parse = Callable[[str, str], list[RawObject]]
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
    """The manifest as YAML, for people; the objects as JSON, which pyyaml's representer
    writes 40 times slower (7.4 s against 0.18 s for a 1000-instance pool)."""
    if name == export.MANIFEST:
        text: str = yaml.dump(
            document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
        )
    else:
        text = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    return text.encode("utf-8")


def write(documents: dict[str, dict[str, Any]], path: str, mtime: float) -> int:
    """Write the export; the bytes written. A tarball appears whole or not at all."""
    contents = {name: _text(name, doc) for name, doc in documents.items()}
    try:
        if is_tarball(path):
            return _write_tarball(contents, Path(path), mtime)
        return _write_directory(contents, Path(path))
    except OSError as err:
        raise MachinePoolError(f"cannot write {path}: {err.strerror or err}") from err


def _write_directory(contents: dict[str, bytes], path: Path) -> int:
    """Written beside the target and renamed into place: it appears whole or not at all."""
    temporary = Path(tempfile.mkdtemp(prefix=".export-", dir=path.parent))
    try:
        for name, content in contents.items():
            (temporary / name).write_bytes(content)
        temporary.chmod(0o755)
        if path.is_dir():
            path.rmdir()  # check_target let only an empty one through
        temporary.rename(path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return sum(len(c) for c in contents.values())


def _write_tarball(contents: dict[str, bytes], path: Path, mtime: float) -> int:
    fd, temporary = tempfile.mkstemp(prefix=".export-", suffix=".tar.gz", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for name, content in contents.items():
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
    return {export.MANAGEMENT, *export.workload_files(manifest)}


def _from_tarball(path: str, budget: Budget, parse: Parse) -> tuple[RawObject, dict[str, bytes]]:
    """The manifest and the files it names. Before the manifest, the files an export could
    name are held unparsed; after it, only those it names are read at all."""
    manifest: RawObject | None = None
    held: dict[str, bytes] = {}

    def wanted(name: str) -> int | None:
        if name == export.MANIFEST:
            return MAX_MANIFEST
        if manifest is not None:
            return MAX_BYTES if name in _named(manifest) else None
        known = name == export.MANAGEMENT or export.WORKLOAD_FILE.fullmatch(name)
        return MAX_BYTES if known else None

    try:
        with open_file(path) as raw:
            for name, content in tarball.members(raw, path, budget, wanted):
                if name in held or (name == export.MANIFEST and manifest is not None):
                    raise MachinePoolError(
                        f"cannot read {path}: it holds {name} twice",
                        hint="pass the export's .tar.gz as it was written",
                    )
                if name != export.MANIFEST:
                    held[name] = content
                    continue
                manifest = _manifest(path, content, parse)
                held = {n: c for n, c in held.items() if n in _named(manifest)}
    except (ValueError, EOFError, OSError) as err:
        raise MachinePoolError(f"cannot read {path}: not a gzipped tar archive ({err})") from err
    if manifest is None:
        raise MachinePoolError(
            f"{path} is not an export of kubectl machinepool: it holds no {export.MANIFEST}",
            hint="pass the export's .tar.gz as it was written",
        )
    return manifest, held


def _from_directory(path: str, budget: Budget, parse: Parse) -> tuple[RawObject, dict[str, bytes]]:
    def one(name: str, limit: int | None = None) -> bytes:
        return read_file(os.path.join(path, name), budget, follow=False, limit=limit)

    manifest = _manifest(path, one(export.MANIFEST, MAX_MANIFEST), parse)
    return manifest, {name: one(name) for name in sorted(_named(manifest))}


def load(path: str, parse: Parse) -> Snapshot:
    """The Snapshot an export holds. parse: a file's objects (dump's bounded parser)."""
    budget = Budget(path)
    read = _from_tarball if is_tarball(path) else _from_directory
    manifest, files = read(path, budget, parse)
    listed = {}
    for name in sorted(files):
        source = f"{path}:{name}"
        text = decoded(source, files.pop(name))  # the bytes go before the parse comes
        if not text.lstrip().startswith("{"):
            raise MachinePoolError(
                f"cannot read {source}: it is not the JSON object an export writes",
                hint="pass the export as kubectl machinepool wrote it",
            )
        listed[name] = parse(source, text)
    return export.snapshot_of(manifest, listed)
