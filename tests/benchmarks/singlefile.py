"""Start-up of the single file (packaging/build) beside `pip install .`'s entry point. Prints
figures, asserts none.

    .venv/bin/python tests/benchmarks/singlefile.py [--runs 30]

Builds the single file, run by the python3 of an empty virtualenv, and installs the package (not
editable: an editable install adds an import hook to every start) with the same pinned
dependencies (PyYAML with its C extension, as pip gives it) into another virtualenv of this
interpreter. Then, alternating so that a load spike hits both alike: `--help`, `describe -f examples/` (PyYAML's pure Python loader against its C
one) and a TAB through kubectl's bridge (`kubectl_complete-machinepool describe -f examples/ ""`:
the single file's two-line sh helper against pip's console script), each against the +20 ms
goal; and the single file's first run, which unpacks it, in a fresh cache each time.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.singlefile import BRIDGE, EXECUTABLE, NOW, REPO, build

GOAL_MS = 20.0
PACKAGE_ONLY = ["--no-deps", "--quiet", "--disable-pip-version-check"]


def pip_install(where: Path) -> Path:
    """A virtualenv with the package and vendor.txt's wheels, as `pip install .` makes it."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = ["--python", str(venv / "bin" / "python")]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    wheels = ["--no-index", "--find-links", str(cache / "kubectl-machinepool" / "wheels")]
    pinned = ["--require-hashes", "--requirement", str(REPO / "packaging" / "vendor.txt")]
    pip = [sys.executable, "-m", "pip", *python, "install", *PACKAGE_ONLY]
    subprocess.run([*pip, *wheels, *pinned], check=True)  # the wheels the build fetched
    subprocess.run([*pip, str(REPO)], check=True, cwd=where)
    return venv / "bin"


def timed(argv: list[str], env: dict[str, str], expect: str) -> tuple[float, float]:
    """Wall and CPU (user + system, the child's own) milliseconds of one run: on a shared
    machine the CPU time is what a load spike changes least."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    took = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or expect not in done.stdout:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stdout[-300:]!r} {done.stderr!r}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return took, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kmp-singlefile-bench-") as scratch:
        where = Path(scratch)
        single = build(where / "dist")[EXECUTABLE]
        shims = where / "shims"
        shims.mkdir()
        (shims / EXECUTABLE).symlink_to(single)
        (shims / BRIDGE).symlink_to(REPO / "packaging" / BRIDGE)
        # python3 of a virtualenv with nothing in it, the same interpreter as pip's: what the
        # base interpreter's own site-packages load (.pth files) is no part of either start.
        bare = where / "bare"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
        pip_bin = pip_install(where)
        home = where / "home"
        home.mkdir()
        base = {"HOME": str(home), "LANG": "C.UTF-8"}
        path = "/usr/bin:/bin"
        # The virtualenv's own bin/: a python3 linked from elsewhere finds no pyvenv.cfg beside
        # it and is the base interpreter again, site-packages and all.
        single_env = {**base, "PATH": f"{shims}:{bare / 'bin'}:{path}"}
        pip_env = {**base, "PATH": f"{pip_bin}:{path}"}
        describe = ["describe", "-f", "examples/", "--now", NOW]
        tab = ["describe", "-f", "examples/", ""]
        pairs = [
            ("--help", ["--help"], "describe", EXECUTABLE),
            ("describe -f examples/", describe, "vmss-workers", EXECUTABLE),
            ('TAB: describe -f examples/ ""', tab, "vmss-workers", BRIDGE),
        ]
        rows: list[tuple[str, list[str], dict[str, str], str]] = []
        for label, argv, expect, program in pairs:
            rows.append((f"pip        {label}", [str(pip_bin / program), *argv], pip_env, expect))
            rows.append((f"single file {label}", [program, *argv], single_env, expect))
        for _label, argv, env, expect in rows:  # warm: byte code written, the file unpacked
            timed(argv, env, expect)
        took: dict[str, list[float]] = {label: [] for label, *_ in rows}
        for _ in range(args.runs):
            for label, argv, env, expect in rows:
                took[label].append(timed(argv, env, expect))
        first = []
        for run in range(max(3, args.runs // 5)):
            cache = where / f"cold-{run}"
            env = {**single_env, "XDG_CACHE_HOME": str(cache)}
            first.append(timed([EXECUTABLE, "--help"], env, "describe")[0])
    print(f"{args.runs} alternating runs, ms, {os.cpu_count()} CPUs, {sys.version.split()[0]}")
    print(f"  {'':<44} {'wall':>7} {'p25':>7} {'p75':>7} {'min':>7} {'CPU':>7}")
    medians = {}
    for label, values in took.items():
        wall = [w for w, _ in values]
        q = statistics.quantiles(wall, n=4)
        cpu = statistics.median(c for _, c in values)
        medians[label] = (statistics.median(wall), cpu, min(wall))
        print(
            f"  {label:<44} {medians[label][0]:7.1f} {q[0]:7.1f} {q[2]:7.1f} {min(wall):7.1f}"
            f" {cpu:7.1f}"
        )
    for label, *_ in pairs:
        ours, theirs = medians[f"single file {label}"], medians[f"pip        {label}"]
        wall, cpu, least = (a - b for a, b in zip(ours, theirs, strict=True))
        verdict = "within" if wall <= GOAL_MS else "over"
        print(f"  single file - pip, {label}: {wall:+.1f} ms wall ({verdict} the +{GOAL_MS:.0f} ms"
              f" goal), {least:+.1f} ms min, {cpu:+.1f} ms CPU")  # fmt: skip
    print(f"  single file --help, first run (unpacking, compiling): median"
          f" {statistics.median(first):.1f} ms over {len(first)} fresh caches")  # fmt: skip


if __name__ == "__main__":
    main()
