"""JSON and YAML written piece by piece, so a pool of thousands of instances is never one string.

json.dumps with indent runs Python's pure encoder (several times slower than the C one) and
returns the whole text at once; yaml.safe_dump builds a node for every value first. Here a
document may hold Stream values (instance lists produced one at a time) and the text comes out
in chunks of some PIECES pieces, byte for byte what json.dumps(indent=4) and
yaml.safe_dump(sort_keys=False) give for the same document with the streams made lists
(YAML without folding long strings).
"""

from __future__ import annotations

import json
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
    """yaml.safe_dump(document, sort_keys=False), through write, in chunks: the parts holding a
    Stream are laid out here, everything else is dumped by PyYAML one item at a time."""
    parts = _Parts(write)
    _yaml(document, "", "", parts.add)
    parts.flush()


def _dump(value: Any) -> str:
    # No folding of long strings: PyYAML folds at a column counted from where each piece
    # starts, which pieces dumped apart cannot agree on; a message on one line greps better.
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


def _has_stream(value: Any) -> bool:
    if isinstance(value, Stream):
        return True
    if isinstance(value, dict):
        return any(_has_stream(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_stream(v) for v in value)
    return False


def _indented(text: str, first: str, rest: str) -> str:
    """PyYAML's text (ending in a newline) with the first line after first, the others after
    rest; an empty line (inside a quoted scalar) stays empty, as PyYAML writes it."""
    lines = text.split("\n")
    inner = [rest + line if line else line for line in lines[1:-1]]
    return "\n".join([first + lines[0], *inner, lines[-1]])


def _yaml(value: Any, first: str, rest: str, add: Callable[[str], None]) -> None:
    """A mapping or sequence as block YAML: its first line after first, the others after rest."""
    if not _has_stream(value):
        add(_indented(_dump(value), first, rest))
        return
    if isinstance(value, dict):
        for key, item in value.items():
            head = _dump({key: None})
            # A key YAML cannot write on one line ("? " form) is not worth streaming under.
            simple = head.endswith(": null\n") and head.count("\n") == 1
            if not (simple and _has_stream(item) and _items(item)):
                add(_indented(_dump({key: materialized(item)}), first, rest))
            else:
                add(first + head.removesuffix(" null\n") + "\n")
                # PyYAML indents a mapping under its key, not a sequence.
                inner = rest + "  " if isinstance(item, dict) else rest
                _yaml(item, inner, inner, add)
            first = rest
        return
    for item in value:
        if isinstance(item, dict | list | Stream) and _items(item):
            _yaml(item, first + "- ", rest + "  ", add)
        else:
            add(_indented(_dump([materialized(item)]), first, rest))
        first = rest


def _items(value: Any) -> bool:
    """Whether a container has anything in it; a Stream is asked by making its first item."""
    if isinstance(value, Stream):
        return value.peek()
    return bool(value)
