"""kubectl's flags as option groups: each group reaches the command as one frozen value.

A command declares `access: AccessOptions` and gets it, built and checked once, instead of a bag
of untyped parameters. This module stays light (click and the option values only): it is
imported for --help and for every TAB.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.base.errors import UsageError
from kubectl_machinepool.cli.commands import poolnames
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import FleetOptions, ListOptions, OutputOptions, parse_now
from kubectl_machinepool.cli.outputformat import OutputFormat
from kubectl_machinepool.cli.suggest import cluster_names, context_values, namespace_names
from kubectl_machinepool.kube.access import CHUNK_SIZE, AccessOptions

if TYPE_CHECKING:
    from kubectl_machinepool.render.color import ColorMode

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def group(into: str, options: Sequence[Decorator], build: Callable[..., Any]) -> Decorator:
    """Add these click options; the command receives build(**their values) as `into`."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_value(*args: Any, **values: Any) -> Any:
            mine = {name: values.pop(name) for name in names}
            values[into] = build(**mine)
            return command(*args, **values)

        params = getattr(command, "__click_params__", [])
        before = len(params)
        decorated: Any = with_value
        for option in reversed(options):
            decorated = option(decorated)
        names = [p.name for p in decorated.__click_params__[before:]]
        return decorated

    return decorate


def pass_env(command: F) -> F:
    """The command's first parameter: the Environment cli.main built for this process."""

    @functools.wraps(command)
    def with_env(*args: Any, **values: Any) -> Any:
        env = click.get_current_context().find_object(Environment)
        return command(env or Environment.from_process(), *args, **values)

    return with_env  # type: ignore[return-value]


def _access(
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    all_namespaces: bool,
    selector: str | None,
    request_timeout: str,
    chunk_size: int,
) -> AccessOptions:
    return AccessOptions(
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        all_namespaces=all_namespaces,
        selector=selector,
        request_timeout=parse_duration(request_timeout, "--request-timeout"),
        chunk_size=chunk_size,
    )


_CONNECTION = [
    click.option(
        "--kubeconfig",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Path to the kubeconfig file to use",
    ),
    click.option(
        "--context",
        metavar="NAME",
        shell_complete=context_values,
        help="The kubeconfig context to use",
    ),
    click.option(
        "-n",
        "--namespace",
        metavar="NS",
        shell_complete=namespace_names,
        help="The namespace (default: the context's)",
    ),
]
_ACROSS = [
    click.option(
        "-A", "--all-namespaces", is_flag=True, help="Read MachinePools in every namespace"
    ),
    click.option(
        "-l",
        "--selector",
        metavar="SELECTOR",
        help="Label selector on MachinePools, e.g. env=prod",
    ),
]
_LIMITS = [
    click.option(
        "--request-timeout",
        default="0",
        show_default=True,
        metavar="DURATION",
        help="The longest one server request may take (e.g. 5s, 1m); 0: no limit, though "
        "connecting and the TLS handshake still give up after 10s and a silent server "
        "after 90s",
    ),
    click.option(
        "--chunk-size",
        type=click.IntRange(min=0),
        default=CHUNK_SIZE,
        show_default=True,
        metavar="N",
        help="Read large lists in pages of N objects; 0 reads each list at once",
    ),
]

# Reads: the connection, which pools (-A, -l), and the request limits.
access = group("access", [*_CONNECTION, *_ACROSS, *_LIMITS], _access)
# Commands that act on named objects in one namespace (writes, history, diff) do not offer -A
# and -l at all, rather than offering them in --help and then refusing or ignoring them.
access_named = group(
    "access",
    [*_CONNECTION, *_LIMITS],
    functools.partial(_access, all_namespaces=False, selector=None),
)

color = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour output; auto colours a terminal unless NO_COLOR is set",
)


def _output(format: str, color: ColorMode, no_headers: bool = False) -> OutputOptions:
    name, _, template = format.partition("=")
    return OutputOptions(name, no_headers, color, template)


def output(
    formats: Sequence[str], templates: Mapping[str, str] | None = None, *, tables: bool = False
) -> Decorator:
    """-o and --color, and --no-headers where the text output has tables; templates: the
    formats that take one (-o jsonpath=…), each with what it takes (TEMPLATE, FILE)."""
    kind: click.ParamType[Any, Any] = click.Choice(formats)
    described = "Output format"
    if templates:
        kind = OutputFormat(formats, templates)
        described += ": " + ", ".join(kind.spelled)
    headers = [click.option("--no-headers", is_flag=True, help="Do not print table headers")]
    return group(
        "output",
        [
            click.option(
                "-o",
                "--output",
                "format",
                type=kind,
                default=formats[0],
                show_default=True,
                help=described,
            ),
            *(headers if tables else []),
            color,
        ],
        _output,
    )


def _list_printing(sort_by: str, label_columns: tuple[str, ...], show_labels: bool) -> ListOptions:
    keys = tuple(key for value in label_columns for key in value.split(",") if key)
    return ListOptions(sort_by, keys, show_labels)


list_printing = group(
    "printing",
    [
        click.option(
            "--sort-by",
            default="",
            metavar="JSONPATH",
            help="Sort by this field of each MachinePool, e.g. .metadata.name or "
            ".summary.replicas.ready",
        ),
        click.option(
            "-L",
            "--label-columns",
            multiple=True,
            metavar="KEY[,KEY...]",
            help="Add a column with each of these labels' values (repeatable)",
        ),
        click.option("--show-labels", is_flag=True, help="Add a LABELS column with every label"),
    ],
    _list_printing,
)


def _source(filenames: tuple[str, ...], now: str | None) -> Source:
    return Source(filenames, parse_now(now))


source = group(
    "source",
    [
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
    ],
    _source,
)

workload_kubeconfig = click.option(
    "--workload-kubeconfig",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Reach the workload cluster with this kubeconfig, not the <cluster>-kubeconfig Secret",
)


def pools(verb: str) -> Decorator:
    """Which pools a read command looks at, and where their Nodes come from."""
    return group(
        "pools",
        [
            poolnames.argument(required=False),
            click.option(
                "--cluster",
                metavar="NAME",
                shell_complete=cluster_names,
                help=f"{verb} every MachinePool of this Cluster",
            ),
            workload_kubeconfig,
        ],
        PoolScope,
    )


# --NAME-grace: the Thresholds field, its default (else the config file's), what it bounds.
_GRACES = (
    ("scaling", "2m", "How long ScalingUp may last before it is a finding"),
    ("taint", "5m", "How long a Ready Node may keep the uninitialized taint"),
    ("deleting", "15m", "How long a pool may be deleting before it is a finding"),
    ("drain", "15m", "How long a Machine may drain its Node before it is a finding"),
)


def _rules(capi_version: str | None, ignore: tuple[str, ...], **graces: str | None) -> RuleOptions:
    from kubectl_machinepool.app.userconfig import rule_options

    given = {key.removesuffix("_grace"): value for key, value in graces.items()}
    env = click.get_current_context().find_object(Environment) or Environment.from_process()
    return rule_options(env.env, ignore=ignore, graces=given, capi_version=capi_version)


rules = group(
    "rules",
    [
        *(
            click.option(f"--{name}-grace", metavar="DURATION", help=f"{text}  [default: {d}]")
            for name, d, text in _GRACES
        ),
        click.option(
            "--ignore",
            multiple=True,
            metavar="RULE[,RULE...]",
            help="Leave out the findings of these rules, and count them (repeatable; the config "
            "file can also ignore a rule in one Cluster or pool)",
        ),
        click.option(
            "--capi-version",
            metavar="VERSION",
            help="Cluster API version for version-dependent rules (default: from its image)",
        ),
    ],
    _rules,
)


def _fleet(contexts: tuple[str, ...], all_contexts: bool, parallel: int | None) -> FleetOptions:
    names = tuple(n.strip() for value in contexts for n in value.split(","))
    if any(not n for n in names):
        raise UsageError(f"invalid value {','.join(contexts)!r} for --contexts", hint="NAME,NAME")
    if names and all_contexts:
        raise UsageError("--contexts and --all-contexts exclude each other", hint="drop one")
    if parallel is not None and not (names or all_contexts):
        raise UsageError("--parallel reads a fleet", hint="add --contexts or --all-contexts")
    return FleetOptions(names, all_contexts, parallel)


fleet = group(
    "fleet",
    [
        click.option(
            "--contexts",
            multiple=True,
            metavar="NAME,NAME",
            shell_complete=context_values,
            help="Read these kubeconfig contexts side by side (a fleet of management clusters)",
        ),
        click.option(
            "--all-contexts", is_flag=True, help="Read every context of the kubeconfig side by side"
        ),
        click.option(
            "--parallel",
            type=click.IntRange(min=1),
            metavar="N",
            help="Contexts read at once, each in its own process (default: one per core)",
        ),
    ],
    _fleet,
)


def fleet_only_live(access: AccessOptions, source: Source) -> None:
    """What a fleet view cannot be combined with."""
    if access.context:
        raise UsageError("--context names one cluster; a fleet view names them with --contexts")
    if source.filenames:
        raise UsageError("a fleet view reads live clusters and cannot read a dump", hint="drop -f")


watch = click.option(
    "-w",
    "--watch",
    is_flag=True,
    help="After the first view, show it again on each change the API reports (Ctrl-C ends it)",
)


def live_only(source: Source, flag: str) -> None:
    if source.filenames:
        raise UsageError(
            f"{flag} follows a live cluster and cannot read a dump", hint=f"drop -f, or {flag}"
        )


def drain_timeout(value: str | None) -> timedelta | None:
    """--drain-timeout as a Machine's nodeDrainTimeoutSeconds takes it (v1beta2: an int32)."""
    if not value:
        return None
    seconds = parse_duration(value, "--drain-timeout")
    if seconds is None or not 1 <= seconds < 2**31:
        short = seconds is None or seconds < 1
        why = "would not bound the drain" if short else "is more than a Machine holds (2147483647s)"
        raise UsageError(
            f"--drain-timeout {value} {why}",
            hint="give 1s to 68 years (Cluster API counts whole seconds, and takes 0 for no limit)",
        )
    return timedelta(seconds=seconds)
