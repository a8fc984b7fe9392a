"""The console script: the collector made rare (cli/collector.py) before click loads."""

from __future__ import annotations

import gc
from typing import NoReturn

from kubectl_machinepool.cli.collector import RARE_COLLECTIONS


def main(argv: list[str] | None = None) -> NoReturn:
    """kubectl-machinepool; argv for a caller in the same process, whose thresholds
    cli/main.py restores."""
    if argv is None:
        gc.set_threshold(*RARE_COLLECTIONS)
    from kubectl_machinepool.cli.main import main as run

    run(argv)
