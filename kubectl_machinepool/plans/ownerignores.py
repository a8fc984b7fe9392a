"""Fields a GitOps owner is told to leave alone, as its controller matches them: Argo CD's
spec.ignoreDifferences (util/argo/normalizers: group and kind as globs, name and namespace
exact; jsonPointers, and managedFieldsManagers naming this tool's field manager), and Flux's
ignore rules, a Kustomization's spec.ignore and a HelmRelease's spec.driftDetection.ignore
(fluxcd/pkg/ssa jsondiff: JSON pointers, a target of anchored Go regexes and label and annotation
selectors). The upstream examples ignore /spec/replicas for an autoscaler: a scale of such a
pool is not reverted. A jq expression, or a regex Python cannot run safely, matches nothing: the
write is then judged as if no rule were there. Pure.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from kubectl_machinepool.base.apiversion import group_of, version_of
from kubectl_machinepool.base.errors import MachinePoolError
from kubectl_machinepool.base.fields import (
    RawObject,
    dig,
    items,
    mapping,
    string_map,
    strings,
    text,
)
from kubectl_machinepool.model.goregex import unsafe_reason
from kubectl_machinepool.model.ownership import OWN_MANAGER
from kubectl_machinepool.model.selector import matches

# Rules looked at per owner (a real one holds a handful), and the longest pattern matched.
_RULES = 64
_PATTERN = 256


def pointer(path: tuple[str, ...]) -> str:
    """The field as a JSON pointer (RFC 6901): /metadata/annotations/cluster.x-k8s.io~1paused."""
    return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in path)


def _covers(pointers: tuple[str, ...], path: tuple[str, ...]) -> str | None:
    """The pointer that covers the field: itself, or one of the objects holding it."""
    field = pointer(path)
    return next((p for p in pointers if field == p or field.startswith(p + "/")), None)


def argo_ignored(app: RawObject, written: RawObject, path: tuple[str, ...]) -> str | None:
    """Which of the Application's spec.ignoreDifferences covers the field, or None."""
    api_version = text(written.get("apiVersion")) or ""
    meta = mapping(written.get("metadata"))
    for index, rule in enumerate(items(dig(app, "spec", "ignoreDifferences"))[:_RULES]):
        name, namespace = text(rule.get("name")), text(rule.get("namespace"))
        if not (
            _glob(text(rule.get("group")) or "", group_of(api_version))
            and _glob(text(rule.get("kind")) or "", text(written.get("kind")) or "")
            and name in (None, "", meta.get("name"))
            and namespace in (None, "", meta.get("namespace"))
        ):
            continue
        where = f"spec.ignoreDifferences[{index}]"
        if found := _covers(strings(rule.get("jsonPointers")), path):
            return f"{where} jsonPointers {found}"
        if OWN_MANAGER in strings(rule.get("managedFieldsManagers")):
            return f"{where} managedFieldsManagers {OWN_MANAGER}"
    return None


def _glob(pattern: str, value: str) -> bool:
    """Argo CD's glob (`*` any run): fnmatch's atomic groups bound its time, the length its
    memory."""
    return len(pattern) <= _PATTERN and fnmatchcase(value, pattern)


def flux_ignored(rules: Any, where: str, written: RawObject, path: tuple[str, ...]) -> str | None:
    """Which of a Flux owner's ignore rules (at `where`) covers the field, or None."""
    for index, rule in enumerate(items(rules)[:_RULES]):
        target = rule.get("target")
        if target is not None and not _targets(mapping(target), written):
            continue
        if found := _covers(strings(rule.get("paths")), path):
            return f"{where}[{index}] {found}"
    return None


def _targets(target: dict[str, Any], written: RawObject) -> bool:
    api_version = text(written.get("apiVersion")) or ""
    meta = mapping(written.get("metadata"))
    values = {
        "group": group_of(api_version),
        "version": version_of(api_version),
        "kind": text(written.get("kind")) or "",
        "name": text(meta.get("name")) or "",
        "namespace": text(meta.get("namespace")) or "",
    }
    for key, value in values.items():
        wanted = text(target.get(key))
        if wanted and not _go_matches(wanted, value):
            return False
    for key, field in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        selector = text(target.get(key))
        try:
            if selector and not matches(selector, string_map(meta.get(field))):
                return False
        except MachinePoolError:
            return False  # a selector the controller would refuse selects nothing
    return True


def _go_matches(pattern: str, value: str) -> bool:
    """fluxcd/pkg anchors each selector regex (^...$); one Python cannot run safely, or that
    does not compile, matches nothing."""
    if len(pattern) > _PATTERN or unsafe_reason(pattern) is not None:
        return False
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return False
