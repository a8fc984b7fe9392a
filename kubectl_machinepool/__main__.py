from __future__ import annotations

from kubectl_machinepool.cli.main import main

main()
