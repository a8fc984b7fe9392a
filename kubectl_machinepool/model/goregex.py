"""Regexes written for Go (the core manager's sync flags), run here only when that is safe.

Go's RE2 engine runs any pattern in linear time; Python's backtracking engine can take
exponential time on a repetition inside a repetition, `(a+)+$`. Such a pattern, read from a
Deployment or a dump anyone may have written, would hang the run, so it is not evaluated.
Backreferences and lookarounds are not RE2 at all: the manager would not have started with one.
"""

from __future__ import annotations

import re
import re._constants as sre  # type: ignore[import-not-found]  # private, stable since 3.11
import re._parser as sre_parse  # type: ignore[import-not-found]
from typing import Any

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_NOT_RE2 = {sre.GROUPREF, sre.GROUPREF_EXISTS, sre.ASSERT, sre.ASSERT_NOT}


def unsafe_reason(pattern: str) -> str | None:
    """Why Python may not run this pattern, or None; compile errors are the caller's to see."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None  # re.compile reports it
    return _walk(list(parsed), repeated=False)


def _walk(items: list[tuple[Any, Any]], *, repeated: bool) -> str | None:
    for op, arg in items:
        if op in _NOT_RE2:
            return "backreferences and lookarounds are not Go regex syntax"
        if op in _REPEATS:
            _low, high, sub = arg
            if repeated and high > 1:
                return "a repetition inside a repetition can take exponential time in Python"
            found = _walk(list(sub), repeated=repeated or high > 1)
        elif op is sre.SUBPATTERN:
            found = _walk(list(arg[-1]), repeated=repeated)
        elif op is sre.ATOMIC_GROUP:
            found = _walk(list(arg), repeated=repeated)
        elif op is sre.BRANCH:
            found = next(
                (f for f in (_walk(list(alt), repeated=repeated) for alt in arg[1]) if f), None
            )
        else:
            found = None
        if found:
            return found
    return None
