"""Pool (and Machine) names as kubectl takes them: NAME, or TYPE/NAME with a TYPE kubectl
resolves to that kind, `-o name`'s machinepool.cluster.x-k8s.io/NAME included. Every command
that takes pool names reads them here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kubectl_machinepool.base.apiversion import CAPI_GROUP
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.suggest import pool_names

# The CRDs' singular (the kind, which kubectl matches whatever the case), plural and
# shortNames; kubectl expands a short name only as written.
_KINDS = {
    "MachinePools": (("machinepool", "machinepools"), ("mp",)),
    "Machines": (("machine", "machines"), ("ma",)),
}
# What may follow: the group, alone or after a version the CRD serves.
_SUFFIXES = ("", f".{CAPI_GROUP}", f".v1beta2.{CAPI_GROUP}", f".v1beta1.{CAPI_GROUP}")


def _forms(kind: str) -> str:
    names, short = _KINDS[kind]
    types = (*names, *short, f"{names[0]}.{CAPI_GROUP}")  # as help and errors name them
    noun = "a pool" if kind == "MachinePools" else "a Machine"
    return f"name {noun} as NAME or TYPE/NAME, TYPE one of {', '.join(types)}"


def typed_name(value: str, taker: str, kind: str = "MachinePools") -> str:
    """The name in value (NAME or TYPE/NAME of that kind), or a usage error naming what the
    taker (a command, or a command's flag) takes."""
    type_name, slash, name = value.partition("/")
    if not slash:
        return value
    names, short = _KINDS[kind]
    resource, dot, rest = type_name.partition(".")
    folded = resource.lower() if resource.lower() in names else resource
    if folded not in (*names, *short) or dot + rest not in _SUFFIXES:
        raise UsageError(f"{taker} takes {kind}, not {type_name!r} ({value!r})", hint=_forms(kind))
    if not name or "/" in name:
        raise UsageError(
            f"arguments in resource/name form must have a single resource and name: {value!r}",
            hint=_forms(kind),
        )
    return name


def pool_name(value: str, command: str) -> str:
    """The pool's name in value, or a usage error naming what command takes."""
    return typed_name(value, command)


def names(ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """click callback of a pool-names argument."""
    return tuple(pool_name(value, ctx.command_path) for value in values)


def name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """click callback of an option naming one pool."""
    flag = param.opts[0] if param.opts else ""
    return None if value is None else typed_name(value, f"{ctx.command_path} {flag}".strip())


def machine_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """click callback of an argument naming one Machine (`kubectl get machines -o name`)."""
    return None if value is None else typed_name(value, "delete-machine", "Machines")


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
