"""Run the real console entry point in-process, with its error boundary and exit code."""

from __future__ import annotations

import gc
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubectl_machinepool.cli.main import main


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(list(args))
    # The command ran with the collector rarely run (cli.main): a socket it left unclosed in
    # a reference cycle is found now and fails this test, not a later one.
    gc.collect(1)
    captured = capsys.readouterr()
    code = exited.value.code
    return Result(code if isinstance(code, int) else 0, captured.out, captured.err)


def start_plugin(args: list[str], home: Path) -> subprocess.Popen[str]:
    """The installed plugin as a child of its own session, so a signal reaches it alone (and if
    the test run dies, the servers go with it and the plugin ends on its next request)."""
    from .controlplane import installed_plugin

    return subprocess.Popen(
        [str(installed_plugin()), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONUNBUFFERED": "1"},
        cwd=home,
        start_new_session=True,
    )


class Lines:
    """The plugin's standard output as it comes, line by line, read in a thread."""

    def __init__(self, plugin: subprocess.Popen[str]) -> None:
        self.plugin = plugin
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.plugin.stdout is not None
        for line in self.plugin.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, wanted: str, timeout: float = 60.0) -> list[str]:
        """Every line up to the first that holds wanted."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if wanted in line:
                return self.seen
        raise AssertionError(f"no line with {wanted!r} in {self.seen}")

    def __enter__(self) -> Lines:
        return self

    def __exit__(self, *_: object) -> None:
        self.plugin.kill()
        self.plugin.wait(10)
        for stream in (self.plugin.stdout, self.plugin.stderr):
            if stream is not None:
                stream.close()

    def end(self, timeout: float = 90.0) -> tuple[list[str], str]:
        """Every line, and standard error, once the plugin has exited."""
        self.plugin.wait(timeout)
        while (line := self.lines.get(timeout=10)) is not None:
            self.seen.append(line)
        assert self.plugin.stderr is not None
        return self.seen, self.plugin.stderr.read()
