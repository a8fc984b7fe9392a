"""Kubeconfig files for tests that must not reach any server."""

from __future__ import annotations

from pathlib import Path

import yaml

# Port 9 (discard) on loopback: nothing listens there, so every request is refused at once.
DEAD_SERVER = "https://127.0.0.1:9"


def dead_kubeconfig(directory: Path) -> Path:
    """A kubeconfig whose only context points at a closed loopback port."""
    path = directory / "dead.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "dead", "cluster": {"server": DEAD_SERVER}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "u"}}],
    }))  # fmt: skip
    return path
