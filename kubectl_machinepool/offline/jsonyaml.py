"""YAML read as the API server reads it: into what JSON can hold, and nothing else.

Kubernetes turns YAML into JSON before it looks at it, so an object only ever holds mappings
with string keys, lists, strings, finite numbers, booleans and null. PyYAML's SafeLoader also
makes dates, timestamps, bytes (!!binary), sets (!!set), ordered pairs (!!omap, !!pairs), keys
that are numbers, booleans or null, and NaN or infinity: every later stage (JSON output, sorting
keys, string methods on keys) would have to expect them. Here they never get that far:

- a timestamp or date, plain or tagged, stays the text it was written as;
- a plain base-60 number (`1:30`) stays text too;
- a key that is not a string becomes the text JSON would give it (`true`, `1`, `null`);
- bytes, sets, ordered pairs, non-finite numbers and explicitly tagged base-60 numbers are
  refused with one error line, as no `kubectl get -o yaml` writes them.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import yaml

_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BASE_60 = "(?::[0-5]?[0-9])+"
_REFUSED = {
    "tag:yaml.org,2002:binary": "bytes (!!binary)",
    "tag:yaml.org,2002:set": "a set (!!set)",
    "tag:yaml.org,2002:omap": "ordered pairs (!!omap)",
    "tag:yaml.org,2002:pairs": "ordered pairs (!!pairs)",
}


class NotJSON(yaml.YAMLError):
    """A value JSON cannot hold: the dump is refused, as the API server would refuse it."""


def _key(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(_finite(value))
    raise NotJSON(f"a mapping key that is not text ({type(value).__name__})")


def _not_base_60(node: yaml.ScalarNode) -> None:
    if ":" in str(node.value):  # only an explicit !!int or !!float gets here with one
        raise NotJSON(f"a base-60 number ({node.tag}), which JSON does not have")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise NotJSON(f"a number JSON cannot hold ({value})")
    return value


@functools.cache
def json_loader(base: type) -> type:
    """SafeLoader (C or Python: base), less what JSON cannot hold (module docstring)."""

    class Loader(base):  # type: ignore[misc]
        def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[str, Any]:
            # Keys become text as each is read: in a Python dict True and 1 would be one key.
            if not isinstance(node, yaml.MappingNode):
                raise NotJSON(f"expected a mapping, found {type(node).__name__}")
            self.flatten_mapping(node)  # merge keys (<<), as SafeLoader reads them
            return {
                _key(self.construct_object(key, deep=deep)): self.construct_object(value, deep)
                for key, value in node.value
            }

        def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
            _not_base_60(node)
            return super().construct_yaml_int(node)  # type: ignore[no-any-return]

        def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
            _not_base_60(node)
            return _finite(super().construct_yaml_float(node))

        def construct_yaml_timestamp_as_text(self, node: yaml.ScalarNode) -> str:
            return str(self.construct_scalar(node))

        def refuse(self, node: yaml.Node) -> None:
            raise NotJSON(f"{_REFUSED[node.tag]}, which JSON and Kubernetes objects cannot hold")

    Loader.yaml_implicit_resolvers = _resolvers(base)
    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)
    Loader.add_constructor(_TIMESTAMP, Loader.construct_yaml_timestamp_as_text)
    for tag in _REFUSED:
        Loader.add_constructor(tag, Loader.refuse)
    return Loader


def _without_base_60(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """YAML 1.1's int or float pattern less its base-60 form (`1:30` is 90 there): Kubernetes'
    YAML reads `1:30` as text, and reading a long one costs time quadratic in its length."""
    lines = pattern.pattern.removeprefix("^(?:").removesuffix(")$").split("\n")
    kept = [line.strip().removeprefix("|") for line in lines if _BASE_60 not in line]
    return re.compile("^(?:" + "|".join(kept) + ")$", pattern.flags)


def _resolvers(base: Any) -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """Plain scalars that look like dates or base-60 numbers stay text, as the API server
    reads them."""
    found = {}
    for first, resolvers in base.yaml_implicit_resolvers.items():
        found[first] = [
            (tag, _without_base_60(pattern) if _BASE_60 in pattern.pattern else pattern)
            for tag, pattern in resolvers
            if tag != _TIMESTAMP
        ]
    return found
