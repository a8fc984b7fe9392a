"""Which kubeconfig files there are, by kubectl's rules (not the Python client's `load_config()`):

  --kubeconfig FILE      exactly that file, which must exist;
  else $KUBECONFIG       a path list, merged (kubeconfig.py reads and merges them);
  else ~/.kube/config    when it exists.

Apart from kubeconfig.py because a warm shell completion needs only this, to find its cached
answer: the documents' parsing and validation (and the YAML parser) stay out of its start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kubectl_machinepool.errors import ConfigError


def kubeconfig_paths(flag: str | None, env: Mapping[str, str]) -> list[Path]:
    if flag:
        path = Path(flag).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"kubeconfig file {flag} does not exist",
                hint="pass an existing file to --kubeconfig, or drop the flag to use KUBECONFIG",
            )
        return [path]
    if env.get("KUBECONFIG"):
        listed = [Path(p).expanduser() for p in env["KUBECONFIG"].split(os.pathsep) if p]
        return [p for p in listed if p.is_file()]
    home = Path(env.get("HOME", "~")).expanduser() / ".kube" / "config"
    return [home] if home.is_file() else []
