"""The Kubernetes version an infra pool's own fields target (kubernetes-sigs/cluster-api#7248).

A MachinePool keeps its Kubernetes version in spec.template.spec.version, while the image (and
for some providers a version of their own) sits in the infra pool: an upgrade is two writes, and
between them, or when only one is made, the provider rolls a combination nobody asked for. Which
fields name a version, and how, is the provider registry's (providers.VersionField); this module
reads them. Only values that say which Kubernetes release they are for count: a custom image's
version, an AMI id or an AKS node image version do not, so they are never compared.
Pure: raw objects in, targets out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from kubectl_machinepool.base.fields import RawObject, dig, mapping, text
from kubectl_machinepool.base.records import record
from kubectl_machinepool.providers.records import Companion, Provider, VersionField


@record
class Target:
    """A field of the infra pool (or of the object it names) and the version it targets."""

    kind: str
    field: str
    value: str
    version: str  # major.minor[.patch], without a leading v
    # The provider deploys this version, not the MachinePool's.
    deployed: bool


def _values(value: Any, keys: list[str]) -> Iterator[tuple[dict[str, Any], str, str]]:
    """(parent, shown path, value) of each string the path reaches; `[]` crosses a list."""
    key, rest = keys[0], keys[1:]
    listed = key.endswith("[]")
    name = key.removesuffix("[]")
    if not isinstance(value, dict):
        return
    found = value.get(name)
    if not rest:
        if not listed and type(found) is str and found:
            yield value, name, found
        return
    for i, item in enumerate(found if listed and isinstance(found, list) else [found]):
        shown = f"{name}[{i}]" if listed else name
        for parent, path, leaf in _values(item, rest):
            yield parent, f"{shown}.{path}", leaf


def field_targets(kind: str, fields: tuple[VersionField, ...], obj: RawObject) -> list[Target]:
    """The targets of these fields of obj, in the registry's order."""
    found = []
    for field in fields:
        reading = field.reading.read
        for parent, path, value in _values(obj, field.path.split(".")):
            version = reading(value, parent, obj)
            if version is not None:
                found.append(Target(kind, path, value, version, field.deployed))
    return found


def fields_read(fields: Iterable[VersionField]) -> tuple[str, ...]:
    """Every path field_targets reads for these fields."""
    found: list[str] = []
    for field in fields:
        reading = field.reading
        parent = field.path.rpartition(".")[0]
        found += [field.path, *reading.elsewhere]
        found += [f"{parent}.{key}" if parent else key for key in reading.beside]
    return tuple(found)


# Where companion_name finds an embedded companion's name.
EMBEDDED_NAME_FIELDS = ("spec.resources[].kind", "spec.resources[].metadata.name")
_NOT_IN_A_NAME = re.compile(r"[^a-z0-9-]+")


def companion_name(companion: Companion, infra: RawObject) -> str | None:
    """The name of the infra pool's companion object, as the provider names it."""
    if companion.embedded:
        resources = mapping(infra.get("spec")).get("resources")
        for item in resources if isinstance(resources, list) else ():
            if isinstance(item, dict) and item.get("kind") == companion.kind:
                return text(dig(item, "metadata", "name"))
        return None
    # CAPZ's GetNormalizedKubernetesName (azure/defaults.go).
    name = text(dig(infra, "metadata", "name")) or ""
    return _NOT_IN_A_NAME.sub("-", name.lower()).strip("-") or None


def infra_targets(
    provider: Provider | None, infra: RawObject | None, companion: RawObject | None = None
) -> tuple[Target, ...]:
    """What the infra pool's version-bearing fields target, and its companion's, where they
    say."""
    if provider is None or infra is None:
        return ()
    found = field_targets(provider.kind, provider.version_fields, infra)
    if provider.companion is not None and companion is not None:
        found += field_targets(
            provider.companion.kind, provider.companion.version_fields, companion
        )
    return tuple(found)
