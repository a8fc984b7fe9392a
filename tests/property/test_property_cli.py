"""The real entry point on hostile dumps: an exit code, output and at most one error line.

A smaller share of examples than the pure pipeline, since each runs click end to end.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pipeline import DESCRIBE_SCHEMA, FORBIDDEN, NOW, memory_guard, short
from profiles import examples
from strategies import Dump, dumps
from support.run import run_cli

from kubectl_machinepool.base.timeutil import format_time

COMMANDS = {
    "list": ["table", "wide", "json", "yaml", "name"],
    "describe": ["tree", "json", "yaml"],
    "diagnose": ["text", "json", "yaml"],
    "diff-metadata": ["text", "json", "yaml"],
}
CALLS = [(command, fmt) for command, formats in COMMANDS.items() for fmt in formats]


@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dumps(), st.sampled_from(CALLS), st.sampled_from([".yaml", ".json", ".txt"]))
def test_the_cli_answers_every_dump(
    capsys: pytest.CaptureFixture[str], dump: Dump, call: tuple[str, str], suffix: str
) -> None:
    command, fmt = call
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"dump{suffix}"
        path.write_text(dump.text, encoding="utf-8", errors="surrogatepass")
        with memory_guard():
            result = run_cli(
                capsys,
                command,
                "-f",
                str(path),
                "--now",
                format_time(NOW) or "",
                "-o",
                fmt,
                "--color",
                "never",
            )
    event(f"exit code {result.code}")
    assert result.code in (0, 1), short(result)
    if result.code == 1:
        lines = result.err.splitlines()
        errors = [line for line in lines if line.startswith("error: ")]
        assert len(errors) == 1, result.err
        assert "Traceback" not in result.err
    for stream in (result.out, result.err):
        assert not FORBIDDEN.search(stream), repr(stream[:500])
    if result.code == 0 and fmt in ("json", "yaml"):
        document = json.loads(result.out) if fmt == "json" else yaml.safe_load(result.out)
        if command == "describe":
            assert not list(DESCRIBE_SCHEMA.iter_errors(document))
