"""Kubernetes label selectors, for reading dumps offline the way the API server filters live,
and the selection of pools a command works on."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.base.fields import RawObject, dig, mapping, scalar, string_map
from kubectl_machinepool.base.records import record

_SET = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s+\((?P<values>[^()]*)\)\s*$")
_EQUALITY = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*$")
_EXISTS = re.compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*$")


def _requirements(selector: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p.strip()]


def _match_one(requirement: str, labels: Mapping[str, str]) -> bool:
    if found := _SET.match(requirement):
        values = {v.strip() for v in found["values"].split(",") if v.strip()}
        inside = labels.get(found["key"]) in values
        return inside if found["op"] == "in" else not inside
    if found := _EQUALITY.match(requirement):
        equal = labels.get(found["key"]) == found["value"]
        return not equal if found["op"] == "!=" else equal
    if found := _EXISTS.match(requirement):
        present = found["key"] in labels
        return not present if found["neg"] else present
    raise UsageError(
        f"invalid label selector {requirement.strip()!r}",
        hint="use key=value, key!=value, key in (a,b), key notin (a,b), key or !key",
    )


def matches(selector: str, labels: Mapping[str, str]) -> bool:
    """Whether labels satisfy every comma-separated requirement of the selector."""
    return all(_match_one(r, labels) for r in _requirements(selector))


def _holds(expression: object, labels: Mapping[str, str]) -> bool:
    if not isinstance(expression, Mapping):
        return False
    key, operator = scalar(expression.get("key")), expression.get("operator")
    if key is None:
        return False  # the API server rejects such a selector: never matches on a guess
    raw_values = expression.get("values")
    values = {scalar(v) for v in raw_values} if isinstance(raw_values, list) else set()
    # As metav1.LabelSelectorAsSelector: In and NotIn need values, Exists and DoesNotExist
    # take none; a selector that breaks this is an error upstream and selects nothing.
    if bool(values) != (operator in ("In", "NotIn")):
        return False
    present = key in labels
    if operator in ("In", "NotIn"):
        inside = present and labels[key] in values
        return inside if operator == "In" else not inside
    if operator in ("Exists", "DoesNotExist"):
        return present if operator == "Exists" else not present
    return False  # an operator the API server would reject never matches on a guess


def selector_matches(selector: Mapping[str, object], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector (matchLabels, matchExpressions) against labels; {} matches all."""
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return False
    return all(
        scalar(v) is not None and labels.get(scalar(k) or "") == scalar(v)
        for k, v in match_labels.items()
    ) and all(_holds(e, labels) for e in expressions)


@record
class Selection:
    """Which pools to describe; applied to live and offline snapshots alike."""

    namespace: str | None = None
    names: tuple[str, ...] = ()
    cluster: str | None = None
    selector: str | None = None


def asked_selection(
    namespace: str | None = None,
    names: tuple[str, ...] = (),
    cluster: str | None = None,
    selector: str | None = None,
) -> Selection:
    """The selection a user's flags make, refused as kubectl refuses names beside -l: both
    would AND, and a named pool the selector leaves out would be "not found" though it is
    there."""
    if names and selector:
        raise UsageError(
            "name cannot be provided when a selector is specified",
            hint="give pool names or -l SELECTOR, not both",
        )
    return Selection(namespace, names, cluster, selector)


def selected(raw: RawObject, selection: Selection) -> bool:
    """Whether a MachinePool is in the selection (namespace, names, cluster, label selector)."""
    meta = mapping(raw.get("metadata"))
    if selection.namespace is not None and meta.get("namespace") != selection.namespace:
        return False
    if selection.names and meta.get("name") not in selection.names:
        return False
    if selection.cluster and dig(raw, "spec", "clusterName") != selection.cluster:
        return False
    labels = string_map(meta.get("labels"))
    return not selection.selector or matches(selection.selector, labels)
