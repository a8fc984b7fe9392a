"""JSON and YAML written piece by piece, so a pool of thousands of instances is never one string.

json.dumps with indent runs Python's pure encoder (several times slower than the C one) and
returns the whole text at once; yaml.safe_dump builds a node for every value first. Here a
document may hold Stream values (instance lists produced one at a time) and the text comes out
in chunks of some PIECES pieces: JSON byte for byte what json.dumps(indent=4) gives for the
same document with the streams made lists, YAML in PyYAML's layout that yaml.safe_load reads
back as that document (see write_yaml).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

import yaml

# Pieces (a key, a value, punctuation) joined into one write: some tens of KiB.
PIECES = 8192
_END = object()
_NO_FOLD = 1 << 30
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Stream:
    """A list whose items are made only when written."""

    def __init__(self, items: Iterable[Any]) -> None:
        self._items = iter(items)
        self._first: list[Any] = []

    def peek(self) -> bool:
        """Whether there is an item; it is kept for iteration."""
        if not self._first:
            item = next(self._items, _END)
            self._first = [] if item is _END else [item]
        return bool(self._first)

    def __iter__(self) -> Iterator[Any]:
        yield from self._first
        self._first = []
        yield from self._items


def materialized(value: Any) -> Any:
    """The document with every Stream made a list (for tests and small documents)."""
    if isinstance(value, dict):
        return {k: materialized(v) for k, v in value.items()}
    if isinstance(value, list | Stream):
        return [materialized(v) for v in value]
    return value


class _Parts:
    """Pieces of text, handed on joined once PIECES have gathered."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self.pieces: list[str] = []

    def add(self, text: str) -> None:
        self.pieces.append(text)
        self.spill()

    def spill(self) -> None:
        """Hand on what has gathered, if it is enough (pieces average a few characters)."""
        if len(self.pieces) >= PIECES:
            self.flush()

    def flush(self) -> None:
        if self.pieces:
            self._write("".join(self.pieces))
            self.pieces.clear()


_SCALARS = {None: "null", True: "true", False: "false"}


def write_json(document: Any, write: Callable[[str], None]) -> None:
    """json.dumps(document, indent=4) plus a newline, through write, in chunks."""
    parts = _Parts(write)
    _json(document, "", parts)
    parts.add("\n")
    parts.flush()


def _json(value: Any, pad: str, parts: _Parts) -> None:
    # The hot loop of -o json: appends to a local list, checks for a chunk only between the
    # items of a list, and writes numbers and constants without calling json.
    add = parts.pieces.append
    kind = type(value)
    if kind is str:
        add(encode_basestring_ascii(value))
    elif kind is dict:
        if not value:
            add("{}")
            return
        inner = pad + "    "
        lead = "{\n" + inner
        for key, item in value.items():
            add(lead)
            add(encode_basestring_ascii(key))
            add(": ")
            lead = ",\n" + inner
            if type(item) is str:
                add(encode_basestring_ascii(item))
            elif item is None or item is True or item is False:
                add(_SCALARS[item])
            else:
                _json(item, inner, parts)
        add("\n" + pad + "}")
    elif kind is list or kind is Stream:
        inner = pad + "    "
        lead = "[\n" + inner
        for item in value:
            add(lead)
            lead = ",\n" + inner
            _json(item, inner, parts)
            parts.spill()
        add("[]" if lead[0] == "[" else "\n" + pad + "]")
    elif value is None or value is True or value is False:
        add(_SCALARS[value])
    elif kind is int:
        add(int.__repr__(value))
    else:
        add(json.dumps(value))  # floats (and their inf/nan) as json writes them


def write_yaml(document: Any, write: Callable[[str], None]) -> None:
    """document as block YAML, as yaml.safe_load reads it back, through write, in chunks.

    Written here, not by PyYAML: its representer makes a node of every value in Python
    (12.6 s for a 5000-instance describe). The layout is PyYAML's (two-space indent, lists
    not indented under their key); strings are plain where PyYAML's own resolver reads them
    back as the same string, else single-quoted, else double-quoted with escapes for anything
    outside printable ASCII. Long strings are not folded.
    """
    parts = _Parts(write)
    if _nonempty(document) and isinstance(document, dict | list | Stream):
        _block(document, "", "", parts)
    else:
        parts.add(_flow(document) + "\n")
    parts.flush()


def _nonempty(value: Any) -> bool:
    """Whether a container has anything in it; a Stream is asked by making its first item."""
    if isinstance(value, Stream):
        return value.peek()
    return bool(value)


def _block(value: Any, first: str, rest: str, parts: _Parts) -> None:
    """A non-empty mapping or sequence, its first line after first, the others after rest."""
    add = parts.pieces.append
    if type(value) is dict:
        for key, item in value.items():
            name = _string(key) if type(key) is str else _flow(key)
            if len(name) > _LONGEST_KEY:  # past what YAML reads as a plain key
                parts.add(_indented(_dump({key: materialized(item)}), first, rest))
            elif type(item) is dict and item:
                add(first + name + ":\n")
                _block(item, rest + "  ", rest + "  ", parts)
            elif (type(item) is list or type(item) is Stream) and _nonempty(item):
                add(first + name + ":\n")
                _block(item, rest, rest, parts)  # PyYAML does not indent a list under its key
            else:
                add(first + name + ": " + _flow(item) + "\n")
            first = rest
        return
    for item in value:
        kind = type(item)
        if (kind is dict or kind is list or kind is Stream) and _nonempty(item):
            _block(item, first + "- ", rest + "  ", parts)
        else:
            add(first + "- " + _flow(item) + "\n")
        first = rest
        parts.spill()


def _flow(value: Any) -> str:
    """A scalar, or an empty mapping or sequence, on one line."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None or value is True or value is False:
        return _SCALARS[value]
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return _float(value)
    if kind is dict:
        return "{}"
    return "[]"  # an empty list or Stream (only those reach here)


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value).lower()
    return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text


@functools.lru_cache(maxsize=8192)
def _string(value: str) -> str:
    if not value:
        return "''"
    if not _PRINTABLE_ASCII.fullmatch(value):
        return '"' + _UNPRINTABLE.sub(_escape, value) + '"'
    if _plain(value):
        return value
    return "'" + value.replace("'", "''") + "'"


def _plain(value: str) -> bool:
    """Whether value, written bare, reads back as this string (PyYAML's own rules)."""
    if value[0] == " " or value[-1] == " " or value[0] in _INDICATORS:
        return False
    if value[0] in "-?:" and (len(value) == 1 or value[1] == " "):
        return False
    if ": " in value or " #" in value or value[-1] == ":" or value.startswith(("---", "...")):
        return False
    resolvers = yaml.resolver.Resolver.yaml_implicit_resolvers.get(value[0], ())
    return not any(pattern.match(value) for _, pattern in resolvers)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    return (
        f"\\x{code:02X}"
        if code <= 0xFF
        else f"\\u{code:04X}"
        if code <= 0xFFFF
        else f"\\U{code:08X}"
    )


# Longer keys need YAML's explicit "? " form, left to PyYAML.
_LONGEST_KEY = 1000
_PRINTABLE_ASCII = re.compile("[\x20-\x7e]+")
_UNPRINTABLE = re.compile('[^\x20-\x7e]|["\\\\]')
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\x00": "\\0"}
_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")


def _dump(value: Any) -> str:
    try:
        return _dump_with(_Dumper, value)
    except UnicodeEncodeError:
        # libyaml cannot encode a lone surrogate (hostile text can hold one); PyYAML's own
        # emitter escapes it.
        return _dump_with(yaml.SafeDumper, value)


def _dump_with(dumper: type[yaml.SafeDumper], value: Any) -> str:
    return yaml.dump(
        value, Dumper=dumper, sort_keys=False, default_flow_style=False, width=_NO_FOLD
    )


def _indented(text: str, first: str, rest: str) -> str:
    """PyYAML's text (ending in a newline) with the first line after first, the others after
    rest; an empty line (inside a quoted scalar) stays empty, as PyYAML writes it."""
    lines = text.split("\n")
    inner = [rest + line if line else line for line in lines[1:-1]]
    return "\n".join([first + lines[0], *inner, lines[-1]])
