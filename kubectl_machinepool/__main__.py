from __future__ import annotations

from kubectl_machinepool.cli import main

main()
