"""A parsed template run over plain JSON data, as kubectl's evaluator runs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kubectl_machinepool.render.jsonpath.limits import MAX_NESTING, Budget, Failed
from kubectl_machinepool.render.jsonpath.printing import as_read, key_text
from kubectl_machinepool.render.jsonpath.syntax import (
    Action,
    Field,
    Filter,
    Identifier,
    Literal,
    Node,
    Recursive,
    Slice,
    Text,
    Union,
    Wildcard,
)


def _entries(value: dict[Any, Any]) -> list[Any]:
    """A map's values by key: kubectl's come in Go's random map order, these sorted."""
    return [value[key] for key in sorted(value, key=key_text)]


def _go_type(value: Any) -> str:
    """The type kubectl names in its errors for this JSON value."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "<nil>" if value is None else "string"


def _kind(value: Any) -> str:
    """The family a filter compares within (Go template's basicKind)."""
    for family, kind in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string")):
        if isinstance(value, family):
            return kind
    raise Failed("invalid type for comparison")


def _equal(left: Any, right: Any) -> bool:
    if _kind(left) != _kind(right):
        raise Failed("incompatible types for comparison")
    return bool(left == right)


def _less(left: Any, right: Any) -> bool:
    kind = _kind(left)
    if kind != _kind(right):
        raise Failed("incompatible types for comparison")
    if kind == "bool":
        raise Failed("invalid type for comparison")
    return bool(left < right)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": _equal,
    "!=": lambda left, right: not _equal(left, right),
    "<": _less,
    "<=": lambda left, right: _less(left, right) or _equal(left, right),
    ">": lambda left, right: not (_less(left, right) or _equal(left, right)),
    ">=": lambda left, right: not _less(left, right),
}


class Run:
    """One evaluation: kubectl's range bookkeeping (a `range` makes the rest of the template
    run once per value until its `end`; an `end` never reached leaves the rest to run again
    after the loop) and the budget."""

    def __init__(self, nodes: Sequence[Text | Action], budget: Budget) -> None:
        self.nodes = nodes
        self.budget = budget
        self.ranges_begun = 0
        self.ranges_open = 0
        self.ends_met = 0
        self.last_end = -1

    def results(self, start: int, data: Any) -> list[list[Any]]:
        groups: list[list[Any]] = []
        at = start
        while at < len(self.nodes):
            found = self.walk([data], self.nodes[at])
            if 0 < self.ends_met <= self.ranges_open:
                self.ends_met -= 1
                self.last_end = at
                break
            if self.ranges_begun > 0:
                self.ranges_begun -= 1
                self.ranges_open += 1
                if self.ranges_open > MAX_NESTING:
                    raise Failed("ranges nested too deeply")
                for value in found:
                    groups += self.results(at + 1, value)
                if not found:  # run it anyway, to find where the range ends
                    self.results(at + 1, None)
                self.ranges_open -= 1
                if at < self.last_end < len(self.nodes):
                    at = self.last_end
            else:
                groups.append(found)
            at += 1
        return groups

    def walk(self, values: list[Any], node: Node) -> list[Any]:
        found = self._step(values, node)
        self.budget.spend(values=1 + len(found))
        return found

    def _step(self, values: list[Any], node: Node) -> list[Any]:  # noqa: PLR0911 (one per kind)
        if isinstance(node, Text):
            return [node.text]
        if isinstance(node, Action):
            for step in node.nodes:
                values = self.walk(values, step)
            return values
        if isinstance(node, Field):
            return [v[node.name] for v in values if isinstance(v, dict) and node.name in v]
        if isinstance(node, Wildcard):
            return [child for value in values for child in _children(value)]
        if isinstance(node, Recursive):
            return self._recursive(values)
        if isinstance(node, Slice):
            return _sliced(values, node)
        if isinstance(node, Union):
            return [found for branch in node.branches for found in self.walk(values, branch)]
        if isinstance(node, Filter):
            return self._filtered(values, node)
        if isinstance(node, Literal):
            return [node.value] * len(values)
        return self._identifier(values, node)

    def _recursive(self, values: list[Any]) -> list[Any]:
        """Every non-empty map, list and string at or under the values, parents first."""
        found: list[Any] = []
        stack = list(reversed(values))
        while stack:
            value = stack.pop()
            if not value or not isinstance(value, dict | list | str):
                continue
            found.append(value)
            self.budget.spend(values=1)
            if not isinstance(value, str):  # a string's children are bytes: never containers
                stack += reversed(_entries(value) if isinstance(value, dict) else value)
        return found

    def _filtered(self, values: list[Any], node: Filter) -> list[Any]:
        found: list[Any] = []
        for value in values:
            if not isinstance(value, list):
                raise Failed(
                    f"{_go_type(value)} is not array or slice and cannot be filtered", values
                )
            for item in value:
                if node.operator == "exists":
                    try:
                        lefts = self.walk([item], node.left)
                    except Failed as failed:
                        lefts = failed.values
                    if lefts:
                        found.append(item)
                    continue
                left = self._one([item], node.left, values)
                if left is None:
                    continue
                right = self._one([item], node.right, values)
                if right is None:
                    continue
                compare = _OPERATORS.get(node.operator)
                if compare is None:
                    raise Failed(f"unrecognized filter operator {node.operator}", found)
                try:
                    passed = compare(as_read(left[0]), as_read(right[0]))
                except Failed as failed:
                    raise Failed(str(failed), found) from None
                if passed:
                    found.append(item)
        return found

    def _one(self, item: list[Any], side: Action | None, values: list[Any]) -> list[Any] | None:
        """One side of a comparison: [its value], or None when it has none."""
        try:
            found = self.walk(item, side) if side is not None else []
        except Failed as failed:
            raise Failed(str(failed), values) from None
        if len(found) > 1:
            raise Failed("can only compare one element at a time", values)
        return found or None

    def _identifier(self, values: list[Any], node: Identifier) -> list[Any]:
        if node.name == "range":
            self.ranges_begun += 1
            return values
        if node.name == "end":
            if self.ranges_open == 0:
                raise Failed("not in range, nothing to end")
            self.ends_met += 1
            return []
        raise Failed(f"unrecognized identifier {node.name}", values)


def _children(value: Any) -> list[Any]:
    """`.*`: a map's values, a list's items, a string's bytes (as numbers, like kubectl)."""
    if isinstance(value, dict):
        return _entries(value)
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return list(value.encode("utf-8", "surrogatepass"))
    return []


def _sliced(values: list[Any], node: Slice) -> list[Any]:
    found: list[Any] = []
    for value in values:
        if value is None:
            continue
        if not isinstance(value, list):
            raise Failed(f"{_go_type(value)} is not array or slice", values)
        length = len(value)
        start = node.start or 0
        if start < 0:
            start += length
        end = length if node.end is None else node.end
        if end < 0 or (end == 0 and node.derived):
            end += length
        if start == end:  # nothing asked for: kubectl stops here, whatever values follow
            return found
        if not 0 <= start < length:
            raise Failed(f"array index out of bounds: index {start}, length {length}", values)
        if not 0 <= end <= length:
            raise Failed(f"array index out of bounds: index {end - 1}, length {length}", values)
        if start > end:
            raise Failed(f"starting index {start} is greater than ending index {end}", values)
        if node.step is not None and node.step <= 0:
            raise Failed("step must be > 0", values)
        found += value[start : end : node.step or 1]
    return found
