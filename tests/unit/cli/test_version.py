"""--version names the version and the commit: the build's stamp, else the checkout's HEAD read
from .git's files (loose or packed branch, detached HEAD, a worktree), never anything else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_machinepool.cli.version import checkout_commit

REPO = Path(__file__).resolve().parents[3]
SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def _head() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_version_names_this_checkouts_head() -> None:
    before = _head()
    shown = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", "--version"],
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    # A commit made in the checkout meanwhile is HEAD too.
    heads = {before, _head()}
    assert shown.returncode == 0
    assert shown.stdout in {f"kubectl-machinepool 0.1.0 (commit {head})\n" for head in heads}


def _repo(tmp_path: Path, head: str, files: dict[str, str]) -> Path:
    git = tmp_path / ".git"
    git.mkdir(parents=True)
    (git / "HEAD").write_text(head)
    for name, text in files.items():
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("head", "files", "expected"),
    [
        ("ref: refs/heads/main\n", {"refs/heads/main": f"{SHA}\n"}, SHA),
        (
            "ref: refs/heads/main\n",
            {
                "packed-refs": f"# pack-refs with: peeled\n{OTHER} refs/heads/other\n{SHA} refs/heads/main\n"
            },
            SHA,
        ),
        (f"{SHA}\n", {}, SHA),  # detached
        ("ref: refs/heads/gone\n", {"packed-refs": f"{SHA} refs/heads/main\n"}, None),
        ("ref: refs/heads/main\n", {"refs/heads/main": "not a commit\n"}, None),
        ("ref: ../../etc/passwd\n", {}, None),
        ("ref: refs/../../x\n", {}, None),
        ("\x1b[31mred\n", {}, None),
    ],
)
def test_the_checkouts_commit(
    tmp_path: Path, head: str, files: dict[str, str], expected: str | None
) -> None:
    assert checkout_commit(_repo(tmp_path, head, files)) == expected


def test_a_worktree_reads_its_head_and_the_common_branches(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main", "ref: refs/heads/main\n", {"refs/heads/topic": f"{OTHER}\n"})
    private = main / ".git" / "worktrees" / "topic"
    private.mkdir(parents=True)
    (private / "HEAD").write_text("ref: refs/heads/topic\n")
    (private / "commondir").write_text("../..\n")
    tree = tmp_path / "topic"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {private}\n")
    assert checkout_commit(tree) == OTHER


def test_no_checkout_no_commit(tmp_path: Path) -> None:
    assert checkout_commit(tmp_path) is None
