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
from typing import TYPE_CHECKING

from kubectl_machinepool.base.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def kubeconfig_files(flag: str | None, env: Mapping[str, str]) -> list[str]:
    """The files as strings: a cache key needs no more, and os.path spares a TAB pathlib."""
    if flag:
        path = os.path.expanduser(flag)
        if not _readable(path):
            what = "is a directory" if os.path.isdir(path) else "does not exist"
            raise ConfigError(
                f"kubeconfig file {flag} {what}",
                hint="pass an existing file to --kubeconfig, or drop the flag to use KUBECONFIG",
            )
        return [path]
    if env.get("KUBECONFIG"):
        listed = [os.path.expanduser(p) for p in env["KUBECONFIG"].split(os.pathsep) if p]
        return [p for p in listed if _readable(p)]
    home = os.path.join(os.path.expanduser(env.get("HOME", "~")), ".kube", "config")
    return [home] if _readable(home) else []


def _readable(path: str) -> bool:
    """Not only a regular file: kubectl also reads `--kubeconfig <(vault read ...)`, a pipe,
    and the user's own kubeconfig is theirs to point anywhere (unlike the files a
    kubeconfig names, which connection.py reads only when regular)."""
    return os.path.exists(path) and not os.path.isdir(path)


def kubeconfig_paths(flag: str | None, env: Mapping[str, str]) -> list[Path]:
    from pathlib import Path

    return [Path(p) for p in kubeconfig_files(flag, env)]
