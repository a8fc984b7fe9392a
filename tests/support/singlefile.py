"""The single file, its krew archives and manifest, built by packaging/build once per test process
(the tests that use it share an xdist group, so one worker builds), and run as a user would."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "packaging" / "build"
EXECUTABLE = "kubectl-machinepool"
BRIDGE = "kubectl_complete-machinepool"
MANIFEST = "machinepool.yaml"
NOW = "2026-11-29T15:00:00Z"


def build(out: Path, *options: str) -> dict[str, Path]:
    """packaging/build into out: each file it wrote, by name."""
    done = subprocess.run(
        [sys.executable, str(BUILD), "--out", str(out), *options],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {Path(line).name: Path(line) for line in done.stdout.split()}


@functools.cache
def built() -> dict[str, Path]:
    out = Path(tempfile.mkdtemp(prefix="kmp-single-file-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    built_at()
    return build(out)


@functools.cache
def built_at() -> str:
    """HEAD as the build found it (read just before it: a commit made later in the checkout is
    not the one built)."""
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return head.stdout.strip()


def archive_for_here() -> Path:
    """The archive krew picks on this machine (linux/amd64 here, like the test binaries)."""
    return next(path for name, path in built().items() if name.endswith("_linux_amd64.tar.gz"))


def interpreter_dir(home: Path) -> Path:
    """A directory with `python3`, this run's interpreter without the venv's packages, so the
    single file can only use what it carries."""
    where = home / "python"
    where.mkdir(exist_ok=True)
    link = where / "python3"
    if not link.exists():
        link.symlink_to(getattr(sys, "_base_executable", sys.executable))
    return where


def user_env(home: Path, *path: Path) -> dict[str, str]:
    """A user's environment: an empty HOME (and cache under it), PATH as given then the system's."""
    return {
        "HOME": str(home),
        "PATH": os.pathsep.join([*(str(p) for p in path), "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
    }


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
