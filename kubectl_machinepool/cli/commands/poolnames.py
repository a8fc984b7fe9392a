"""Pool names as kubectl takes them: NAME, or TYPE/NAME with a TYPE kubectl resolves to
MachinePools, `list -o name`'s machinepool.cluster.x-k8s.io/NAME included. Every command that
takes pool names reads them here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.suggest import pool_names

# The CRD's singular (its kind, which kubectl matches whatever the case), plural and shortNames;
# kubectl expands a short name only as written.
_NAMES = ("machinepool", "machinepools")
_SHORT = ("mp",)
# What may follow: the group, alone or after a version the CRD serves.
_SUFFIXES = ("", f".{CAPI_GROUP}", f".v1beta2.{CAPI_GROUP}", f".v1beta1.{CAPI_GROUP}")
TYPES = (*_NAMES, *_SHORT, f"{_NAMES[0]}.{CAPI_GROUP}")  # as help and errors name them
_FORMS = f"name a pool as NAME or TYPE/NAME, TYPE one of {', '.join(TYPES)}"


def pool_name(value: str, command: str) -> str:
    """The pool's name in value, or a usage error naming what command takes."""
    kind, slash, name = value.partition("/")
    if not slash:
        return value
    resource, dot, rest = kind.partition(".")
    folded = resource.lower() if resource.lower() in _NAMES else resource
    if folded not in (*_NAMES, *_SHORT) or dot + rest not in _SUFFIXES:
        raise UsageError(
            f"{command} takes MachinePools, not {kind!r} ({value!r})",
            hint=_FORMS,
        )
    if not name or "/" in name:
        raise UsageError(
            f"arguments in resource/name form must have a single resource and name: {value!r}",
            hint=_FORMS,
        )
    return name


def names(ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """click callback of a pool-names argument."""
    return tuple(pool_name(value, ctx.command_path) for value in values)


def name(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """click callback of an option naming one pool."""
    return None if value is None else pool_name(value, ctx.command_path)


def argument(*, required: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """NAME... (or [NAME]...): pool names, TYPE/NAME spellings read, completed from the cluster."""
    return click.argument(
        "names",
        nargs=-1,
        required=required,
        metavar="NAME..." if required else "[NAME]...",
        shell_complete=pool_names,
        callback=names,
    )
