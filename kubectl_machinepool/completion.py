"""`kubectl_complete-machinepool`: what kubectl runs for `kubectl machinepool <TAB>`.

kubectl calls it with the words typed so far, the last one being the word to complete, and reads
one candidate per line followed by `:<directive>` (4 = do not fall back to file names).
"""

from __future__ import annotations

import sys

NO_FILE_COMPLETION = 4


def main(argv: list[str] | None = None) -> None:
    from kubectl_machinepool.cli import cli

    words = sys.argv[1:] if argv is None else argv
    if len(words) == 1:
        for name in sorted(cli.list_commands(None)):  # type: ignore[arg-type]
            if name.startswith(words[0]):
                print(name)
    print(f":{NO_FILE_COMPLETION}")
