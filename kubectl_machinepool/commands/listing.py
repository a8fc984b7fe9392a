"""`kubectl machinepool list`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from kubectl_machinepool.commands import CONTEXT_SETTINGS, flags
from kubectl_machinepool.environment import Environment
from kubectl_machinepool.options import AccessOptions, OutputOptions, Source

# The renderer's keys, spelled here so that --help does not import it (a test keeps them equal).
FORMATS = ["table", "wide", "json", "yaml", "name"]


@click.command("list", context_settings=CONTEXT_SETTINGS)
@flags.watch
@flags.access
@flags.source
@flags.output(FORMATS)
@flags.pass_env
def list_command(
    env: Environment, watch: bool, access: AccessOptions, source: Source, output: OutputOptions
) -> None:
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
    -w, as kubectl get -w: after the table, a row for each pool that changed, whenever a
    watch of the MachinePools or their infra pools reports a change (on a terminal the table
    is redrawn in place instead); with -o json|yaml, the whole list again. Ctrl-C ends it.

    \b
    Examples:
      # every pool of the current context's namespace
      kubectl machinepool list
      # all namespaces, with failure domains and bootstrap kinds
      kubectl machinepool list -A -o wide
      # follow every pool's counts and phase
      kubectl machinepool list -A -w
    """
    from kubectl_machinepool import reading
    from kubectl_machinepool.color import Palette
    from kubectl_machinepool.model import MachinePool, machine_pools
    from kubectl_machinepool.render.listing import LIST_FORMATS, ListView

    color = env.color(output.color)

    def drawn(pools: list[MachinePool], namespace: str | None) -> str:
        view = ListView(
            pools=pools,
            now=source.now or env.now(),
            palette=Palette(color),
            all_namespaces=namespace is None,
            no_headers=output.no_headers,
        )
        return LIST_FORMATS[output.format](view)

    if watch:
        flags.live_only(source, "--watch")
        _follow(env, access, output.format, drawn, color)
        return
    snapshot, namespace = reading.load_pools(access, source, env.stdin)
    for note in snapshot.notes:
        env.warn(note)
    pools = machine_pools(snapshot)
    if not pools and output.format in ("table", "wide", "name"):
        env.err(reading.nothing_found(namespace))
        return
    env.out(drawn(pools, namespace), nl=False, color=color)


def _follow(
    env: Environment,
    access: AccessOptions,
    output_format: str,
    drawn: Callable[..., str],
    color: bool,
) -> None:
    """list -w: piped, kubectl get -w's rows of what changed; on a terminal, the table redrawn."""
    from kubectl_machinepool import reading
    from kubectl_machinepool.model import machine_pools

    shown: dict[tuple[str, str], object] = {}
    first = [True]

    def show(snapshot: Any, namespace: str | None, changes: Sequence[Any]) -> None:
        pools = machine_pools(snapshot)
        changed = [p for p in pools if shown.get((p.namespace, p.name)) != p]
        shown.clear()
        shown.update(((p.namespace, p.name), p) for p in pools)
        rows_only = not first[0] and not env.stdout_tty and output_format in ("table", "wide")
        if rows_only:
            # Rows cut from the whole table, so that their columns line up with the first one.
            rows = drawn(pools, namespace).splitlines(keepends=True)[-len(pools) :]
            fresh = [row for pool, row in zip(pools, rows, strict=False) if pool in changed]
            if fresh:
                env.out("".join(fresh), nl=False, color=color)
        else:
            flags.shown_again(env, drawn(pools, namespace), changes, first=first[0], color=color)
        first[0] = False

    reading.follow_pools(access, show=show, warn=env.warn)
