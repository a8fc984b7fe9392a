"""Hostile -f input: time and peak memory of each refusal. Prints figures, asserts none.

    .venv/bin/python tests/benchmarks/hostileinput.py [--runs 3] [--limit-gib 4]

Each hostile export of tests/support/hostilebundles.py (tarballs standing for gigabytes in
kilobytes to megabytes), three that stay just within the bounds (what the most a parse can
cost), an export directory whose management.json is a FIFO, and plain dumps (/dev/zero, a
sparse file one byte over the bound, 24 MB of `{},`) are read by
`kubectl machinepool describe -A -f` in a child process under an address-space limit
(--limit-gib) and a 60 s timeout, so that a reader without bounds ends in MemoryError or a
timeout instead of taking the machine. Printed per case: the first stderr line, the exit code,
the median wall time and the largest peak RSS (the child's ru_maxrss) over --runs.
PYTHONPATH, when set, is passed on: point it at another checkout to measure its reader.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.hostilebundles import (
    CASES,
    END,
    MiB,
    Part,
    Repeated,
    export_directory,
    header,
    real_members,
    write,
)

from kubectl_machinepool.base.inputfiles import MAX_BYTES
from kubectl_machinepool.offline import export


def _fifo_export(path: Path) -> Path:
    directory = export_directory(path.parent / "export")
    (directory / export.MANAGEMENT).unlink()
    os.mkfifo(directory / export.MANAGEMENT)
    return directory


def _sparse(path: Path) -> Path:
    path = path.parent / "dump.json"
    with path.open("wb") as out:
        out.truncate(MAX_BYTES + 1)
    return path


def _flood(path: Path) -> Path:
    path = path.parent / "dump.yaml"
    path.write_bytes(b"[" + b"{}," * 8_000_000 + b"{}]")
    return path


def _within(prefix: bytes, piece: bytes, count: int, suffix: bytes) -> Callable[[Path], Path]:
    """An export whose management.json stays just within the bounds: what it costs to parse."""
    size = len(prefix) + len(piece) * count + len(suffix)
    parts: list[Part] = [
        real_members(names=[export.MANIFEST]) + header(export.MANAGEMENT, size) + prefix,
        Repeated(piece, len(piece) * count),
        suffix + b"\0" * (-size % 512) + END,
    ]
    return lambda path: write(path, *parts)


EXTRA: list[tuple[str, Callable[[Path], Path]]] = [
    ("within the bounds: 9.9 million strings", _within(b'{"items":[', b'"ab",', 9_900_000, b"0]}")),
    ("within the bounds: 4.9 million {}", _within(b'{"items":[', b"{},", 4_900_000, b"0]}")),
    ("within the bounds: a 250 MiB string", _within(b'{"x":"', b"a" * 1024, 250 * 1024, b'"}')),
    ("export directory, management.json a FIFO", _fifo_export),
    ("dump: -f /dev/zero", lambda _: Path("/dev/zero")),
    ("dump: a sparse file of 256 MiB + 1 byte", _sparse),
    ("dump: 24 MB of {}", _flood),
]


def run(path: Path, limit: int) -> tuple[int, float, int, str]:
    """Exit code, seconds, peak RSS in bytes and the first stderr line of one describe."""

    # The limit is set by the child itself, before the plugin starts.
    bootstrap = (
        "import resource, runpy, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
        "sys.argv[0] = 'kubectl-machinepool'; "
        "runpy.run_module('kubectl_machinepool', run_name='__main__')"
    )
    command = [sys.executable, "-c", bootstrap, "describe", "-A", "-f", str(path)]
    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        err = "(timed out after 60 s)"
    seconds = time.monotonic() - start
    # communicate() reaped the child: its rusage is the largest of the children's so far,
    # so each case runs in a fresh interpreter of its own (see main).
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return child.returncode, seconds, peak, (err.splitlines() or [""])[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit-gib", type=float, default=4.0)
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = [(c.name, c.build) for c in CASES] + EXTRA
    if args.case is None:
        print("| case | size on disk | exit | seconds (median) | peak RSS MB | says |")
        print("|---|---|---|---|---|---|")
        for index in range(len(cases)):
            # One interpreter per case: RUSAGE_CHILDREN keeps the largest peak of any child.
            flags = ["--runs", str(args.runs), "--limit-gib", str(args.limit_gib)]
            subprocess.run([sys.executable, __file__, *flags, "--case", str(index)], check=True)
        return
    name, build = cases[args.case]
    with tempfile.TemporaryDirectory() as work:
        path = build(Path(work) / "hostile.tar.gz")
        size = path.stat().st_size if path.is_file() else 0
        results = [run(path, int(args.limit_gib * (1 << 30))) for _ in range(args.runs)]
    seconds = statistics.median(r[1] for r in results)
    peak = max(r[2] for r in results) / MiB
    said = results[0][3].replace("|", "\\|").replace(work, "…")
    print(f"| {name} | {size:,} | {results[0][0]} | {seconds:.2f} | {peak:.0f} | {said} |")


if __name__ == "__main__":
    main()
