"""kubectl's JSONPath grammar: a template parsed into Text and Action nodes."""

from __future__ import annotations

import math
import re

from kubectl_machinepool.base.records import record

HINT = (
    "see https://kubernetes.io/docs/reference/kubectl/jsonpath/, "
    "e.g. -o jsonpath='{.items[*].metadata.name}'"
)
# Ends a field name or an identifier.
_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_INT = re.compile(r"[+-]?[0-9]{1,19}")  # an int64 has 19 digits; int() of thousands raises
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")
_DICT_KEY = re.compile(r"'([^']*)'")
_SLICE = re.compile(r"(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?")
_COMPARISON = re.compile(r"([^!<>=]+)([!<>=]+)(.+)")
_HEX = re.compile(r"[0-9a-fA-F]+")
_INT64 = range(-(2**63), 2**63)
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


class Syntax(Exception):
    """Why a template does not parse, in the words of kubectl's parser."""


# -- the parsed template ----------------------------------------------------------------------


@record
class Text:
    text: str


@record
class Action:
    """`{…}`: its steps, each applied to what the one before produced."""

    nodes: tuple[Node, ...]


@record
class Field:
    name: str


@record
class Wildcard:
    pass


@record
class Recursive:
    pass


@record
class Slice:
    """`[n]`, `[a:b:c]`, `[*]`; None is a bound left out. `[n]` is `[n:n+1]`, its end
    `derived`: -1's end 0 then means the list's length."""

    start: int | None
    end: int | None
    derived: bool
    step: int | None


@record
class Union:
    branches: tuple[Action, ...]


@record
class Filter:
    left: Action
    operator: str  # "exists" for [?(@.x)]
    right: Action | None


@record
class Literal:
    """A number or true/false inside an action: one copy per current value."""

    value: int | float | bool


@record
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
        raise Syntax(f"array index {text} is not a number")
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
            raise Syntax(f"unquote string {quoted} error invalid syntax")
        if char != "\\":
            out += char.encode("utf-8", "surrogatepass")
            at += 1
            continue
        escaped = _escaped(body[at + 1], body[at + 2 :], quote)
        if escaped is None:
            raise Syntax(f"unquote string {quoted} error invalid syntax")
        out += escaped[0]
        at += 2 + escaped[1]
    return out.decode("utf-8", "replace")


class Parser:
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
        first = Parser("{" + text + "}").template()[0]
        if not isinstance(first, Action):  # "{…" always opens with an action
            raise Syntax("invalid syntax")
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
                raise Syntax("unclosed action")
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
                raise Syntax(f"unrecognized character in action: {_go_rune(text[pos])}")

    def _recursive(self, nodes: list[Node]) -> None:
        if nodes and isinstance(nodes[-1], Recursive):
            raise Syntax("invalid multiple recursive descent")
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
        raise Syntax(f"cannot parse number {number}")

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
                raise Syntax("unterminated quoted string")
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
            raise Syntax("unterminated array")
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
            raise Syntax(f"invalid array index {inside}")
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
                raise Syntax("unterminated filter")
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
            raise Syntax("unclosed array expect ]")
        inside, self.pos = text[self.pos + 3 : end], end + 2
        comparison = _COMPARISON.fullmatch(inside)
        if comparison is None:
            return Filter(self._sub(inside), "exists", None)
        left, operator, right = comparison.groups()
        return Filter(self._sub(left), operator, self._sub(right))
