"""Word wrapping by the columns text takes on a terminal, not by its length in characters.

textwrap counts characters: a colour code in an indent (delete-machine's coloured "ok") then
takes columns it never shows, and a CJK character, which takes two, counts as one. This wraps
the way textwrap.wrap does for the options the renderers use (break_on_hyphens off, whitespace
dropped at line ends), so plain ASCII text wraps exactly as it always did.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Any SGR sequence, not only ours: it takes no columns wherever it came from.
_COLOUR = re.compile("\x1b\\[[0-9;]*m")
# textwrap splits on ASCII whitespace only, so a no-break space keeps its words together.
_CHUNKS = re.compile("([\t\n\x0b\x0c\r ]+)")
_SPACES = str.maketrans("\t\n\x0b\x0c\r", "     ")
# A terminal narrower than this (or one that reports 0 columns) is taken as this wide: the
# indents alone would not fit, and every word would be cut to a character per line.
NARROWEST = 40


def line_width(width: int | None, default: int) -> int:
    """The width to wrap at: default without a terminal's width, else that, but NARROWEST."""
    return default if width is None else max(width, NARROWEST)


# A tree row is ASCII but for a few glyphs (├─, ✓): only those are looked up.
_NOT_ASCII = re.compile("[^\x00-\x7f]+")


@functools.lru_cache(maxsize=4096)
def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def visible_width(text: str) -> int:
    """Columns on a terminal: colour codes take none, wide (CJK) characters two."""
    plain = _COLOUR.sub("", text) if "\x1b" in text else text
    width = len(plain)
    if plain.isascii():
        return width
    for run in _NOT_ASCII.findall(plain):
        width += sum(map(_char_width, run)) - len(run)
    return width


def _width_within(text: str, limit: int) -> int:
    """visible_width, but a wide text is measured only until it passes limit: a 200 KB word
    must not be scanned again for every line cut from it."""
    if text.isascii() and "\x1b" not in text:
        return len(text)
    if "\x1b" in text:
        return visible_width(text)
    used = 0
    for char in text:
        used += _char_width(char)
        if used > limit:
            break
    return used


def _cut(chunk: str, columns: int) -> tuple[str, str]:
    """The longest head of chunk within columns, but at least one character."""
    used = 0
    for index, char in enumerate(chunk):
        used += _char_width(char)
        if used > columns:
            return chunk[: max(index, 1)], chunk[max(index, 1) :]
    return chunk, ""


def _blank(chunk: str) -> bool:
    return chunk.strip() == ""


def wrap(
    text: str, width: int, first: str = "", rest: str = "", *, break_long_words: bool = False
) -> list[str]:
    """Lines of at most width columns, first/rest indents included; [] for blank text.

    A word wider than a whole line stands alone on its line (or is cut, with break_long_words),
    so lines may be wider than width only for such a word."""
    chunks = [c for c in _CHUNKS.split(text.translate(_SPACES)) if c]
    chunks.reverse()
    lines: list[str] = []
    while chunks:
        indent = rest if lines else first
        room = width - visible_width(indent)
        # Whitespace that a break falls on goes; what leads the text stays.
        if lines and _blank(chunks[-1]):
            chunks.pop()
        line: list[str] = []
        used = 0
        while chunks:
            columns = _width_within(chunks[-1], room - used)
            if used + columns > room:
                break
            used += columns
            line.append(chunks.pop())
        if chunks and _width_within(chunks[-1], room) > room:
            _long_word(chunks, line, room - used if room >= 1 else 1, break_long_words)
        if line and _blank(line[-1]):
            line.pop()
        if line:
            lines.append(indent + "".join(line))
    return lines


def _long_word(chunks: list[str], line: list[str], space: int, cut: bool) -> None:
    """A word wider than a line: cut it to the space left, or give it a line of its own."""
    if not chunks[-1]:
        # What a cut left over; textwrap loops for ever on it when the indent is wider than
        # the width.
        chunks.pop()
    elif cut and space <= 0:
        # textwrap appends an empty cut here, which is what the end-of-line cleanup then
        # drops, so a space before it stays: kept, so plain text wraps as it always did.
        line.append("")
    elif cut:
        head, tail = _cut(chunks[-1], space)
        line.append(head)
        chunks[-1] = tail  # even when empty, as textwrap does: the next line drops it
    elif not line:
        line.append(chunks.pop())
