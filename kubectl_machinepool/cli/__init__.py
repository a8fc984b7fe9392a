"""The console script: the collector made rare (cli/collector.py) before click loads."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn

from kubectl_machinepool.cli.collector import RARE_COLLECTIONS


def main(argv: list[str] | None = None) -> NoReturn:
    """kubectl-machinepool; argv for a caller in the same process, whose thresholds
    cli/main.py restores. `kubectl-machinepool __complete WORDS...` answers as
    kubectl_complete-machinepool does (cobra's spelling): the single file is one executable,
    and its kubectl_complete-machinepool (packaging/) runs it so."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["__complete"]:
        from kubectl_machinepool.cli.completion import main as complete

        complete(args[1:])
        sys.exit(0)
    if argv is None:
        gc.set_threshold(*RARE_COLLECTIONS)
    from kubectl_machinepool.cli.main import main as run

    run(argv)
