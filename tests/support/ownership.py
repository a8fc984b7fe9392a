"""The pools of tests/support/ownership_pools.yaml, each as a fresh copy by name."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

POOLS_FILE = Path(__file__).with_name("ownership_pools.yaml")


@functools.cache
def _pools() -> dict[str, dict[str, Any]]:
    listed = yaml.safe_load(POOLS_FILE.read_text())["items"]
    return {pool["metadata"]["name"]: pool for pool in listed}


def owned_pool(name: str) -> dict[str, Any]:
    return copy.deepcopy(_pools()[name])


def owned_pool_names() -> list[str]:
    return list(_pools())
