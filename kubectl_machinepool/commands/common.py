"""What every command shares: kubectl's flags, reading the input, and reporting what is missing."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import click

from kubectl_machinepool import suggest
from kubectl_machinepool.color import use_color
from kubectl_machinepool.description import Description, Selection, describe
from kubectl_machinepool.dump import load_dump
from kubectl_machinepool.errors import NotFoundError, UsageError
from kubectl_machinepool.fetch import read_description
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.options import AccessOptions, OutputOptions, parse_duration
from kubectl_machinepool.safetext import scrub
from kubectl_machinepool.snapshot import Snapshot
from kubectl_machinepool.timeutil import parse_time

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

F = Callable[..., Any]


def with_options(command: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        command = option(command)
    return command


def access_options(command: F) -> F:
    """kubectl's connection and scope flags, on every subcommand: kubectl passes them after it."""
    options = [
        click.option(
            "--kubeconfig",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            help="Path to the kubeconfig file to use",
        ),
        click.option(
            "--context",
            metavar="NAME",
            shell_complete=suggest.context_values,
            help="The kubeconfig context to use",
        ),
        click.option(
            "-n",
            "--namespace",
            metavar="NS",
            shell_complete=suggest.namespace_names,
            help="The namespace (default: the context's)",
        ),
        click.option(
            "-A", "--all-namespaces", is_flag=True, help="Read MachinePools in every namespace"
        ),
        click.option(
            "-l",
            "--selector",
            metavar="SELECTOR",
            help="Label selector on MachinePools, e.g. env=prod",
        ),
        click.option(
            "--request-timeout",
            default="0",
            show_default=True,
            metavar="DURATION",
            help="Time to wait for each server request (e.g. 5s, 1m); 0 waits forever",
        ),
    ]
    return with_options(command, options)


color_option = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour output; auto colours a terminal unless NO_COLOR is set",
)


def output_options(formats: list[str]) -> Callable[[F], F]:
    def decorate(command: F) -> F:
        options = [
            click.option(
                "-o",
                "--output",
                type=click.Choice(formats),
                default=formats[0],
                show_default=True,
                help="Output format",
            ),
            click.option("--no-headers", is_flag=True, help="Do not print table headers"),
            color_option,
        ]
        return with_options(command, options)

    return decorate


def build_access(params: dict[str, Any]) -> AccessOptions:
    return AccessOptions(
        kubeconfig=params["kubeconfig"],
        context=params["context"],
        namespace=params["namespace"],
        all_namespaces=params["all_namespaces"],
        selector=params["selector"],
        request_timeout=parse_duration(params["request_timeout"], "--request-timeout"),
    )


def build_output(params: dict[str, Any]) -> OutputOptions:
    return OutputOptions(
        format=params["output"],
        no_headers=params["no_headers"],
        color=use_color(params["color"], sys.stdout, os.environ),
    )


def echo(text: str, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """Every line of text output: nothing from a cluster reaches the terminal as a control."""
    click.echo(scrub(text), err=err, nl=nl, color=color)


def warn(message: str) -> None:
    echo(f"warning: {message}", err=True)


def input_options(command: F) -> F:
    """Read commands also take a dump instead of a cluster, and a fixed clock to read it at."""
    options = [
        click.option(
            "-f",
            "--filename",
            "filenames",
            multiple=True,
            type=click.Path(),
            metavar="PATH",
            help="Read objects from a file, directory or - (kubectl get -o yaml), not a cluster",
        ),
        click.option(
            "--now",
            metavar="TIMESTAMP",
            help="Read ages and durations as at this RFC 3339 time, e.g. when a dump was taken",
        ),
    ]
    return with_options(command, options)


def parse_now(value: str | None) -> datetime:
    if not value:
        return datetime.now(UTC).replace(microsecond=0)
    parsed = parse_time(value)
    if parsed is None:
        raise UsageError(
            f"invalid value {value!r} for --now", hint="use RFC 3339, e.g. 2026-11-29T15:00:00Z"
        )
    return parsed


def scope_namespace(access: AccessOptions, default: str | None) -> str | None:
    """The namespace to read, kubectl's way: -A means all, else -n, else the context's."""
    return None if access.all_namespaces else access.namespace or default


def pool_options(verb: str) -> Callable[[F], F]:
    """Which pools a read command looks at, and where their Nodes come from."""

    def decorate(command: F) -> F:
        options = [
            click.argument(
                "names", nargs=-1, metavar="[NAME]...", shell_complete=suggest.pool_names
            ),
            click.option(
                "--cluster",
                metavar="NAME",
                shell_complete=suggest.cluster_names,
                help=f"{verb} every MachinePool of this Cluster",
            ),
            click.option(
                "--workload-kubeconfig",
                type=click.Path(dir_okay=False),
                metavar="FILE",
                help="Read Nodes with this kubeconfig, not the <cluster>-kubeconfig Secret",
            ),
        ]
        return with_options(command, options)

    return decorate


@dataclass(frozen=True)
class Loaded:
    snapshot: Snapshot
    description: Description
    selection: Selection
    namespace: str | None


def load_description(
    params: dict[str, Any], access: AccessOptions, now: datetime, *, report_extras: bool
) -> Loaded:
    """The selected pools, live or from -f, described; notes already printed as warnings."""
    selection = Selection(
        names=params["names"], cluster=params["cluster"], selector=access.selector
    )
    if params["filenames"]:
        namespace = scope_namespace(access, None)
        snapshot = load_dump(params["filenames"], sys.stdin)
    else:
        with Kube.connect(access) as kube:
            namespace = scope_namespace(access, kube.connection.namespace)
            snapshot = read_description(
                kube,
                namespace,
                replace(selection, namespace=namespace),
                params["workload_kubeconfig"],
                access.request_timeout,
                diagnosis=True,
                report_extras=report_extras,
            )
    selection = replace(selection, namespace=namespace)
    description = describe(snapshot, selection, now)
    for note in (*description.notes, *(c.nodes_note for c in description.clusters if c.nodes_note)):
        warn(note)
    return Loaded(snapshot, description, selection, namespace)


def report_missing(description: Description, selection: Selection, namespace: str | None) -> None:
    """kubectl's way: print what was found, then fail naming each name that was not."""
    found = {p.pool.name for c in description.clusters for p in c.pools}
    missing = [name for name in selection.names if name not in found]
    where = f' in namespace "{namespace}"' if namespace else ""
    if len(missing) == 1:
        raise NotFoundError(f'machinepools.cluster.x-k8s.io "{missing[0]}" not found{where}')
    if missing:
        quoted = ", ".join(f'"{name}"' for name in missing)
        raise NotFoundError(f"machinepools.cluster.x-k8s.io {quoted} not found{where}")
    if not found and not selection.names:
        echo(
            f"No resources found{' in ' + namespace + ' namespace' if namespace else ''}.", err=True
        )


def utf8(stream: Any) -> bool:
    return "utf" in (getattr(stream, "encoding", "") or "").lower()
