"""The pools of tests/support/ownership_pools.yaml, each as a fresh copy by name, and a
scenario's pool made to carry one's signals."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
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


def carrying(signals: dict[str, Any]) -> Callable[[list[dict[str, Any]]], None]:
    """A change giving a scenario's MachinePool these labels, annotations, managedFields,
    replicas and version (the rest of the scenario stays as it was)."""

    def change(objects: list[dict[str, Any]]) -> None:
        pool = next(o for o in objects if o["kind"] == "MachinePool")
        meta = signals["metadata"]
        for key in ("labels", "annotations"):
            pool["metadata"].setdefault(key, {}).update(meta.get(key, {}))
        pool["metadata"]["managedFields"] = copy.deepcopy(meta.get("managedFields", []))
        pool["spec"]["replicas"] = signals["spec"]["replicas"]
        pool["spec"]["template"]["spec"]["version"] = signals["spec"]["template"]["spec"]["version"]

    return change
