"""`kubectl machinepool rollout restart`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.cli.commands import (
    CONTEXT_SETTINGS,
    confirming,
    flags,
    poolnames,
    poolwrites,
)
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.render.color import ColorMode


@click.command("restart", context_settings=CONTEXT_SETTINGS)
@poolnames.argument(required=True)
@click.option(
    "--max-unavailable",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Replace the next instance only while fewer than this many are unavailable",
)
@click.option(
    "--drain-timeout",
    metavar="DURATION",
    help="Each replaced Machine's node drain timeout, e.g. 10m (pool Machines have none)",
)
@confirming.write_options
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Go on until every instance is replaced; --no-wait starts what may start now",
)
@click.option(
    "--timeout",
    default="0",
    metavar="DURATION",
    help="How long to go on before stopping (exit 5; run again to go on); 0: until done",
)
@flags.source
@flags.color
@flags.access_named
@flags.pass_env
def restart_command(
    env: Environment,
    *,
    names: tuple[str, ...],
    max_unavailable: int,
    drain_timeout: str | None,
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    wait: bool,
    timeout: str,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    """Replace every instance of MachinePools, a few at a time, or refuse and say why.

    \b
    Every instance whose Machine was created before the restart began is replaced through
    delete-machine's replace path (the Machine controller drains its Node, honouring
    PodDisruptionBudgets and --drain-timeout; the provider makes the replacement), the next only
    while fewer than --max-unavailable instances are unavailable (going, or without a Ready
    Node). The start, the API server's time (never this machine's), is recorded in the
    MachinePool's kubectl-machinepool/restart-started annotation: the same command run again
    goes on where it stopped, and the annotation is removed once every instance is new. A
    recorded start later than the server's time is refused, as is a pool whose provider cannot
    replace single instances (with what rolls that provider instead), or a paused or deleting
    pool. With -f DUMP --dry-run=client, the plan is made from a dump or export instead, and no
    connection is made.
    \b
    Exit codes: 0 done (or nothing to do, or --no-wait), 1 an error (nothing written), 2 usage,
    3 refused (nothing written), 5 stopped with the restart recorded (--timeout, a replacement
    refused or failed; named, run again to go on), 129/130/143 interrupted (run again to go on).
    \b
    Examples:
      kubectl machinepool rollout restart docker-workers -n capi-dev
      kubectl machinepool rollout restart vmss-workers -n capi-prod --max-unavailable 2 \\
          --drain-timeout 10m
      kubectl machinepool rollout restart vmss-workers -n capi-prod --dry-run=client
      kubectl machinepool rollout restart vmss-workers -f export/ --dry-run=client
    """
    from kubectl_machinepool.app import restarting
    from kubectl_machinepool.app.carrying import DryRun
    from kubectl_machinepool.plans.restart import RestartRequest
    from kubectl_machinepool.render.restartplan import render_plan

    request = RestartRequest(max_unavailable, flags.drain_timeout(drain_timeout))
    carry = restarting.Carry(env.now, DryRun(dry_run), wait, parse_duration(timeout, "--timeout"))
    ui = confirming.callbacks(env, yes)

    def asked(namespace: str | None) -> restarting.Restart:
        return restarting.Restart(names, namespace, request, ignore_owner=ignore_owner)

    poolwrites.plan_and_carry(
        env,
        access,
        "rollout restart",
        source=source,
        dry_run=dry_run,
        plan=lambda ground, ns: restarting.plans_for(ground, asked(ns), ui=ui),
        render=render_plan,
        painted=env.color(color),
        nothing=f"no instance of {', '.join(names)} to replace",
        carry=lambda kube, plans: restarting.carry_out(
            kube, tuple(plans), asked(plans[0].pool.pool.namespace), carry, ui
        ),
        preview=lambda plans, ui: restarting.preview(tuple(plans), ui),
    )
