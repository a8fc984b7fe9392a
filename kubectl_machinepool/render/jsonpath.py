"""kubectl's JSONPath templates (`kubectl get -o jsonpath=…`), evaluated over plain JSON data.

kubectl's dialect (k8s.io/client-go/util/jsonpath) is not RFC 9535's JSONPath, and no Python
library implements it: text around `{…}` actions, `range`/`end`, string literals, filters,
unions, slices, and its own output rules (several results joined by a space, strings bare, maps
and lists as compact JSON). This module follows it, quirks included, so that a template written
for `kubectl get` prints the same text here (tests/integration/test_list_output.py compares the
two byte for byte). Where kubectl's output is random (a map's entries come in Go's map order),
this one takes the keys in sorted order. Missing fields print nothing, as `kubectl get` has it
(allowMissingKeys).

Template and data are both untrusted: parsing never recurses per character, and one rendering
counts the values it makes and the text it prints, stopping with a TemplateError past
MAX_VALUES or MAX_OUTPUT.
"""

from __future__ import annotations

import json.encoder
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, TypeVar

from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.base.timeutil import format_time, parse_time

# Values one rendering may make, and characters it may print: far past any real list (5000
# pools printed whole with {.items} is some 25 MB), short of a hang or an exhausted memory.
MAX_VALUES = 5_000_000
MAX_OUTPUT = 128 * 2**20
# Ranges inside one another: each is a call deeper.
MAX_NESTING = 64

_NARROW = "narrow the template, or select fewer pools with -n or -l"
HINT = (
    "see https://kubernetes.io/docs/reference/kubectl/jsonpath/, "
    "e.g. -o jsonpath='{.items[*].metadata.name}'"
)
# Ends a field name or an identifier.
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_DICT_KEY = re.compile(r"'([^']*)'")
_SLICE = re.compile(r"(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?")
_COMPARISON = re.compile(r"([^!<>=]+)([!<>=]+)(.+)")
_HEX = re.compile(r"[0-9a-fA-F]+")
_INT64 = range(-(2**63), 2**63)
_T = TypeVar("_T")
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}
# What Go's encoding/json escapes beyond Python's encoder: HTML's specials, the JavaScript
# line separators, and (for lone surrogates, which Go strings cannot hold) the replacement.
_GO_JSON_EXTRA = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


class TemplateError(MachinePoolError):
    """A template that does not parse, or that fails on the data (as kubectl would)."""


class _Syntax(Exception):
    """Why a template does not parse, in the words of kubectl's parser."""


class _Failed(Exception):
    """Why evaluation stopped; values: what kubectl's step returns with the error (an
    existence filter still counts them)."""

    def __init__(self, message: str, values: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.values = list(values)


# -- the parsed template ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Action:
    """`{…}`: its steps, each applied to what the one before produced."""

    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Field:
    name: str


@dataclass(frozen=True, slots=True)
class Wildcard:
    pass


@dataclass(frozen=True, slots=True)
class Recursive:
    pass


@dataclass(frozen=True, slots=True)
class Slice:
    """`[n]`, `[a:b:c]`, `[*]`; None is a bound left out. `[n]` is `[n:n+1]`, its end
    `derived`: -1's end 0 then means the list's length."""

    start: int | None
    end: int | None
    derived: bool
    step: int | None


@dataclass(frozen=True, slots=True)
class Union:
    branches: tuple[Action, ...]


@dataclass(frozen=True, slots=True)
class Filter:
    left: Action
    operator: str  # "exists" for [?(@.x)]
    right: Action | None


@dataclass(frozen=True, slots=True)
class Literal:
    """A number or true/false inside an action: one copy per current value."""

    value: int | float | bool


@dataclass(frozen=True, slots=True)
class Identifier:
    name: str


Node = Text | Action | Field | Wildcard | Recursive | Slice | Union | Filter | Literal | Identifier


def _go_rune(char: str) -> str:
    """Go's %#U: U+0021 '!'."""
    code = f"U+{ord(char):04X}"
    return f"{code} '{char}'" if char.isprintable() else code


def _alphanumeric(char: str) -> bool:
    return char == "_" or char.isalpha() or char.isdecimal()


def _index(text: str) -> int:
    if not _INT.fullmatch(text) or int(text) not in _INT64:
        raise _Syntax(f"array index {text} is not a number")
    return int(text)


def _escaped(kind: str, rest: str, quote: str) -> tuple[bytes, int] | None:  # noqa: PLR0911 - one return per escape kind
    """One escape sequence after its backslash (kind, then rest): its bytes and how many
    characters of rest it took; None when Go's strconv refuses it."""
    if kind in _ESCAPES:
        return bytes([_ESCAPES[kind]]), 0
    if kind == quote:
        return kind.encode(), 0
    width = {"x": 2, "u": 4, "U": 8}.get(kind)
    if width is not None:
        digits = rest[:width]
        if len(digits) < width or not _HEX.fullmatch(digits):
            return None
        value = int(digits, 16)
        if kind == "x":
            return bytes([value]), width
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            return None
        return chr(value).encode(), width
    digits = kind + rest[:2]
    if len(digits) == 3 and set(digits) <= set("01234567") and int(digits, 8) <= 255:
        return bytes([int(digits, 8)]), 2
    return None


def _unquote(quoted: str) -> str:
    """A string literal as Go's strconv unquotes it, single quotes allowed. Hex and octal
    escapes are bytes, so the result is decoded from UTF-8 (anything else replaced)."""
    quote, body = quoted[0], quoted[1:-1]
    if "\\" not in body and quote not in body:
        return body
    out = bytearray()
    at = 0
    while at < len(body):
        char = body[at]
        if char == quote or (char == "\\" and at + 1 >= len(body)):
            raise _Syntax(f"unquote string {quoted} error invalid syntax")
        if char != "\\":
            out += char.encode("utf-8", "surrogatepass")
            at += 1
            continue
        escaped = _escaped(body[at + 1], body[at + 2 :], quote)
        if escaped is None:
            raise _Syntax(f"unquote string {quoted} error invalid syntax")
        out += escaped[0]
        at += 2 + escaped[1]
    return out.decode("utf-8", "replace")


class _Parser:
    """kubectl's parser, as loops: one call per action, not per character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def template(self) -> list[Text | Action]:
        nodes: list[Text | Action] = []
        while True:
            start = self.text.find("{", self.pos)
            if start < 0:
                if self.pos < len(self.text):
                    nodes.append(Text(self.text[self.pos :]))
                return nodes
            if start > self.pos:
                nodes.append(Text(self.text[self.pos : start]))
            self.pos = start + 1
            nodes.append(self._action())

    def _sub(self, text: str) -> Action:
        """A piece of an action ([a,b]'s a, a filter's side) parsed as an action of its own.
        Pieces hold no `]`, or (a filter's) no `)` outside quotes: they nest only a few deep."""
        first = _Parser("{" + text + "}").template()[0]
        if not isinstance(first, Action):  # "{…" always opens with an action
            raise _Syntax("invalid syntax")
        return first

    def _action(self) -> Action:
        nodes: list[Node] = []
        text = self.text
        while True:
            pos = self.pos
            if text.startswith("}", pos):
                self.pos += 1
                return Action(tuple(nodes))
            if text.startswith("[?(", pos):
                nodes.append(self._filter())
            elif text.startswith("..", pos):
                self._recursive(nodes)
            elif pos >= len(text) or text[pos] in "\r\n":
                raise _Syntax("unclosed action")
            elif text[pos] in " @$":  # @ and $ are the current value: nothing to do
                self.pos += 1
            elif text[pos] == "[":
                self._array(nodes)
            elif text[pos] in "\"'":
                nodes.append(self._quoted(text[pos]))
            elif text[pos] == ".":
                self.pos += 1
                nodes.append(self._field())
            elif text[pos] in "+-" or text[pos].isdecimal():
                nodes.append(self._number())
            elif _alphanumeric(text[pos]):
                nodes.append(self._identifier())
            else:
                raise _Syntax(f"unrecognized character in action: {_go_rune(text[pos])}")

    def _recursive(self, nodes: list[Node]) -> None:
        if nodes and isinstance(nodes[-1], Recursive):
            raise _Syntax("invalid multiple recursive descent")
        self.pos += 2
        nodes.append(Recursive())
        if self.pos < len(self.text) and _alphanumeric(self.text[self.pos]):
            nodes.append(self._field())

    def _field(self) -> Field | Wildcard:
        text, end = self.text, self.pos
        while end < len(text):
            if text[end] == "\\":  # escapes the next character: \. in a label key
                end += 2
            elif text[end] in _TERMINATORS:
                break
            else:
                end += 1
        end = min(end, len(text))
        name, self.pos = text[self.pos : end], end
        return Wildcard() if name == "*" else Field(name.replace("\\", ""))

    def _number(self) -> Literal:
        text, end = self.text, self.pos
        if text[end] in "+-":
            end += 1
        while end < len(text) and (text[end] == "." or text[end].isdecimal()):
            end += 1
        number, self.pos = text[self.pos : end], end
        if _INT.fullmatch(number) and int(number) in _INT64:
            return Literal(int(number))
        if _FLOAT.fullmatch(number) and math.isfinite(float(number)):
            return Literal(float(number))
        raise _Syntax(f"cannot parse number {number}")

    def _identifier(self) -> Literal | Identifier:
        text, end = self.text, self.pos
        while end < len(text) and text[end] not in _TERMINATORS:
            end += 1
        name, self.pos = text[self.pos : end], end
        return Literal(name == "true") if name in ("true", "false") else Identifier(name)

    def _quoted(self, quote: str) -> Text:
        text, end = self.text, self.pos + 1
        while True:
            if end >= len(text) or text[end] == "\n":
                raise _Syntax("unterminated quoted string")
            if text[end] == quote and text[end - 1] != "\\":
                break
            end += 1
        quoted, self.pos = text[self.pos : end + 1], end + 1
        return Text(_unquote(quoted))

    def _array(self, nodes: list[Node]) -> None:
        text = self.text
        end = self.pos + 1
        while end < len(text) and text[end] not in "]\n":
            end += 1
        if end >= len(text) or text[end] == "\n":
            raise _Syntax("unterminated array")
        inside, self.pos = text[self.pos + 1 : end], end + 1
        if inside == "*":
            inside = ":"
        pieces = inside.split(",")
        if len(pieces) > 1:
            nodes.append(Union(tuple(self._sub(f"[{piece.strip(' ')}]") for piece in pieces)))
            return
        key = _DICT_KEY.fullmatch(inside)
        if key:
            nodes.extend(self._sub("." + key.group(1)).nodes)
            return
        bounds = _SLICE.fullmatch(inside)
        if bounds is None:
            raise _Syntax(f"invalid array index {inside}")
        first, second, third = (group or "" for group in bounds.groups())
        start = _index(first) if first else None
        step = _index(third[1:]) if len(third) > 1 else None
        if not second:
            nodes.append(Slice(start, (start or 0) + 1, True, step))
        else:
            nodes.append(Slice(start, _index(second[1:]) if len(second) > 1 else None, False, step))

    def _filter(self) -> Filter:
        text = self.text
        end = self.pos + 3
        opened = closed = False
        pair = ""
        while True:
            if end >= len(text) or text[end] == "\n":
                raise _Syntax("unterminated filter")
            char = text[end]
            if char in "\"'":
                if not opened:
                    opened, pair = True, char
                elif char == pair and text[end - 1] != "\\":
                    closed = True
            elif char == ")" and opened == closed:
                break
            end += 1
        if not text.startswith("]", end + 1):
            raise _Syntax("unclosed array expect ]")
        inside, self.pos = text[self.pos + 3 : end], end + 2
        comparison = _COMPARISON.fullmatch(inside)
        if comparison is None:
            return Filter(self._sub(inside), "exists", None)
        left, operator, right = comparison.groups()
        return Filter(self._sub(left), operator, self._sub(right))


# -- evaluation -------------------------------------------------------------------------------


class Budget:
    """What one rendering has spent, across every template it runs (custom columns run one
    per column and item). Past it, a TemplateError: no filter swallows it as it does _Failed."""

    def __init__(self) -> None:
        self.values = 0
        self.chars = 0

    def spend(self, values: int = 0, chars: int = 0) -> None:
        self.values += values
        self.chars += chars
        if self.values > MAX_VALUES:
            raise TemplateError(f"the template makes more than {MAX_VALUES} values", hint=_NARROW)
        if self.chars > MAX_OUTPUT:
            raise TemplateError(f"the output passes {MAX_OUTPUT // 2**20} MiB", hint=_NARROW)


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else text(key)


def _entries(value: dict[Any, Any]) -> list[Any]:
    """A map's values by key: kubectl's come in Go's random map order, these sorted."""
    return [value[key] for key in sorted(value, key=_key_text)]


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
    raise _Failed("invalid type for comparison")


def _equal(left: Any, right: Any) -> bool:
    if _kind(left) != _kind(right):
        raise _Failed("incompatible types for comparison")
    return bool(left == right)


def _less(left: Any, right: Any) -> bool:
    kind = _kind(left)
    if kind != _kind(right):
        raise _Failed("incompatible types for comparison")
    if kind == "bool":
        raise _Failed("invalid type for comparison")
    return bool(left < right)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "==": _equal,
    "!=": lambda left, right: not _equal(left, right),
    "<": _less,
    "<=": lambda left, right: _less(left, right) or _equal(left, right),
    ">": lambda left, right: not (_less(left, right) or _equal(left, right)),
    ">=": lambda left, right: not _less(left, right),
}


class _Run:
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
                    raise _Failed("ranges nested too deeply")
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
                raise _Failed(
                    f"{_go_type(value)} is not array or slice and cannot be filtered", values
                )
            for item in value:
                if node.operator == "exists":
                    try:
                        lefts = self.walk([item], node.left)
                    except _Failed as failed:
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
                    raise _Failed(f"unrecognized filter operator {node.operator}", found)
                try:
                    passed = compare(as_read(left[0]), as_read(right[0]))
                except _Failed as failed:
                    raise _Failed(str(failed), found) from None
                if passed:
                    found.append(item)
        return found

    def _one(self, item: list[Any], side: Action | None, values: list[Any]) -> list[Any] | None:
        """One side of a comparison: [its value], or None when it has none."""
        try:
            found = self.walk(item, side) if side is not None else []
        except _Failed as failed:
            raise _Failed(str(failed), values) from None
        if len(found) > 1:
            raise _Failed("can only compare one element at a time", values)
        return found or None

    def _identifier(self, values: list[Any], node: Identifier) -> list[Any]:
        if node.name == "range":
            self.ranges_begun += 1
            return values
        if node.name == "end":
            if self.ranges_open == 0:
                raise _Failed("not in range, nothing to end")
            self.ends_met += 1
            return []
        raise _Failed(f"unrecognized identifier {node.name}", values)


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
            raise _Failed(f"{_go_type(value)} is not array or slice", values)
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
            raise _Failed(f"array index out of bounds: index {start}, length {length}", values)
        if not 0 <= end <= length:
            raise _Failed(f"array index out of bounds: index {end - 1}, length {length}", values)
        if start > end:
            raise _Failed(f"starting index {start} is greater than ending index {end}", values)
        if node.step is not None and node.step <= 0:
            raise _Failed("step must be > 0", values)
        found += value[start : end : node.step or 1]
    return found


# -- printing ---------------------------------------------------------------------------------


def _digits(number: float) -> tuple[str, int]:
    """The shortest digits that give back abs(number), and where the point goes: the number
    is 0.DIGITS times 10**point."""
    if number == 0:
        return "", 0
    _, digits, exponent = Decimal(repr(abs(number))).as_tuple()
    shown = "".join(map(str, digits))
    point = len(shown) + int(exponent)
    return shown.rstrip("0"), point


def _positional(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits if digits else "0"
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _exponential(digits: str, point: int) -> str:
    exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def go_float(number: float, json: bool = False) -> str:
    """A float64 as Go prints it: fmt's %v, or with json encoding/json's form."""
    if not math.isfinite(number):
        return "NaN" if math.isnan(number) else ("+Inf" if number > 0 else "-Inf")
    digits, point = _digits(number)
    sign = "-" if math.copysign(1, number) < 0 else ""
    if json:
        if number != 0 and not 1e-6 <= abs(number) < 1e21:
            return sign + _exponential(digits, point).replace("e-0", "e-")
        return sign + _positional(digits, point)
    if digits and not -4 <= point - 1 < 6:
        return sign + _exponential(digits, point)
    return sign + _positional(digits, point)


def as_read(value: Any) -> Any:
    """A dump's unquoted timestamp, which YAML reads as a datetime, as the RFC 3339 text that
    the API holds (and kubectl prints, compares and sorts)."""
    if isinstance(value, datetime):
        return format_time(parse_time(value))
    return value.isoformat() if isinstance(value, date) else value


def text(value: Any) -> str:
    """A scalar as kubectl's jsonpath prints it."""
    value = as_read(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return "null" if value is None else str(value)


def _json_string(value: str) -> str:
    encoded: str = json.encoder.encode_basestring(value)
    if _GO_JSON_EXTRA.search(encoded) is None:
        return encoded
    return _GO_JSON_EXTRA.sub(
        lambda m: "\\ufffd" if "\ud800" <= m.group() <= "\udfff" else f"\\u{ord(m.group()):04x}",
        encoded,
    )


def go_json(value: Any) -> str:
    """Compact JSON as Go's json.Marshal writes it: keys sorted, <>& escaped."""
    if isinstance(value, dict):
        entries = sorted(value.items(), key=lambda entry: _key_text(entry[0]))
        inner = ",".join(f"{_json_string(_key_text(k))}:{go_json(v)}" for k, v in entries)
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, bool) or value is None:
        return text(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Failed(f"json: unsupported value: {go_float(value)}")
        return go_float(value, json=True)
    if isinstance(value, int):
        return str(value)
    return _json_string(text(value))


def sprint(value: Any) -> str:
    """A value as Go's fmt.Sprint shows it (custom columns): map[k:v], [a b], <nil>."""
    if isinstance(value, dict):
        entries = sorted(value.items(), key=lambda entry: _key_text(entry[0]))
        return "map[" + " ".join(f"{_key_text(k)}:{sprint(v)}" for k, v in entries) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(item) for item in value) + "]"
    return "<nil>" if value is None else text(value)


def _printed(groups: list[list[Any]], budget: Budget) -> str:
    parts: list[str] = []
    for group in groups:
        for index, value in enumerate(group):
            shown = go_json(value) if isinstance(value, dict | list) else text(value)
            if index < len(group) - 1:
                shown += " "
            budget.spend(chars=len(shown))
            parts.append(shown)
    return "".join(parts)


# -- the public face --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template; source is what the user wrote."""

    source: str
    nodes: tuple[Text | Action, ...]

    def results(self, data: Any, budget: Budget | None = None) -> list[list[Any]]:
        """What each top-level piece found, the way kubectl groups it before printing."""
        return self._run(lambda run: run.results(0, data), budget or Budget())

    def render(self, data: Any) -> str:
        """The text kubectl prints for this template over data."""
        budget = Budget()
        return self._run(lambda run: _printed(run.results(0, data), budget), budget)

    def _run(self, work: Callable[[_Run], _T], budget: Budget) -> _T:
        try:
            return work(_Run(self.nodes, budget))
        except _Failed as failed:
            raise TemplateError(
                f'error executing jsonpath "{escape(self.source)}": {escape(str(failed))}',
                hint="the template runs over a List of MachinePools, each as the API "
                "gave it plus the summary: {.items[*].summary.replicas.ready}",
            ) from None
        except RecursionError:
            raise TemplateError(
                f'error executing jsonpath "{escape(self.source)}": the data nests too deeply'
            ) from None


def parse(source: str) -> Template:
    """A template as kubectl parses it; TemplateError says why it does not parse."""
    try:
        return Template(source, tuple(_Parser(source).template()))
    except _Syntax as why:
        raise TemplateError(
            f"error parsing jsonpath {escape(source)}, {escape(str(why))}", hint=HINT
        ) from None
    except RecursionError:
        raise TemplateError(
            f"error parsing jsonpath {escape(source)}, it nests too deeply", hint=HINT
        ) from None


_RELAXED = re.compile(r"\{\.?([^{}]+)\}|\.?([^{}]+)")


def relaxed(path: str) -> str:
    """kubectl's RelaxedJSONPathExpression: name.x, .name.x, {name.x} all become {.name.x}."""
    if not path:
        return path
    match = _RELAXED.fullmatch(path)
    if match is None:
        raise TemplateError(
            f"unexpected path string {escape(path)}, expected a 'name1.name2' or '.name1.name2' "
            "or '{name1.name2}' or '{.name1.name2}'",
            hint="a single field path, e.g. .metadata.name",
        )
    return "{." + (match.group(1) or match.group(2)) + "}"
