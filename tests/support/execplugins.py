"""Exec credential plugins that never answer, as shell scripts, and a look at what is left of them.

Each writes its process ids to a file, so that a test can tell afterwards whether anything it
started still runs. Their sleeps end on their own after ten minutes: a plugin the code under test
failed to stop must not outlive the test run by much, and the test kills it at once (reap()).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

# Sleeps forever (for a test): the plugin process itself is the sleep.
FOREVER = 'echo "$$" > "{pids}.tmp" && mv "{pids}.tmp" "{pids}"\nexec sleep 600\n'
# Hands its stdout to a sleeping child and exits: the output never ends though the plugin did.
FORKS = 'sleep 600 &\necho "$$ $!" > "{pids}.tmp" && mv "{pids}.tmp" "{pids}"\n'
# Prints 4 MiB, more than any credential: enough to show where reading stops, and finite, so that
# code that reads it all (as subprocess.run does) only fails the test.
FLOOD = 'echo "$$" > "{pids}.tmp" && mv "{pids}.tmp" "{pids}"\nexec head -c 4194304 /dev/zero\n'


def plugin(directory: Path, name: str, body: str) -> tuple[Path, Path]:
    """An executable script and the file it writes its process ids to."""
    script, pids = directory / name, directory / f"{name}.pids"
    script.write_text("#!/bin/sh\n" + body.format(pids=pids))
    script.chmod(0o755)
    return script, pids


def exec_user(script: Path) -> dict[str, Any]:
    """A kubeconfig user whose credentials come from script."""
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(script),
            "interactiveMode": "Never",
        }
    }


def pids_of(pids: Path) -> list[int]:
    return [int(p) for p in pids.read_text().split()]


def wait_for(pids: Path, timeout: float = 60.0) -> list[int]:
    """The ids once the plugin has written them: it has started."""
    deadline = time.monotonic() + timeout
    while not pids.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"the plugin never wrote {pids}")
        time.sleep(0.05)
    return pids_of(pids)


def running(pid: int) -> bool:
    """Whether the process exists and has not died: a zombie whose parent is gone waits for an
    init that may never reap it, but it runs nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def left_running(pids: list[int], guard: float = 60.0) -> list[int]:
    """Those still running once every one has died, or the guard has passed. A process killed
    with SIGKILL dies when the kernel next runs it, which the killer does not wait for (it can
    wait only for its own children): its death is awaited here, never raced."""
    deadline = time.monotonic() + guard
    while (alive := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def reap(*files: Path) -> None:
    """Kill whatever a failed test left running."""
    for pids in files:
        for pid in pids_of(pids) if pids.exists() else ():
            if running(pid):
                os.kill(pid, signal.SIGKILL)
