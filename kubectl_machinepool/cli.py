"""Command line: parse flags, call the core, print, map errors. No MachinePool logic lives here."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, NoReturn

import click
import colorama

from kubectl_machinepool import __version__
from kubectl_machinepool.color import Palette, use_color
from kubectl_machinepool.description import Description, Selection, describe, selected
from kubectl_machinepool.dump import load_dump
from kubectl_machinepool.errors import ExitCode, MachinePoolError, NotFoundError, UsageError
from kubectl_machinepool.fetch import read_description, read_pools
from kubectl_machinepool.kube import Kube
from kubectl_machinepool.model import machine_pools
from kubectl_machinepool.options import AccessOptions, OutputOptions, parse_duration
from kubectl_machinepool.render.listing import LIST_FORMATS, ListView
from kubectl_machinepool.render.structured import describe_document, to_json, to_yaml
from kubectl_machinepool.render.tree import ASCII, UNICODE, TreeOptions, render_tree
from kubectl_machinepool.snapshot import Snapshot
from kubectl_machinepool.timeutil import parse_time

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


def input_options(command: F) -> F:
    """Read commands also take a dump instead of a cluster, and a fixed clock to read it at."""
    options = [
        click.option(
            "-f",
            "--filename",
            "filenames",
            multiple=True,
            metavar="PATH",
            help="Read objects from a file, directory or - (kubectl get -o yaml), not a cluster",
        ),
        click.option(
            "--now",
            metavar="TIMESTAMP",
            help="Read ages and durations as at this RFC 3339 time, e.g. when a dump was taken",
        ),
    ]
    return _with_options(command, options)


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
@input_options
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
      MACHINES   yes when the infra pool sets status.infrastructureMachineKind to a
                 per-instance kind, i.e. the pool has MachinePool Machines (GKE's pool
                 names itself: no); <unknown> when the infra pool is unreadable
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
    now = parse_now(params["now"])
    if params["filenames"]:
        namespace = scope_namespace(access, None)
        dump = load_dump(params["filenames"], sys.stdin)
        selection = Selection(namespace, selector=access.selector)
        snapshot = Snapshot.of(
            [o for o in dump.objects if o.get("kind") != "MachinePool" or selected(o, selection)]
        )
    else:
        with Kube.connect(access) as kube:
            namespace = scope_namespace(access, kube.connection.namespace)
            snapshot = read_pools(kube, namespace, access.selector)
    for note in snapshot.notes:
        warn(note)
    pools = machine_pools(snapshot)
    if not pools and output.format in ("table", "wide", "name"):
        where = f" in {namespace} namespace" if namespace else ""
        click.echo(f"No resources found{where}.", err=True)
        return
    view = ListView(
        pools=pools,
        now=now,
        palette=Palette(output.color),
        all_namespaces=namespace is None,
        no_headers=output.no_headers,
    )
    click.echo(LIST_FORMATS[output.format](view), nl=False, color=output.color)


def _show_conditions(value: str | None) -> frozenset[str]:
    if not value:
        return frozenset()
    kinds = [k.strip().lower() for k in value.split(",")]
    if any(not k or " " in k for k in kinds):
        raise UsageError(
            f"invalid value {value!r} for --show-conditions", hint="a comma list of kinds, or all"
        )
    return frozenset(kinds)


DESCRIBE_FORMATS = ["tree", "json", "yaml"]


@cli.command("describe", context_settings=CONTEXT_SETTINGS)
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--cluster", metavar="NAME", help="Describe every MachinePool of this Cluster")
@click.option(
    "--show-all", is_flag=True, help="List healthy instances one by one instead of grouping them"
)
@click.option(
    "--show-conditions",
    metavar="KINDS",
    help="List every condition of these kinds (comma list, e.g. MachinePool,Machine,Node, or all)",
)
@click.option(
    "--workload-kubeconfig",
    metavar="FILE",
    help="Read Nodes with this kubeconfig instead of the Cluster's <cluster>-kubeconfig Secret",
)
@access_options
@input_options
@output_options(DESCRIBE_FORMATS)
def describe_command(**params: Any) -> None:
    """Show MachinePools as a tree, from the Cluster down to every Node, with their real health.

    \b
    For each pool a summary comes first: desired, provider-reported and Node-matched replica
    counts, providerIDList against Nodes, versions, autoscaler and replicas-managed-by
    annotations, paused/deleting, failure domains, and whether one instance can be deleted.
    Then the tree: Cluster -> MachinePool -> bootstrap config, infra pool -> each instance
    (Machine -> infra machine -> Node, or providerID -> Node). Instances with problems come
    first; healthy ones fold into one row unless --show-all. CONDITION says which condition
    set a row uses: MachinePools set only Paused in v1beta2, so theirs is the v1beta1 Ready.

    \b
    Nodes come from the workload cluster through the <cluster>-kubeconfig Secret, held in
    memory only; without access (RBAC, unreachable) the rest is shown with a note.

    \b
    Examples:
      # one pool
      kubectl machinepool describe workers-0 -n capi-prod
      # every pool of a Cluster, each instance listed
      kubectl machinepool describe --cluster prod --show-all
      # a dump, read as at the time it was taken
      kubectl machinepool describe -f dump.yaml --now 2026-11-29T15:00:00Z
    """
    access = build_access(params)
    output = build_output(params)
    now = parse_now(params["now"])
    selection = Selection(
        names=params["names"], cluster=params["cluster"], selector=access.selector
    )
    if params["filenames"]:
        namespace = scope_namespace(access, None)
        snapshot = load_dump(params["filenames"], sys.stdin)
    else:
        with Kube.connect(access) as kube:
            namespace = scope_namespace(access, kube.connection.namespace)
            selection = replace(selection, namespace=namespace)
            snapshot = read_description(
                kube, namespace, selection, params["workload_kubeconfig"], access.request_timeout
            )
    description = describe(snapshot, replace(selection, namespace=namespace), now)
    for note in (*description.notes, *(c.nodes_note for c in description.clusters if c.nodes_note)):
        warn(note)
    if output.format == "tree" and description.clusters:
        opts = TreeOptions(
            now=now,
            palette=Palette(output.color),
            show_all=params["show_all"],
            show_conditions=_show_conditions(params["show_conditions"]),
            glyphs=UNICODE if _utf8(sys.stdout) else ASCII,
            no_headers=output.no_headers,
        )
        click.echo(render_tree(description, opts), nl=False, color=output.color)
    elif output.format != "tree":
        # Scripts get a document even when nothing matched.
        document = describe_document(description)
        click.echo(to_json(document) if output.format == "json" else to_yaml(document), nl=False)
    _report_missing(description, selection, namespace)


def _utf8(stream: Any) -> bool:
    return "utf" in (getattr(stream, "encoding", "") or "").lower()


def _report_missing(description: Description, selection: Selection, namespace: str | None) -> None:
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
        click.echo(
            f"No resources found{' in ' + namespace + ' namespace' if namespace else ''}.", err=True
        )


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
