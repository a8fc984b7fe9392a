"""What a command costs before it does anything: importing the modules it loads.

    python tests/benchmarks/importfloor.py record FILE ARGS...   # run `kubectl-machinepool ARGS`
                                                                 # here; write the modules it loaded
    python tests/benchmarks/importfloor.py import FILE           # import them, nothing else

scale.py times `import` beside the floor: the least a describe can take in this interpreter,
whatever it then does with the servers' answers.
"""

from __future__ import annotations

# Only what the interpreter has loaded before this script runs: anything more would be
# counted as the command's.
import os
import sys


def record(path: str, args: list[str]) -> None:
    from kubectl_machinepool.cli.main import main

    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  # the process ends here
    try:  # noqa: SIM105  # contextlib is not loaded at start-up: it would count as the command's
        main(args)
    except SystemExit:
        pass
    loaded = [
        name
        for name, module in sorted(sys.modules.items())
        if name != "__main__" and getattr(module, "__file__", None)
    ]
    with open(path, "w") as out:
        out.write("\n".join(loaded) + "\n")


def import_all(path: str) -> None:
    with open(path) as listed:
        names = listed.read().split()
    for name in names:
        __import__(name)
    print(f"imported {len(names)} modules")


def main() -> None:
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "record":
        record(path, sys.argv[3:])
    elif mode == "import":
        import_all(path)
    else:
        raise SystemExit("mode must be record or import")


if __name__ == "__main__":
    main()
