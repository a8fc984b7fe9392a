"""packaging/build: the single file is the same bytes on every build, carries only pure Python,
runs what `pip install .` runs, and says in one line when python3 is missing or too old."""

from __future__ import annotations

import configparser
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.singlefile import (
    BRIDGE,
    EXECUTABLE,
    MANIFEST,
    NOW,
    REPO,
    build,
    built,
    built_at,
    interpreter_dir,
    run,
    user_env,
)

pytestmark = pytest.mark.xdist_group("single-file")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One user's HOME for the tests that only run the file: unpacked (and compiled) once."""
    return tmp_path_factory.mktemp("home")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_builds_are_the_same_bytes(tmp_path: Path) -> None:
    first = built()
    again = build(tmp_path)
    assert sorted(again) == sorted(first)
    assert {name: sha256(path) for name, path in again.items()} == {
        name: sha256(path) for name, path in first.items()
    }
    manifest = first[MANIFEST].read_text()
    for name, path in first.items():
        if name.endswith(".tar.gz"):
            assert f"/{name}\n    sha256: {sha256(path)}\n" in manifest


def test_the_archives_hold_the_plugin_its_completion_bridge_license_and_readme() -> None:
    archive = next(path for name, path in built().items() if name.endswith(".tar.gz"))
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == sorted([BRIDGE, EXECUTABLE, "LICENSE", "README.md"])
        assert {(m.mode, m.uid, m.gid, m.uname, m.mtime) for m in members.values()} <= {
            (0o755, 0, 0, "", 315532800),
            (0o644, 0, 0, "", 315532800),
        }
        assert members[EXECUTABLE].mode == members[BRIDGE].mode == 0o755
        carried = tar.extractfile(EXECUTABLE)
        assert carried is not None
        assert carried.read() == built()[EXECUTABLE].read_bytes()


def test_the_single_file_carries_pure_python_dependencies_only() -> None:
    with zipfile.ZipFile(built()[EXECUTABLE]) as zipped:
        names = zipped.namelist()
        infos = zipped.infolist()
    assert names == sorted(names)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert not [n for n in names if n.endswith((".so", ".pyd", ".pyc")) or n.startswith("_yaml/")]
    tops = {name.split("/")[0] for name in names}
    assert {"click", "yaml", "urllib3", "tabulate", "colorama", "kubectl_machinepool"} <= tops
    # Each dependency's licence travels with it.
    assert len([n for n in names if ".dist-info/" in n and "LICENSE" in n.upper()]) >= 5
    # What it vendors is what `pip install .` requires, each pinned to one wheel.
    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg")
    required = setup["options"]["install_requires"].split()
    wanted = {re.split(r"[<>=]", r)[0].lower() for r in required if r[0].isalpha()}
    pinned = (REPO / "packaging" / "vendor.txt").read_text().splitlines()
    assert {line.split("==")[0].lower() for line in pinned if line[:1].isalpha()} == wanted


def test_the_single_file_runs_what_pip_install_runs(home: Path) -> None:
    env = user_env(home, interpreter_dir(home))
    single = str(built()[EXECUTABLE])
    described = run([single, "describe", "-f", "examples/", "--now", NOW], env)
    installed = subprocess.run(
        [sys.executable, "-m", "kubectl_machinepool", "describe", "-f", "examples/", "--now", NOW],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert (described.returncode, described.stderr) == (0, "")
    assert described.stdout == installed.stdout
    # Unpacked once into the cache, where PyYAML has no C extension to load.
    (unpacked,) = (home / ".cache" / "kubectl-machinepool" / "single-file").iterdir()
    probe = "import yaml, click; print(yaml.__with_libyaml__, yaml.__file__, click.__version__)"
    found = run(["python3", "-c", probe], {**env, "PYTHONPATH": str(unpacked)})
    libyaml, where, click_version = found.stdout.split()
    assert (libyaml, click_version) == ("False", "8.5.1")
    assert where.startswith(str(unpacked))
    # A second run uses that copy; nothing half-unpacked is left.
    again = run([single, "__complete", "describe", "-f", "examples/", "vmss-"], env)
    assert [line.split("\t")[0] for line in again.stdout.splitlines()] == [
        "vmss-batch",
        "vmss-workers",
        ":4",
    ]
    assert [p.name for p in unpacked.parent.iterdir()] == [unpacked.name]


def test_version_names_the_commit_it_was_built_from(home: Path) -> None:
    env = user_env(home, interpreter_dir(home))
    shown = run([str(built()[EXECUTABLE]), "--version"], env)
    head = built_at()
    assert re.fullmatch(rf"kubectl-machinepool 0\.1\.0 \(commit {head}(-dirty)?\)\n", shown.stdout)


def test_a_cache_others_can_write_to_is_not_imported_from(tmp_path: Path) -> None:
    env = user_env(tmp_path, interpreter_dir(tmp_path))
    single = str(built()[EXECUTABLE])
    assert run([single, "--version"], env).returncode == 0
    (unpacked,) = (tmp_path / ".cache" / "kubectl-machinepool" / "single-file").iterdir()
    planted = unpacked / "kubectl_machinepool" / "cli" / "version.py"
    planted.write_text("def version_line():\n    return 'planted'\n")
    unpacked.chmod(0o777)
    shown = run([single, "--version"], env)
    assert shown.stdout.startswith("kubectl-machinepool 0.1.0 (commit ")


def test_no_python3_is_one_error_line_and_a_hint(tmp_path: Path) -> None:
    done = run(["/bin/sh", str(built()[EXECUTABLE]), "--help"], {"PATH": str(tmp_path)})
    assert done.returncode == 127
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: kubectl machinepool needs python3 (3.11 or later) on PATH, and there is none",
        "hint: install Python 3.11 or later as python3",
    ]


def test_a_python3_older_than_3_11_is_one_error_line_and_a_hint() -> None:
    """The zip's __main__ as Python 3.10 would run it (the check is the first thing it does)."""
    with zipfile.ZipFile(io.BytesIO(built()[EXECUTABLE].read_bytes())) as zipped:
        main = zipped.read("__main__.py").decode()
    older = f"import sys\nsys.version_info = (3, 10, 14, 'final', 0)\n{main}"
    done = subprocess.run(
        [sys.executable, "-c", older], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: kubectl machinepool needs Python 3.11 or later, and python3 is 3.10",
        "hint: install Python 3.11 or later as python3 on PATH",
    ]
