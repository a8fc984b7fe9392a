"""Text from a cluster or a dump, made safe for a terminal.

Names, labels and condition messages are written by people and controllers we do not control. A
raw ESC starts an escape sequence (OSC sets the window title or writes the clipboard, CSI clears
the screen), other C0/C1 controls move the cursor, bidirectional overrides reorder what is shown,
and a lone surrogate cannot even be encoded. Text output escapes all of them visibly; JSON and
YAML need nothing, as both encoders write ASCII with escapes.
"""

from __future__ import annotations

import functools
import re

# C0 and C1 controls, DEL, soft hyphen, bidirectional marks and overrides, zero-width and
# invisible characters, line/paragraph separators, BOM, interlinear annotations, surrogates and
# the Unicode tag block (invisible ASCII look-alikes).
_UNSAFE = (
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f]"
)
# What scrub() escapes: the same less the newline and the tab, which lay text out and command
# nothing (`list -o jsonpath='{"\t"}'` writes tabs, as kubectl does).
_UNSAFE_IN_OUTPUT = _UNSAFE.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f")
# The only escape sequences this tool writes itself: colorama's red, green, yellow and reset.
_OWN_COLOUR = "\x1b\\[(?:0|31|32|33)m"


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled at first need: most output is printable and never needs them (--help least)."""
    return re.compile(source)


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\t\n":
        return " "  # whitespace, not a threat: the wrapping renderers fold it anyway
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code <= 0xFF
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else f"\\U{code:08x}"
    )


def escape(text: str) -> str:
    """A string read from a cluster, for a line of text output: controls shown as \\xNN."""
    if text.isprintable():
        return text
    return _pattern(_UNSAFE).sub(_visible, text)


def scrub(text: str) -> str:
    """The last guard before a terminal, over whole output: newlines, tabs and this tool's own
    colour codes stay; any other control character that got this far is escaped."""
    if text.isprintable() or not _pattern(_UNSAFE_IN_OUTPUT).search(text):
        return text
    own = _pattern(_OWN_COLOUR)
    kept, codes = own.split(text), own.findall(text)
    parts = [_controls_shown(kept[0])]
    for code, rest in zip(codes, kept[1:], strict=True):
        parts += [code, _controls_shown(rest)]
    return "".join(parts)


def uncoloured(text: str) -> str:
    """scrub() for the lines this tool never colours (error:, hint:): a colour code there came
    from a name the user typed or a server sent, and is shown, not obeyed or dropped."""
    return text if text.isprintable() else _controls_shown(text)


def _controls_shown(text: str) -> str:
    return _pattern(_UNSAFE_IN_OUTPUT).sub(_visible, text)
