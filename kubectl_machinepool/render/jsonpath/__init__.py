"""kubectl's JSONPath templates (`kubectl get -o jsonpath=…`), evaluated over plain JSON data.

kubectl's dialect (k8s.io/client-go/util/jsonpath) is not RFC 9535's JSONPath, and no Python
library implements it: text around `{…}` actions, `range`/`end`, string literals, filters,
unions, slices, and its own output rules (several results joined by a space, strings bare, maps
and lists as compact JSON). This module follows it, quirks included, so that a template written
for `kubectl get` prints the same text here (tests/integration/test_list_output.py compares the
two byte for byte). Where kubectl's output is random (a map's entries come in Go's map order),
this one takes the keys in sorted order. Missing fields print nothing, as `kubectl get` has it
(allowMissingKeys).

Template and data are both untrusted: parsing never recurses per character, and one rendering
counts the values it makes and the text it prints, stopping with a TemplateError past
MAX_VALUES or MAX_OUTPUT.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from kubectl_machinepool.base.records import record
from kubectl_machinepool.base.safetext import escape
from kubectl_machinepool.render.jsonpath.evaluate import Run
from kubectl_machinepool.render.jsonpath.limits import Budget, Failed, TemplateError
from kubectl_machinepool.render.jsonpath.printing import as_read, go_float, go_json, printed, sprint
from kubectl_machinepool.render.jsonpath.syntax import HINT, Action, Parser, Syntax, Text

# What the rest of the tool and its tests use.
__all__ = [
    "Budget",
    "Template",
    "TemplateError",
    "as_read",
    "go_float",
    "go_json",
    "parse",
    "relaxed",
    "sprint",
]

_T = TypeVar("_T")


@record
class Template:
    """A parsed template; source is what the user wrote."""

    source: str
    nodes: tuple[Text | Action, ...]

    def results(self, data: Any, budget: Budget | None = None) -> list[list[Any]]:
        """What each top-level piece found, the way kubectl groups it before printing."""
        return self._run(lambda run: run.results(0, data), budget or Budget())

    def render(self, data: Any) -> str:
        """The text kubectl prints for this template over data."""
        budget = Budget()
        return self._run(lambda run: printed(run.results(0, data), budget), budget)

    def _run(self, work: Callable[[Run], _T], budget: Budget) -> _T:
        try:
            return work(Run(self.nodes, budget))
        except Failed as failed:
            raise TemplateError(
                f'error executing jsonpath "{escape(self.source)}": {escape(str(failed))}',
                hint="the template runs over a List of MachinePools, each as the API "
                "gave it plus the summary: {.items[*].summary.replicas.ready}",
            ) from None
        except RecursionError:
            raise TemplateError(
                f'error executing jsonpath "{escape(self.source)}": the data nests too deeply'
            ) from None


def parse(source: str) -> Template:
    """A template as kubectl parses it; TemplateError says why it does not parse."""
    try:
        return Template(source, tuple(Parser(source).template()))
    except Syntax as why:
        raise TemplateError(
            f"error parsing jsonpath {escape(source)}, {escape(str(why))}", hint=HINT
        ) from None
    except RecursionError:
        raise TemplateError(
            f"error parsing jsonpath {escape(source)}, it nests too deeply", hint=HINT
        ) from None


_RELAXED = re.compile(r"\{\.?([^{}]+)\}|\.?([^{}]+)")


def relaxed(path: str) -> str:
    """kubectl's RelaxedJSONPathExpression: name.x, .name.x, {name.x} all become {.name.x}."""
    if not path:
        return path
    match = _RELAXED.fullmatch(path)
    if match is None:
        raise TemplateError(
            f"unexpected path string {escape(path)}, expected a 'name1.name2' or '.name1.name2' "
            "or '{name1.name2}' or '{.name1.name2}'",
            hint="a single field path, e.g. .metadata.name",
        )
    return "{." + (match.group(1) or match.group(2)) + "}"
