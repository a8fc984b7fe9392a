"""What --version says: the version, and the commit the code was built from.

The single file carries its commit in kubectl_machinepool/_build.py, written by packaging/build
(`-dirty` when the files built differed from it). Run from a git checkout (an editable install,
`python -m kubectl_machinepool`), the commit is the checkout's HEAD, read from .git's files: no
git process, and only when --version is asked for. A plain pip install from a checkout knows no
commit.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from kubectl_machinepool import __version__

_SHA = re.compile(r"[0-9a-f]{40}")
_STAMPED = re.compile(r"[0-9a-f]{40}(-dirty)?")
# .git's small files; anything larger is not what this reads.
_LARGEST = 1 << 20


def version_line() -> str:
    return f"kubectl-machinepool {__version__} (commit {commit() or 'unknown'})"


def commit() -> str | None:
    try:
        stamped = str(importlib.import_module("kubectl_machinepool._build").COMMIT)
    except ImportError:
        return checkout_commit(Path(__file__).resolve().parents[2])
    return stamped if _STAMPED.fullmatch(stamped) else None


def checkout_commit(root: Path) -> str | None:
    """HEAD of the checkout at root: .git a directory, or a file naming one (a worktree, whose
    branches live in its common directory)."""
    git = root / ".git"
    if git.is_file():
        pointer = _read(git)
        if pointer is None or not pointer.startswith("gitdir: "):
            return None
        git = (root / pointer.removeprefix("gitdir: ")).resolve()
    head = _read(git / "HEAD")
    if head is None or not head.startswith("ref: "):
        return head if head and _SHA.fullmatch(head) else None
    common = _read(git / "commondir")
    refs = (git / common).resolve() if common else git
    return _ref(refs, head.removeprefix("ref: "))


def _ref(git: Path, name: str) -> str | None:
    """A branch's commit: its loose file, else its line in packed-refs."""
    if not name.startswith("refs/") or ".." in name.split("/"):
        return None
    loose = _read(git / name)
    if loose is not None:
        return loose if _SHA.fullmatch(loose) else None
    packed = _read(git / "packed-refs") or ""
    for line in packed.splitlines():
        sha, _, ref = line.partition(" ")
        if ref == name and _SHA.fullmatch(sha):
            return sha
    return None


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as file:
            data = file.read(_LARGEST)
    except OSError:
        return None
    return data.decode("utf-8", "replace").strip()
