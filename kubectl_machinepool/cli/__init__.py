"""The console script: the collector made rare (cli/collector.py) before click loads."""

from __future__ import annotations

from typing import NoReturn


def main(argv: list[str] | None = None) -> NoReturn:
    """kubectl-machinepool; argv for a caller in the same process."""
    from kubectl_machinepool.cli.collector import RARE_COLLECTIONS

    if argv is None:  # else cli/main.py restores the caller's thresholds
        import gc

        gc.set_threshold(*RARE_COLLECTIONS)
    from kubectl_machinepool.cli.main import main as run

    run(argv)
