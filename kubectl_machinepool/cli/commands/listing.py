"""`kubectl machinepool list`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kubectl_machinepool.app.options import PoolScope, RuleOptions, Source
from kubectl_machinepool.base.errors import MachinePoolError, UsageError
from kubectl_machinepool.cli.commands import CONTEXT_SETTINGS, flags, poolnames, showing
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.cli.options import FleetOptions, ListOptions, OutputOptions
from kubectl_machinepool.kube.access import AccessOptions

if TYPE_CHECKING:
    from kubectl_machinepool.model.listing import ListedPool
    from kubectl_machinepool.model.selector import Selection
    from kubectl_machinepool.model.snapshot import Snapshot

# The renderer's keys, spelled here so that --help does not import it (a test keeps them equal).
FORMATS = ["table", "wide", "json", "yaml", "name"]
TEMPLATES = {
    "jsonpath": "TEMPLATE",
    "jsonpath-file": "FILE",
    "custom-columns": "SPEC",
    "custom-columns-file": "FILE",
}


@click.command("list", context_settings=CONTEXT_SETTINGS)
@poolnames.argument(required=False)
@flags.workload_kubeconfig
@flags.watch
@flags.fleet
@flags.access
@flags.source
@flags.output(FORMATS, TEMPLATES, tables=True)
@flags.list_printing
@flags.pass_env
def list_command(
    env: Environment,
    *,
    names: tuple[str, ...],
    workload_kubeconfig: str | None,
    watch: bool,
    fleet: FleetOptions,
    access: AccessOptions,
    source: Source,
    output: OutputOptions,
    printing: ListOptions,
) -> None:
    """List MachinePools with Node-based replica counts.

    Every MachinePool in scope, or those NAMEd, with how many of its Nodes are up to date and
    how many findings diagnose has for it.

    \b
    Columns:
      DESIRED     spec.replicas, what the pool is asked to run
      CURRENT     status.replicas: instances the infrastructure provider reports
      READY       Nodes matching the pool's providerIDList that are Ready. Node-based on
                  every CAPI version: on v1beta2 it is status.deprecated.v1beta1.readyReplicas,
                  because the v1beta2 readyReplicas of a pool without MachinePool Machines is a
                  copy of CURRENT
      UP-TO-DATE  Nodes matching the providerIDList whose kubelet runs the desired version;
                  0 while the infra pool's version or image fields target another release
                  (MP1301); <unknown> when the workload cluster's Nodes could not be read
      AVAILABLE   of the Ready Nodes, Ready for at least minReadySeconds (same source as READY)
      PHASE       status.phase as computed by Cluster API
      VERSION     spec.template.spec.version, the desired Kubernetes version
      INFRA       kind of the infra pool (spec.template.spec.infrastructureRef)
      MACHINES    yes when the infra pool sets status.infrastructureMachineKind to a
                  per-instance kind, i.e. the pool has MachinePool Machines (GKE's pool
                  names itself: no); <unknown> when the infra pool is unreadable
      FINDINGS    warnings and errors of the diagnose rules that the pool, its infra pool and
                  its Cluster's Nodes tell (docs/list.md names them); diagnose runs them all
      AGE         time since the MachinePool was created
    -o wide adds KUBELET VERSIONS (each with its Nodes), FAILURE DOMAINS (spec.failureDomains)
    and BOOTSTRAP (bootstrap config kind); -L KEY a column per label key, --show-labels a
    LABELS column. Besides the MachinePools and their infra pools, list reads the Nodes of
    their Clusters: one LIST per Cluster, through its <cluster>-kubeconfig Secret (or
    --workload-kubeconfig).

    \b
    -o json|yaml print a List of the MachinePools as the API gave them, as kubectl get does;
    -o jsonpath=TEMPLATE, -o custom-columns=HEADER:PATH,... (and their -file=FILE forms) and
    --sort-by=PATH run over that List, so the same template prints the same text. Each item
    also holds, under `summary`, what the table shows of the pool, e.g. the Node-based READY:
      -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.summary.replicas.ready}{"\\n"}{end}'

    \b
    -w, as kubectl get -w: after the table, a row for each pool that changed, whenever a
    watch of the MachinePools or their infra pools reports a change (on a terminal the table
    is redrawn in place instead); with -o json|yaml, the whole list again. Ctrl-C ends it.

    \b
    Examples:
      # every pool of the current context's namespace
      kubectl machinepool list
      # two pools by name (an error for each that does not exist, after the others)
      kubectl machinepool list asg-workers vmss-batch
      # all namespaces, with failure domains and bootstrap kinds
      kubectl machinepool list -A -o wide
      # follow every pool's counts and phase
      kubectl machinepool list -A -w
      # the pools with the fewest Ready Nodes first, with each pool's env label
      kubectl machinepool list -A --sort-by=.summary.replicas.ready -L env
      # name and Node-based READY of each pool, for a script
      kubectl machinepool list -o custom-columns=NAME:.metadata.name,READY:.summary.replicas.ready
      # the names of the pools, from kubectl's List
      kubectl machinepool list -o json | jq -r '.items[].metadata.name'
    """
    from kubectl_machinepool.app import reading
    from kubectl_machinepool.render import listing
    from kubectl_machinepool.render.color import Palette

    _check_printing(output, printing)
    # Templates and --sort-by are parsed before anything is read: a typo fails at once.
    render = listing.LIST_FORMATS.get(output.format) or listing.template_format(
        output.format, _template(output)
    )
    ordered = listing.pool_order(printing.sort_by) if printing.sort_by else list
    color = env.color(output.color)

    def clock() -> datetime:
        return source.now or env.now()

    scope = PoolScope(names=names, workload_kubeconfig=workload_kubeconfig)

    def drawn(
        pools: list[ListedPool],
        namespace: str | None,
        now: datetime,
        contexts: tuple[tuple[str, str | None], ...] = (),
    ) -> str:
        view = listing.ListView(
            pools=pools,
            now=now,
            palette=Palette(color),
            all_namespaces=namespace is None,
            no_headers=output.no_headers,
            label_columns=printing.label_columns,
            show_labels=printing.show_labels,
            contexts=contexts,
        )
        return render(view)

    def pools_of(snapshot: Snapshot, selection: Selection, now: datetime) -> list[ListedPool]:
        from kubectl_machinepool.app.listing import listed_pools

        return ordered(listed_pools(snapshot, now, selection, _judged_as_diagnose(env)))

    if fleet.asked:
        if watch:
            raise UsageError("a fleet view is read once", hint="drop --watch")
        flags.fleet_only_live(access, source)
        _list_fleet(
            env,
            access,
            fleet,
            ordered,
            drawn,
            scope=scope,
            now=clock(),
            color=color,
            fmt=output.format,
        )
        return
    if watch:
        flags.live_only(source, "--watch")
        _follow(env, access, output.format, pools_of, drawn, scope=scope, clock=clock, color=color)
        return
    snapshot, selection = reading.load_pools(access, source, env.stdin, scope)
    for note in snapshot.notes:
        env.warn(note)
    now = source.now or snapshot.captured or clock()
    pools = pools_of(snapshot, selection, now)
    if pools or output.format not in ("table", "wide", "name"):
        env.out(drawn(pools, selection.namespace, now), nl=False, color=color)
    elif not names:
        env.err(reading.nothing_found(selection.namespace))
    reading.check_names(names, {p.pool.name for p in pools}, selection.namespace, snapshot)


def _judged_as_diagnose(env: Environment) -> RuleOptions:
    """The graces and ignores of the user's config file, as diagnose reads them: FINDINGS
    counts what diagnose would show (a malformed file fails list as it fails diagnose)."""
    from kubectl_machinepool.app.userconfig import rule_options

    return rule_options(env.env, ignore=(), graces={}, capi_version=None)


def _pools_modules() -> None:
    """What a fleet's children read and make pools with, imported once before they start."""
    from kubectl_machinepool.app import listing  # noqa: F401
    from kubectl_machinepool.kube import reads  # noqa: F401


def _list_fleet(
    env: Environment,
    access: AccessOptions,
    fleet: FleetOptions,
    ordered: Callable[[list[ListedPool]], list[ListedPool]],
    drawn: Callable[..., str],
    *,
    scope: PoolScope,
    now: datetime,
    color: bool,
    fmt: str,
) -> None:
    """--contexts, --all-contexts: one table (or document) of every context's pools, under a
    CONTEXT column; a context that could not be read is a warning, and a note in -o json."""
    from dataclasses import replace

    from kubectl_machinepool.app import fleet as fleets
    from kubectl_machinepool.app import reading
    from kubectl_machinepool.app.listing import listed_pools
    from kubectl_machinepool.model.fleet import ContextPools

    rules = _judged_as_diagnose(env)

    def listed(at: AccessOptions) -> ContextPools:
        # In the context's own process: only the pools travel back, not the objects read.
        snapshot, selection = reading.load_pools(at, Source(), None, scope)
        pools = listed_pools(snapshot, now, selection, rules)
        return ContextPools(tuple(pools), selection.namespace, tuple(snapshot.notes))

    reads = list(
        fleets.read_fleet(
            access,
            listed,
            wanted=fleet.contexts,
            every=fleet.every,
            parallel=fleet.parallel,
            prepare=_pools_modules,
            notes_of=lambda read: read.notes,
            warn=env.warn,
        )
    )
    found: list[ListedPool] = []
    namespaces = set()
    for read in reads:
        if read.value is not None:
            namespaces.add(read.value.namespace)
            found += [
                replace(p, pool=replace(p.pool, context=read.context)) for p in read.value.pools
            ]
    # Each context's pools in kubectl's order, contexts in the order asked; --sort-by over all.
    pools = ordered(found)
    # One namespace for all: no NAMESPACE column; -A, or contexts' own that differ: one.
    namespace = namespaces.pop() if len(namespaces) == 1 else None
    if not pools and fmt in ("table", "wide", "name"):
        if not scope.names:
            env.err(reading.nothing_found(namespace))
        reading.check_names(scope.names, set(), namespace)
        return
    contexts = tuple((read.context, read.error) for read in reads)
    env.out(drawn(pools, namespace, now, contexts), nl=False, color=color)


def _check_printing(output: OutputOptions, printing: ListOptions) -> None:
    """The flag pairs kubectl get refuses."""
    if printing.show_labels and output.format not in ("table", "wide"):
        raise UsageError(
            f"--show-labels option cannot be used with {output.format} printer",
            hint="drop --show-labels, or print a table (-o wide)",
        )
    if printing.label_columns and output.format.startswith("custom-columns"):
        raise UsageError(
            f"--label-columns option cannot be used with {output.format} printer",
            hint="add the label as a column: KEY:.metadata.labels.KEY (dots in KEY as \\.)",
        )


def _template(output: OutputOptions) -> str:
    """The template of -o jsonpath=… and the like; a -file format's file read."""
    if not output.format.endswith("-file"):
        return output.template
    try:
        return Path(output.template).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or getattr(err, "reason", None) or err
        raise MachinePoolError(
            f"error reading template {output.template}: {reason}",
            hint=f"-o {output.format}=FILE names a file holding the template",
        ) from err


def _follow(
    env: Environment,
    access: AccessOptions,
    output_format: str,
    pools_of: Callable[[Snapshot, Selection, datetime], list[ListedPool]],
    drawn: Callable[..., str],
    *,
    scope: PoolScope,
    clock: Callable[[], datetime],
    color: bool,
) -> None:
    """list -w: piped, kubectl get -w's rows of what changed; on a terminal, the table redrawn."""
    from kubectl_machinepool.app import reading

    shown: dict[tuple[str, str], object] = {}
    first = [True]

    def show(snapshot: Any, selection: Selection, changes: Sequence[Any]) -> None:
        now = clock()
        pools = pools_of(snapshot, selection, now)
        changed = [p for p in pools if shown.get((p.pool.namespace, p.pool.name)) != p]
        shown.clear()
        shown.update(((p.pool.namespace, p.pool.name), p) for p in pools)
        namespace = selection.namespace
        rows_only = not first[0] and not env.stdout_tty and output_format in ("table", "wide")
        if rows_only:
            # Rows cut from the whole table, so that their columns line up with the first one.
            rows = drawn(pools, namespace, now).splitlines(keepends=True)[-len(pools) :]
            fresh = [row for pool, row in zip(pools, rows, strict=False) if pool in changed]
            if fresh:
                env.out("".join(fresh), nl=False, color=color)
        else:
            text = drawn(pools, namespace, now)
            showing.shown_again(env, text, changes, first=first[0], color=color)
        first[0] = False

    reading.follow_pools(access, show=show, warn=env.warn, pools=scope)
