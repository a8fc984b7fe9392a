"""The test cluster harness keeps its promises: no stray processes, no silent skips in CI."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def test_children_die_with_a_killed_test_process(control_plane) -> None:
    # control_plane is requested only so this runs where the binaries exist.
    script = (
        "import sys, time\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from support.controlplane import ControlPlane\n"
        "plane = ControlPlane(); plane.server('orphan-check')\n"
        "print(plane.workdir, plane.servers['orphan-check'].process.popen.pid,"
        " plane._etcd.process.popen.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    ) as parent:
        assert parent.stdout is not None
        workdir, *pids = parent.stdout.readline().split()
        children = [int(pid) for pid in pids]
        assert len(children) == 2
        assert not any(gone(pid) for pid in children)
        parent.send_signal(signal.SIGKILL)  # no fixture teardown, no atexit

    assert all(wait_gone(pid) for pid in children)
    shutil.rmtree(workdir)  # the killed process could not remove it


def run_pytest_without_binaries(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["KUBEBUILDER_ASSETS"] = str(tmp_path / "empty")
    if ci:
        env["CI"] = "true"
    target = (
        str(TESTS / "integration" / "test_list.py") + "::test_empty_namespace_says_so_on_stderr"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", target],
        env=env,
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_missing_binaries_fail_under_ci_and_skip_otherwise(tmp_path: Path) -> None:
    in_ci = run_pytest_without_binaries(tmp_path, ci=True)
    assert in_ci.returncode != 0
    assert "test cluster binaries missing" in in_ci.stdout
    assert "tests/testbin/build.sh" in in_ci.stdout

    locally = run_pytest_without_binaries(tmp_path, ci=False)
    assert locally.returncode == 0
    assert "skipped" in locally.stdout
    assert "tests/testbin/build.sh" in locally.stdout
