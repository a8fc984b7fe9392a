"""Per-instance objects made smaller as each LIST page arrives, so memory follows what is shown.

Thousands of Machines and infra machines are what a large pool's memory is made of (Nodes are
kept only as the states made of them, workload.workload_nodes). Two things shrink them without
changing what any reader sees: fields no view or rule reads are forgotten, and equal small
parts (a condition, a label set, an owner reference, a taint) are kept once and shared.
json.loads makes a new dict and new strings for every one of them; in a healthy pool most are
equal. Nothing reads raw objects to change them, so sharing is safe.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from kubectl_machinepool.base.fields import RawObject

# The pools keep their managedFields (rules date replica and template writes by them); a
# Node's kubelet version is in its own nodeInfo, which stays.
INSTANCE_UNUSED = (("metadata", "managedFields"), ("status", "nodeInfo"), ("status", "addresses"))

# Objects seen before equal parts are shared. Sharing costs ~12 us an object and saves ~3.3 KB
# (1000 Machines and 1000 AzureMachinePoolMachines: 25 ms of a describe's CPU, 7 MB of its 61):
# below a few thousand objects the memory is small and the time is not; past them memory is
# what grows (issue 13's 200 MB at 5000 instances of two kinds), and 4096 unshared objects
# leave ~13 MB of it.
SHARE_AFTER = 4096


class Compactor:
    """Called on each object of a LIST (Kube.list's shape): forgets unused fields, and shares
    equal parts of every object after the first share_after.

    One Compactor may serve several LISTs at once: its cache only grows by setdefault, which
    the interpreter does in one step.
    """

    def __init__(self, unused: tuple[tuple[str, str], ...], share_after: int = SHARE_AFTER) -> None:
        self._unused = unused
        self._seen: dict[tuple[Any, ...], Any] = {}
        self._share_after = share_after
        self._objects = count(1)  # next() on it is one step: safe from several LISTs' threads

    @property
    def managed_fields(self) -> bool:
        """Whether the objects keep their managedFields: when not, Kube.list need not even
        decode them."""
        return ("metadata", "managedFields") not in self._unused

    def __call__(self, obj: RawObject) -> None:
        for section, field in self._unused:
            part = obj.get(section)
            if type(part) is dict:
                part.pop(field, None)
        if next(self._objects) <= self._share_after:
            return
        meta = obj.get("metadata")
        if type(meta) is dict:
            self._share_in(meta, "labels")
            self._share_in(meta, "annotations")
            self._share_each(meta.get("ownerReferences"))
        status = obj.get("status")
        if type(status) is dict:
            self._share_each(status.get("conditions"))
            newer = status.get("v1beta2")
            if type(newer) is dict:
                self._share_each(newer.get("conditions"))
            older = status.get("deprecated")
            if type(older) is dict and type(older.get("v1beta1")) is dict:
                self._share_each(older["v1beta1"].get("conditions"))
        spec = obj.get("spec")
        if type(spec) is dict:
            self._share_each(spec.get("taints"))

    def _share(self, part: dict[str, Any]) -> dict[str, Any]:
        # Keys, values and the values' types in one flat tuple (its length says where each
        # part starts): 0.96 us a part, where a tuple of pairs beside one of types took 1.35.
        # The types are in it: True == 1 == 1.0, but they are not the same.
        values = part.values()
        key = (*part, *values, *map(type, values))
        try:
            shared: dict[str, Any] = self._seen.setdefault(key, part)
        except TypeError:  # a nested value: not a small part, kept as it is
            return part
        return shared

    def _share_in(self, parent: dict[str, Any], key: str) -> None:
        part = parent.get(key)
        if type(part) is dict:
            parent[key] = self._share(part)

    def _share_each(self, parts: Any) -> None:
        if type(parts) is list:
            for i, part in enumerate(parts):
                if type(part) is dict:
                    parts[i] = self._share(part)
