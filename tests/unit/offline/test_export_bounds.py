"""Reading an export back within bounds: every hostile bundle of issue 26 refused in one error
line at bounded memory, members the manifest does not name never parsed, and nothing but
regular files opened, so that a FIFO or a device cannot hang a command."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.hostilebundles import (
    CASES,
    END,
    Case,
    MiB,
    export_directory,
    member,
    real_members,
    unnamed_workloads,
    write,
)
from support.run import run_cli

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.inputfiles import MAX_BYTES
from kubectl_machinepool.offline import bundlefiles, export
from kubectl_machinepool.offline.dump import load_dump, objects_in

# What reading a refused bundle may allocate at the most (the values bound is reached after
# about 15 MB of `{}`, read a MiB at a time).
MEMORY_BOUND = 64 * MiB


@contextmanager
def peak_memory() -> Iterator[list[int]]:
    """The peak of Python allocations while the block runs, in the list it gives."""
    tracemalloc.start()
    found: list[int] = []
    try:
        yield found
    finally:
        found.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_hostile_tarball_is_refused_at_bounded_memory(case: Case, tmp_path) -> None:
    path = case.build(tmp_path / "hostile.tar.gz")
    with peak_memory() as peak, pytest.raises(MachinePoolError) as refused:
        bundlefiles.load(str(path), objects_in)
    assert case.refusal in refused.value.message
    assert "\n" not in refused.value.message
    assert peak[0] < MEMORY_BOUND, peak


def test_refused_in_one_error_line_with_a_hint(tmp_path, capsys) -> None:
    path = CASES[0].build(tmp_path / "hostile.tar.gz")
    refused = run_cli(capsys, "describe", "-A", "-f", str(path))
    assert refused.code == 1
    error, hint = refused.err.splitlines()
    assert error.startswith(f"error: cannot read {path}: management.json claims 900 MiB")
    assert hint.startswith("hint: ")


def test_files_the_manifest_does_not_name_are_never_parsed(tmp_path) -> None:
    path = unnamed_workloads(tmp_path / "export.tar.gz", 40 * MiB)
    parsed: list[str] = []

    def parse(source: str, content: str) -> list:
        parsed.append(source.rpartition(":")[2])
        return objects_in(source, content)

    with peak_memory() as peak:
        snapshot = bundlefiles.load(str(path), parse)
    assert sorted(parsed) == [export.MANAGEMENT, export.MANIFEST, "workload-1.json"]
    assert snapshot.objects
    assert peak[0] < MEMORY_BOUND, peak


def test_files_before_the_manifest_are_held_and_dropped_unparsed(tmp_path) -> None:
    # An item whose kind is a number does not parse; the manifest does not name it: never parsed.
    unnamed = b'{"apiVersion": "v1", "kind": "List", "items": [{"kind": 1}]}'
    path = write(
        tmp_path / "late.tar.gz", member("workload-3.json", unnamed) + real_members() + END
    )
    assert bundlefiles.load(str(path), objects_in).objects


def test_an_ordinary_tarball_is_read(tmp_path) -> None:
    """As tar and tarfile write them: a directory entry, a PAX header, a long name, links."""
    directory = export_directory(tmp_path / "export")
    path = tmp_path / "export.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.add(directory, arcname=".", recursive=False)
        for name in sorted(os.listdir(directory)):
            info = tar.gettarinfo(directory / name, arcname=f"./{name}")
            info.pax_headers = {"comment": "é" * 10}
            with (directory / name).open("rb") as content:
                tar.addfile(info, content)
        long = tarfile.TarInfo("x" * 300)
        tar.addfile(long, None)
        link = tarfile.TarInfo("workload-9.json")
        link.type, link.linkname, link.size = tarfile.SYMTYPE, "/etc/passwd", 2 * 1 << 30
        tar.addfile(link)
    snapshot = bundlefiles.load(str(path), objects_in)
    assert snapshot == bundlefiles.load(str(directory), objects_in)


def test_a_tarball_holding_a_file_twice_is_refused(tmp_path) -> None:
    twice = real_members() + real_members(names=[export.MANAGEMENT]) + END
    path = write(tmp_path / "twice.tar.gz", twice)
    with pytest.raises(MachinePoolError, match=r"it holds management\.json twice"):
        bundlefiles.load(str(path), objects_in)


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("a FIFO", os.mkfifo),
        ("a symbolic link", lambda p: p.symlink_to(p.parent / export.MANIFEST)),
    ],
)
@pytest.mark.parametrize("file", [export.MANAGEMENT, export.MANIFEST])
def test_only_regular_files_of_a_directory_are_read(
    name: str, make: Callable[[Path], None], file: str, tmp_path
) -> None:
    directory = export_directory(tmp_path / "export")
    (directory / file).unlink()
    make(directory / file)
    with pytest.raises(MachinePoolError, match=f"cannot read {directory / file}: it is"):
        bundlefiles.load(str(directory), objects_in)


def test_describe_on_an_export_with_a_fifo_says_so_and_ends(tmp_path) -> None:
    directory = export_directory(tmp_path / "export")
    (directory / export.MANAGEMENT).unlink()
    os.mkfifo(directory / export.MANAGEMENT)
    # The timeout only turns a hang (as before) into a failure; the answer comes at once.
    done = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", "describe", "-A", "-f", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"error: cannot read {directory / export.MANAGEMENT}: it is a FIFO, not a regular file"
    )


def test_a_dump_is_read_within_the_same_bounds(tmp_path) -> None:
    with pytest.raises(MachinePoolError, match="it is a character device"):
        load_dump(["/dev/zero"], None)
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.truncate(MAX_BYTES + 1)  # sparse: nothing written
    with peak_memory() as peak, pytest.raises(MachinePoolError, match="over the 256 MiB"):
        load_dump([str(big)], None)
    assert peak[0] < MEMORY_BOUND
    flood = tmp_path / "flood.yaml"
    flood.write_bytes(b"[" + b"{}," * 8_000_000 + b"{}]")
    with peak_memory() as peak, pytest.raises(MachinePoolError, match="JSON or YAML values"):
        load_dump([str(flood)], None)
    assert peak[0] < MEMORY_BOUND
