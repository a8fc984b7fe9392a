"""`kubectl machinepool rollout pause` and `rollout resume`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from kubectl_machinepool.app.options import Source
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


def _options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = flags.pass_env(command)
    command = flags.access_named(command)
    command = flags.color(command)
    command = flags.source(command)
    command = confirming.write_options(command)
    return poolnames.argument(required=True)(command)


def _run(
    env: Environment,
    pausing: bool,
    *,
    names: tuple[str, ...],
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    from kubectl_machinepool.app import pausing as app
    from kubectl_machinepool.app import planning
    from kubectl_machinepool.app.carrying import DryRun
    from kubectl_machinepool.render.pauseplan import render_plan

    state = "paused" if pausing else "not paused by kubectl machinepool"
    ui = confirming.callbacks(env, yes)
    poolwrites.plan_and_carry(
        env,
        access,
        f"rollout {'pause' if pausing else 'resume'}",
        source=source,
        dry_run=dry_run,
        plan=lambda ground, ns: app.plans_for(
            ground, app.Pause(names, ns, pausing, ignore_owner=ignore_owner), warn=env.warn
        ),
        render=render_plan,
        painted=env.color(color),
        nothing=f"{', '.join(names)} already {state}",
        carry=lambda kube, plans: planning.carry_out(kube, plans, DryRun(dry_run), ui),
        preview=planning.preview,
    )


@click.command("pause", context_settings=CONTEXT_SETTINGS)
@_options
def pause_command(env: Environment, **options: Any) -> None:
    """Stop MachinePools' rollouts where they are: pause the pool and its infra pool.

    \b
    Sets cluster.x-k8s.io/paused on the MachinePool and its infra pool where it is missing (Cluster
    API and the provider then stop reconciling them) and records which it set in the
    MachinePool's kubectl-machinepool/paused annotation, so that resume lifts exactly those. The
    plan says what a pause does not stop for the pool's provider (work already running in the
    cloud). A topology-owned or deleting pool is refused. With -f DUMP --dry-run=client, the
    plan is made from a dump or export instead, and no connection is made.
    \b
    Exit codes: 0 done (or already paused), 1 an error (nothing written, or all taken back),
    2 usage, 3 refused (nothing written), 5 left changed (named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool rollout pause vmss-workers -n capi-prod
      kubectl machinepool rollout pause asg-workers eks-default -n capi-prod --dry-run=server
      kubectl machinepool rollout pause vmss-workers -f export/ --dry-run=client
    """
    _run(env, True, **options)


@click.command("resume", context_settings=CONTEXT_SETTINGS)
@_options
def resume_command(env: Environment, **options: Any) -> None:
    """Let MachinePools roll again: lift the pause `rollout pause` set, and only that.

    \b
    Removes cluster.x-k8s.io/paused from exactly the objects the MachinePool's
    kubectl-machinepool/paused annotation names, then that annotation; a pause someone else set
    (no record) is left as it is, and said. With -f DUMP --dry-run=client, the plan is made
    from a dump or export instead, and no connection is made.
    \b
    Exit codes: 0 done (or nothing to resume), 1 an error (nothing written, or all taken back),
    2 usage, 3 refused (nothing written), 5 left changed (named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool rollout resume vmss-workers -n capi-prod
    """
    _run(env, False, **options)
