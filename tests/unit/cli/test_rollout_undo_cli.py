"""`rollout undo` before any connection: a dump is refused in one line (nothing to write to),
-A is a usage error, and --to-revision completes the pool's revision numbers from -f."""

from __future__ import annotations

import pytest
from support.revisions import vmss_dump
from support.run import run_cli

from kubectl_machinepool.cli.completion import main as complete

pytestmark = pytest.mark.usefixtures("no_cluster")


@pytest.mark.parametrize("dry_run", ["none", "client", "server"])
def test_a_dump_has_nothing_to_write_to(capsys, tmp_path, dry_run: str) -> None:
    dump = vmss_dump(tmp_path)
    result = run_cli(capsys, "rollout", "undo", "vmss-workers", "-f", dump, f"--dry-run={dry_run}")
    assert (result.code, result.out) == (3, "")
    assert result.err == (
        "error: refused: rollout undo writes to a live cluster, and a dump (-f) has nothing to "
        "write to (rollout history -f reads its revisions); nothing was written\n"
    )


def test_one_namespace(capsys) -> None:
    result = run_cli(capsys, "rollout", "undo", "vmss-workers", "-A", "--yes")
    assert result.code == 2
    assert result.err.startswith("error: unknown shorthand flag: 'A' in -A")


def test_to_revision_completes_the_pool_s_revisions(capsys, tmp_path) -> None:
    dump = vmss_dump(tmp_path)
    complete(["rollout", "undo", "mp/vmss-workers", "-f", dump, "--to-revision", "2"])
    assert capsys.readouterr().out.splitlines() == ["2\tscale --replicas 3", ":4"]
