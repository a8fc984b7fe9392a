"""Hostile export tarballs, built small: a tar header may claim any size and gzip of repeated
bytes is tiny, so a bundle that stands for gigabytes takes kilobytes on disk. Each case is what
issue 26 reproduced against the reader, with the refusal it must now end in."""

from __future__ import annotations

import gzip
import json
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml

from kubectl_machinepool.offline import export
from kubectl_machinepool.offline.dump import load_dump

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "aws-asg.yaml"
MiB = 1 << 20
GiB = 1 << 30


def real_documents() -> dict[str, dict]:
    return export.documents_of(
        load_dump([str(EXAMPLE)], None),
        captured=datetime(2026, 11, 29, 15, 0, tzinfo=UTC),
        scope=export.Scope("capi-prod"),
        versions=export.Versions("0.0.0", "v1.14.0", "image"),
    )


def as_written(name: str, document: dict) -> bytes:
    """A file's bytes as export writes them: the manifest in YAML, the objects in JSON."""
    return (yaml.safe_dump(document) if name == export.MANIFEST else json.dumps(document)).encode()


def header(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    """A tar header claiming size bytes (GNU base-256 past 8 GiB, as GNU tar writes it)."""
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info.tobuf(tarfile.GNU_FORMAT)


def padded(content: bytes) -> bytes:
    return content + b"\0" * (-len(content) % 512)


def member(name: str, content: bytes) -> bytes:
    return header(name, len(content)) + padded(content)


@dataclass(frozen=True)
class Repeated:
    """size bytes of piece over and over (size a multiple of its length)."""

    piece: bytes
    size: int


Part = bytes | Repeated


def real_members(*, names: Iterable[str] | None = None) -> bytes:
    return b"".join(
        member(name, as_written(name, document))
        for name, document in real_documents().items()
        if names is None or name in names
    )


def flooded(name: str, size: int) -> list[Part]:
    """A member of size bytes: a JSON list of empty objects, `[{},{},...,{}]`."""
    body = (size - 4) // 3 * 3
    tail = b"{}]" + b" " * (size - 4 - body)
    return [header(name, size) + b"[", Repeated(b"{},", body), tail + b"\0" * (-size % 512)]


def zeros(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> list[Part]:
    """A member of size bytes of zeros."""
    return [header(name, size, kind), Repeated(b"\0", size + -size % 512)]


def write(path: Path, *parts: Part) -> Path:
    """A .tar.gz of these parts in order: each one gzip member, repeated data many copies of one
    (a gzip stream may hold many members), so that gigabytes take megabytes to write."""
    with path.open("wb") as out:
        for part in parts:
            if isinstance(part, bytes):
                out.write(gzip.compress(part, compresslevel=1, mtime=0))
                continue
            chunk = part.piece * (16 * MiB // len(part.piece))
            whole, rest = divmod(part.size, len(chunk))
            compressed = gzip.compress(chunk, compresslevel=9, mtime=0)
            for _ in range(whole):
                out.write(compressed)
            out.write(gzip.compress(chunk[:rest], compresslevel=9, mtime=0))
    return path


END = b"\0" * 1024
MANIFEST_ONLY = [export.MANIFEST]


def _manifest(text: bytes) -> Callable[[Path], Path]:
    return lambda path: write(path, member(export.MANIFEST, text) + END)


def _many_workloads(path: Path) -> Path:
    manifest = real_documents()[export.MANIFEST]
    manifest["workloads"] = [{"file": None}] * (export.MAX_WORKLOADS + 1)
    text = yaml.safe_dump(manifest, default_flow_style=None).encode()
    return write(
        path, member(export.MANIFEST, text) + real_members(names=[export.MANAGEMENT]) + END
    )


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Path]
    # What the one error line says.
    refusal: str


CASES = [
    Case(
        "management.json: 900 MiB of {}",
        lambda path: write(
            path,
            real_members(names=MANIFEST_ONLY),
            *flooded(export.MANAGEMENT, 900 * MiB),
            END,
        ),
        "management.json claims 900 MiB, over the 256 MiB",
    ),
    Case(
        "management.json: 200 MiB of {}",
        lambda path: write(
            path,
            real_members(names=MANIFEST_ONLY),
            *flooded(export.MANAGEMENT, 200 * MiB),
            END,
        ),
        "over 10,000,000 JSON or YAML values",
    ),
    Case(
        "a PAX header of 1.5 GiB",
        lambda path: write(path, *zeros("././@PaxHeader", 1536 * MiB, tarfile.XHDTYPE), END),
        "a tar header claims 1536 MiB, over 1 MiB",
    ),
    Case(
        "a GNU long name of 2 GiB",
        lambda path: write(path, *zeros("././@LongLink", 2 * GiB, tarfile.GNUTYPE_LONGNAME), END),
        "a tar header claims 2048 MiB, over 1 MiB",
    ),
    Case(
        "workload files the manifest does not name, 4 x 900 MiB of {}",
        lambda path: write(
            path,
            real_members(),
            *(part for n in range(2, 6) for part in flooded(f"workload-{n}.json", 900 * MiB)),
            END,
        ),
        "workload-2.json claims 900 MiB, over the 256 MiB",
    ),
    Case(
        "a 5 MB manifest of 1,700,000 workloads",
        _manifest(b"workloads: [" + b"{}," * 1_700_000 + b"{}]\n"),
        "manifest.yaml is 5,100,016 bytes, over 1 MiB",
    ),
    Case(
        "a manifest of 200,000 values in 0.3 MB",
        _manifest(b"notes: [" + b"{}," * 100_000 + b"]\n"),
        "manifest.yaml: over 150,000 values",
    ),
    Case(
        f"a manifest listing {export.MAX_WORKLOADS + 1} workload clusters",
        _many_workloads,
        f"it lists over {export.MAX_WORKLOADS} workload clusters",
    ),
    Case(
        "a member of 8 GiB to skip",
        lambda path: write(path, real_members(), *zeros("notes.bin", 8 * GiB), END),
        "notes.bin claims 8192 MiB, over the 256 MiB",
    ),
]


def unnamed_workloads(path: Path, size: int) -> Path:
    """A real export, then two workload files its manifest does not name, each a JSON list of
    size bytes of `{}`: far over the value bound, were they parsed."""
    unnamed = (part for n in (7, 8) for part in flooded(f"workload-{n}.json", size))
    return write(path, real_members(), *unnamed, END)


def export_directory(path: Path) -> Path:
    path.mkdir()
    for name, document in real_documents().items():
        (path / name).write_bytes(as_written(name, document))
    return path
