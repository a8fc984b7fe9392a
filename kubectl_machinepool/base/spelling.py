"""kubectl's "Did you mean this?": the spellings nearest a word among those that exist."""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> list[str]:
    """The choices word begins (a few), else the one most like it (flags compared without their
    dashes, which every one shares)."""
    choices = list(choices)
    bare = word.lstrip("-")
    started = [c for c in choices if bare and c.lstrip("-").startswith(bare)]
    if started:
        return started[:3]
    import difflib  # only on a miss: every run imports this module, few misspell

    names = {c.lstrip("-"): c for c in choices}
    return [names[n] for n in difflib.get_close_matches(bare, list(names), n=1)]


def did_you_mean(near: Iterable[str]) -> str | None:
    """The hint naming them, None when there are none."""
    near = list(near)
    return f"did you mean {' or '.join(near)}?" if near else None
