"""Command line: parse flags, call the core, print, map errors. No MachinePool logic lives here."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn

import click
import colorama

from kubectl_machinepool import __version__
from kubectl_machinepool.color import Palette, use_color
from kubectl_machinepool.errors import ExitCode, MachinePoolError
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.model import machine_pools
from kubectl_machinepool.options import AccessOptions, OutputOptions, parse_duration
from kubectl_machinepool.render import LIST_FORMATS, ListView

PROG = "kubectl machinepool"
COMPLETE_VAR = "_KUBECTL_MACHINEPOOL_COMPLETE"
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

F = Callable[..., Any]


def _with_options(command: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        command = option(command)
    return command


def access_options(command: F) -> F:
    """kubectl's connection and scope flags, on every subcommand: kubectl passes them after it."""
    options = [
        click.option("--kubeconfig", metavar="FILE", help="Path to the kubeconfig file to use"),
        click.option("--context", metavar="NAME", help="The kubeconfig context to use"),
        click.option(
            "-n", "--namespace", metavar="NS", help="The namespace (default: the context's)"
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
    return _with_options(command, options)


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
            click.option(
                "--color",
                type=click.Choice(["auto", "always", "never"]),
                default="auto",
                show_default=True,
                help="Colour output; auto colours a terminal unless NO_COLOR is set",
            ),
        ]
        return _with_options(command, options)

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


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(
    __version__, "--version", prog_name="kubectl-machinepool", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Show the truth about Cluster API MachinePools, and act on them safely.

    \b
    Reads the management cluster (MachinePools and their provider objects) with the
    usual kubectl flags, which go after the subcommand:
      kubectl machinepool list -A --context mgmt
    """


@cli.command("list", context_settings=CONTEXT_SETTINGS)
@access_options
@output_options(list(LIST_FORMATS))
def list_command(**params: Any) -> None:
    """List MachinePools with Node-based replica counts.

    \b
    Columns:
      DESIRED    spec.replicas, what the pool is asked to run
      CURRENT    status.replicas: instances the infrastructure provider reports
      READY      Nodes matching the pool's providerIDList that are Ready. Node-based on
                 every CAPI version: on v1beta2 it is status.deprecated.v1beta1.readyReplicas,
                 because the v1beta2 readyReplicas of a pool without MachinePool Machines is a
                 copy of CURRENT
      AVAILABLE  of those, Ready for at least minReadySeconds (same source as READY)
      PHASE      status.phase as computed by Cluster API
      VERSION    spec.template.spec.version, the desired Kubernetes version
      INFRA      kind of the infra pool (spec.template.spec.infrastructureRef)
      MACHINES   yes when the infra pool sets status.infrastructureMachineKind, i.e. the
                 pool has MachinePool Machines; <unknown> when the infra pool is unreadable
      AGE        time since the MachinePool was created
    -o wide adds FAILURE DOMAINS (spec.failureDomains) and BOOTSTRAP (bootstrap config kind).

    \b
    Examples:
      # every pool of the current context's namespace
      kubectl machinepool list
      # all namespaces, with failure domains and bootstrap kinds
      kubectl machinepool list -A -o wide
    """
    access = build_access(params)
    output = build_output(params)
    with Kube.connect(access) as kube:
        namespace = None if access.all_namespaces else access.namespace or kube.connection.namespace
        snapshot = kube.read_pools(namespace, access.selector)
    for note in snapshot.notes:
        warn(note)
    pools = machine_pools(snapshot)
    if not pools and output.format in ("table", "wide", "name"):
        where = f" in {namespace} namespace" if namespace else ""
        click.echo(f"No resources found{where}.", err=True)
        return
    view = ListView(
        pools=pools,
        now=datetime.now(UTC),
        palette=Palette(output.color),
        all_namespaces=access.all_namespaces,
        no_headers=output.no_headers,
    )
    click.echo(LIST_FORMATS[output.format](view), nl=False, color=output.color)


def main(argv: list[str] | None = None) -> NoReturn:
    """Console entry point: the single place where errors become messages and exit codes."""
    colorama.just_fix_windows_console()
    try:
        # Shell completion scripts name the executable; help text names the kubectl command.
        prog = "kubectl-machinepool" if COMPLETE_VAR in os.environ else PROG
        code = cli.main(args=argv, prog_name=prog, complete_var=COMPLETE_VAR, standalone_mode=False)
    except click.ClickException as err:
        err.show()
        code = err.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        code = ExitCode.ERROR
    except MachinePoolError as err:
        click.echo(f"error: {err.message}", err=True)
        if err.hint:
            click.echo(f"hint: {err.hint}", err=True)
        code = err.exit_code
    except KeyboardInterrupt:
        code = ExitCode.INTERRUPTED
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
