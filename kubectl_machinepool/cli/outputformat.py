"""-o as kubectl reads it, where a command has template formats (jsonpath=, custom-columns=)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click
from click.shell_completion import CompletionItem


class OutputFormat(click.ParamType[str, Any]):
    """-o as kubectl reads it: a format's name, or a template format with its template after
    `=` (jsonpath=TEMPLATE). A TAB offers the names, `jsonpath=` and `custom-columns=`."""

    name = "format"

    def __init__(self, formats: Sequence[str], templates: Mapping[str, str]) -> None:
        self.formats = list(formats)
        self.templates = dict(templates)
        self.spelled = [*self.formats, *(f"{t}={what}" for t, what in self.templates.items())]

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:  # noqa: ARG002
        return "FORMAT"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        name, _, template = text.partition("=")
        if name in self.templates and not template:
            if name.startswith("custom-columns"):
                self.fail(f"{name} format specified but no custom columns given", param, ctx)
            self.fail("template format specified but no template given", param, ctx)
        if name not in self.templates and text not in self.formats:
            self.fail(f"{text!r} is not one of {', '.join(self.spelled)}", param, ctx)
        return text

    def shell_complete(
        self,
        ctx: click.Context,  # noqa: ARG002
        param: click.Parameter,  # noqa: ARG002
        incomplete: str,
    ) -> list[CompletionItem]:
        offered = [*self.formats, *(f"{t}=" for t in self.templates if not t.endswith("-file"))]
        return [CompletionItem(value) for value in offered if value.startswith(incomplete)]
