"""The owner objects of tests/support/owner_objects.yaml, each as a fresh copy by kind."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

OBJECTS_FILE = Path(__file__).with_name("owner_objects.yaml")


@functools.cache
def _objects() -> dict[str, dict[str, Any]]:
    listed = yaml.safe_load(OBJECTS_FILE.read_text())["items"]
    return {obj["kind"]: obj for obj in listed}


def owner_object(kind: str) -> dict[str, Any]:
    """The Application, Kustomization or HelmRelease, as its controller's example writes it."""
    return copy.deepcopy(_objects()[kind])
