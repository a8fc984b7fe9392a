"""upgrade --set PATH=VALUE as given, judged from the command line alone, before anything is read.

upgrade writes the version and image fields the provider registry lists (providers/upgrades.py)
and nothing else: any other path (metadata.ownerReferences, spec.providerIDList, status.replicas)
is a usage error, never a merge patch. A value is a release, an image or an id: printable, without
whitespace and bounded, as --version is. An empty value clears a field, which only helps where
the provider derives that field from the version itself (UpgradeField.clear); a path given twice
is refused rather than the last one winning unsaid. Which of these paths the pool's own infra
kind takes is the plan's to say (plans/upgrade.py), once the pool is read.
"""

from __future__ import annotations

import difflib
import functools

from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.providers.registry import PROVIDERS

# An image reference with its digest, or an Azure image id, is well under this.
MAX_VALUE = 1024
_EXAMPLE = "e.g. --set spec.awsLaunchTemplate.ami.id=ami-0123456789abcdef0"


@functools.cache
def _paths() -> tuple[frozenset[str], frozenset[str]]:
    """Every kind's paths that take a value, and those an empty value clears."""
    valued: set[str] = set()
    cleared: set[str] = set()
    for provider in PROVIDERS:
        upgrade = provider.upgrade
        valued.update(f.path for f in upgrade.fields)
        cleared.update(f.clear for f in upgrade.fields if f.clear)
        if upgrade.deployed is not None:
            valued.add(upgrade.deployed.path)
    return frozenset(valued), frozenset(cleared)


def _unknown(path: str, known: frozenset[str]) -> UsageError:
    near = difflib.get_close_matches(path, sorted(known), n=3)
    return UsageError(
        f"--set {path!r} is no field upgrade writes on any infra pool kind",
        hint=(f"did you mean {' or '.join(near)}? " if near else "")
        + "upgrade writes only the version and image fields docs/upgrade.md lists per kind",
    )


def _value(path: str, value: str, valued: frozenset[str], cleared: frozenset[str]) -> None:
    if len(value) > MAX_VALUE:
        raise UsageError(
            f"--set {path}: its value is {len(value)} characters long, over {MAX_VALUE}",
            hint="give the version, image or id itself",
        )
    if not value.isprintable() or any(c.isspace() for c in value):
        raise UsageError(
            f"--set {path}={value!r} holds whitespace or a control character",
            hint="give the version, image or id itself",
        )
    if not value and path not in cleared:
        raise UsageError(
            f"--set {path}= would clear a field no provider derives from the version",
            hint=f"give its new value: --set {path}=VALUE",
        )
    if value and path not in valued:
        raise UsageError(
            f"--set {path} takes only an empty value: cleared, the provider derives it from "
            "the version",
            hint=f"--set {path}=",
        )


def parse_sets(given: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """--set's values as (path, value), in order; UsageError for the first that cannot be."""
    valued, cleared = _paths()
    found: dict[str, str] = {}
    for each in given:
        path, equals, value = each.partition("=")
        if not equals or not path:
            raise UsageError(
                f"--set {each!r} is not PATH=VALUE", hint=f"{_EXAMPLE} (VALUE empty clears it)"
            )
        if path not in valued | cleared:
            raise _unknown(path, valued | cleared)
        if path in found:
            raise UsageError(f"--set {path} is given twice", hint="give each path once")
        _value(path, value, valued, cleared)
        found[path] = value
    return tuple(found.items())
