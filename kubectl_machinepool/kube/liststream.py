"""A LIST answer read item by item as its bytes arrive, never held whole.

json.loads needs the whole answer, and makes every object of it before the first can be made
smaller (compact.py): a list of 5000 Machines read in one answer peaked at more than twice the
memory the pool needs. Here the answer's top-level object is walked key by key, in whatever order
the server wrote them (custom resources sort them: "items" before "metadata"); each element of
"items" is decoded by the C scanner as soon as its text is complete and handed on at once.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

_SPACE = " \t\n\r"
_AFTER_NUMBER = ",]}" + _SPACE
_DECODE = json.JSONDecoder().raw_decode
# Text read before a value is tried again: a receive is often one TLS record (16 KiB), and each
# try at a value cut short scans it in vain; trying per MiB made a 30 MB answer 2x cheaper.
READ_AHEAD = 1 << 20
BLOCK = 256 << 10


# A key is the only place these bytes can be: inside a JSON string every quote follows a
# backslash.
_MANAGED_FIELDS = b',"managedFields":['
_ESCAPE = re.compile(rb"\\.", re.DOTALL)


class NotAList(ValueError):
    """The answer is not a JSON object, or not valid JSON."""


class _Text:
    """The answer decoded so far, and a position in it; reads on when a value runs past it."""

    def __init__(self, chunks: Iterator[bytes], largest: int) -> None:
        self._chunks = chunks
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._largest = largest
        self.buf = ""
        self.pos = 0
        self.done = False

    def more(self, at_least: int = 0) -> bool:
        """Read the next chunk, and on until at_least characters are unread; False at the end
        of the answer."""
        if self.done:
            return False
        pieces = [self.buf[self.pos :]]  # what is read is forgotten: the buffer stays small
        unread = len(pieces[0])
        self.pos = 0
        try:
            while True:
                chunk = next(self._chunks, None)
                try:
                    piece = self._decoder.decode(chunk or b"", final=chunk is None)
                except UnicodeDecodeError as err:
                    raise NotAList("the answer is not UTF-8") from err
                pieces.append(piece)
                unread += len(piece)
                if unread > self._largest:
                    raise NotAList(
                        f"a value of the answer is larger than {self._largest >> 20} MiB"
                    )
                if chunk is None:
                    self.done = True
                    return True
                if unread >= at_least:
                    return True
        finally:
            self.buf = "".join(pieces)

    def peek(self) -> str:
        """The next character that is not white space ('' at the end)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise NotAList(f"expected {char!r} at {self.pos}")
        self.pos += 1

    def value(self) -> Any:
        """The JSON value starting here: decoded once its text is all there."""
        self.peek()
        while True:
            try:
                value, end = _DECODE(self.buf, self.pos)
            except json.JSONDecodeError:
                # Twice as much text before the next try: a large value costs a few tries,
                # not one per chunk.
                if self.more(max(2 * (len(self.buf) - self.pos), READ_AHEAD)):
                    continue
                raise NotAList(f"invalid JSON at {self.pos}") from None
            except RecursionError:
                raise NotAList("nested too deeply") from None
            # A number is over only where something else starts ("100." may be 100.5).
            if type(value) in (int, float) and not self.done:
                after = self.buf[end : end + 1]
                if (not after or after not in _AFTER_NUMBER) and self.more():
                    continue
            self.pos = end
            return value


def read_list(chunks: Iterator[bytes], item: Callable[[Any], None], largest: int) -> dict[str, Any]:
    """Walk a list answer: each element of "items" goes to item() as it is decoded; what is
    returned is the rest of the top-level object ("metadata" and the rest, without "items").
    largest bounds the text of one value (an object of the list, or another key's value)."""
    text = _Text(chunks, largest)
    rest: dict[str, Any] = {}
    text.expect("{")
    if text.peek() == "}":
        text.pos += 1
        return rest
    while True:
        key = text.value()
        if not isinstance(key, str):
            raise NotAList("a key of the answer is not a string")
        text.expect(":")
        if key == "items" and text.peek() == "[":
            text.pos += 1
            _items(text, item)
        else:
            rest[key] = text.value()
        if _last(text, "}"):
            break
    if text.peek() != "":
        raise NotAList("text after the answer")
    return rest


def _items(text: _Text, item: Callable[[Any], None]) -> None:
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        item(text.value())
        if _last(text, "]"):
            return


def _last(text: _Text, end: str) -> bool:
    """After a member: True at the end of its object or array, False at a comma."""
    following = text.peek()
    text.pos += 1
    if following not in (",", end) or not following:
        raise NotAList(f"expected ',' or {end!r} at {text.pos - 1}")
    return following == end


def without_managed_fields(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The answer's bytes with every `,"managedFields":[...]` left out before anything is
    decoded: they are more than half of a Machine's or a Node's text, and two thirds of the
    time json takes to decode it (0.28 s instead of 0.85 s for 5000 Machines). Objects whose
    managedFields come first, or are written with spaces, keep them.

    The array's end is its first ']' outside a string: managedFields entries hold objects and
    strings only (FieldsV1 is a trie of objects). Escapes are dropped before quotes are counted,
    so a '"' or ']' inside a string is no end; a server that nests arrays there gets its
    answer cut wrongly, which the decoder then rejects as invalid JSON.
    """
    skipping = _Skipped()
    held = b""  # the last bytes, when they may be the start of the pattern
    for block in _blocks(chunks):
        data = held + block if held else block
        held = b""
        pieces: list[bytes] = []
        pos = 0
        while True:
            if skipping.active:
                end = skipping.end_in(data, pos)
                if end < 0:
                    break
                pos = end + 1
            found = data.find(_MANAGED_FIELDS, pos)
            if found < 0:
                keep = max(pos, len(data) - len(_MANAGED_FIELDS) + 1)
                pieces.append(data[pos:keep])
                held = data[keep:]
                break
            pieces.append(data[pos:found])
            skipping.start()
            pos = found + len(_MANAGED_FIELDS)
        if out := b"".join(pieces):
            yield out
    if held:
        yield held


def _blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The chunks joined into blocks of BLOCK bytes or more: a server sends a LIST in chunks of
    2-4 KiB, and the cut costs per block (0.33 s for 5000 Machines per 3 KB, 0.07 s per MiB)."""
    pieces: list[bytes] = []
    size = 0
    for chunk in chunks:
        pieces.append(chunk)
        size += len(chunk)
        if size >= BLOCK:
            yield b"".join(pieces)
            pieces, size = [], 0
    if pieces:
        yield b"".join(pieces)


class _Skipped:
    """Where a skipped array is: how many quotes so far (odd: inside a string), and whether the
    last byte seen was a backslash still escaping the next one."""

    def __init__(self) -> None:
        self.active = False
        self.quotes = 0
        self.escaping = False

    def start(self) -> None:
        self.active, self.quotes, self.escaping = True, 0, False

    def end_in(self, data: bytes, pos: int) -> int:
        """The index of the array's closing ']' in data from pos, or -1 (all of it skipped)."""
        while True:
            bracket = data.find(b"]", pos)
            stop = len(data) if bracket < 0 else bracket
            segment = data[pos:stop]
            if self.escaping and segment:
                segment, self.escaping = segment[1:], False
            if b"\\\\" in segment:  # an escaped backslash: pair the escapes up one by one
                segment = _ESCAPE.sub(b"", segment)
            if segment.endswith(b"\\"):  # escapes the byte after it
                segment, self.escaping = segment[:-1], True
            # With no escaped backslash left, every backslash-quote is an escaped quote.
            self.quotes += segment.count(b'"') - segment.count(b'\\"')
            if bracket < 0:
                return -1
            if self.escaping:
                self.escaping = False
            elif self.quotes % 2 == 0:
                self.active = False
                return bracket
            pos = bracket + 1
