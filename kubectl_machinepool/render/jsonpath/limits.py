"""What one rendering may spend, and the errors a template ends in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubectl_machinepool.base.errors import MachinePoolError

# Values one rendering may make, and characters it may print: far past any real list (5000
# pools printed whole with {.items} is some 25 MB), short of a hang or an exhausted memory.
MAX_VALUES = 5_000_000
MAX_OUTPUT = 128 * 2**20
# Ranges inside one another: each is a call deeper.
MAX_NESTING = 64

_NARROW = "narrow the template, or select fewer pools with -n or -l"


class TemplateError(MachinePoolError):
    """A template that does not parse, or that fails on the data (as kubectl would)."""


class Syntax(Exception):
    """Why a template does not parse, in the words of kubectl's parser."""


class Failed(Exception):
    """Why evaluation stopped; values: what kubectl's step returns with the error (an
    existence filter still counts them)."""

    def __init__(self, message: str, values: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.values = list(values)


class Budget:
    """What one rendering has spent, across every template it runs (custom columns run one
    per column and item). Past it, a TemplateError: no filter swallows it as it does Failed."""

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
