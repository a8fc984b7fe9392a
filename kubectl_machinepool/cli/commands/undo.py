"""`kubectl machinepool rollout undo`."""

from __future__ import annotations

from datetime import timedelta

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.base.durations import parse_duration
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import (
    CONTEXT_SETTINGS,
    confirming,
    flags,
    poolnames,
    poolwrites,
    rollingout,
)
from kubectl_machinepool.cli.environment import Environment
from kubectl_machinepool.kube.access import AccessOptions
from kubectl_machinepool.render.color import ColorMode


@click.command("undo", context_settings=CONTEXT_SETTINGS)
@click.argument("pool", metavar="NAME", callback=poolnames.name, shell_complete=suggest.pool_names)
@click.option(
    "--to-revision",
    type=click.IntRange(min=1),
    default=None,
    shell_complete=suggest.revisions,
    help="The revision to go back to (rollout history lists them); default: the one before "
    "the last",
)
@click.option(
    "--force",
    is_flag=True,
    help="Go ahead although the pool is paused or rolling, or outside the autoscaler's "
    "bounds (never over a change made from outside)",
)
@confirming.write_options
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Follow the rollout the writes start, as rollout status does",
)
@rollingout.follow_options
@flags.source
@flags.color
@flags.access
@flags.pass_env
def undo_command(
    env: Environment,
    *,
    pool: str,
    to_revision: int | None,
    force: bool,
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    wait: bool,
    timeout: str,
    stuck_after: str,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    """Put a MachinePool's fields back as they were at an earlier revision.

    \b
    The fields the revisions after N changed (rollout history lists them: the version and the
    infra pool's image fields an upgrade wrote, the size a scale set) are put back as one
    write through the same engine as upgrade's, planned and shown first, confirmed unless
    --yes, then followed as rollout status follows it. N defaults to the revision before the
    last, so the last is undone; undo is itself a revision, so an undo of an undo goes
    forward again. A restart's replaced instances cannot be brought back: its revision puts
    nothing back, and an undo of a restart alone is nothing to do.
    \b
    Refused (nothing written): a field changed from outside since its revision (the field and
    its value now are named; --force does not go past it); the version against the control
    plane's skew, or owned by a ClusterClass topology (its topology field named); a pool
    paused or rolling, or a size outside cluster-autoscaler's bounds (--force goes ahead); a
    revision not kept, or an annotation that is no history the tool wrote. A dump (-f) is
    refused: it has nothing to write to (rollout history -f reads one).
    \b
    Exit codes: 0 done (or nothing to do), 1 stuck, timed out or an error (nothing written,
    or all taken back), 2 usage, 3 refused (nothing was written), 5 left changed or unknown
    (each object named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool rollout undo vmss-workers -n capi-prod
      kubectl machinepool rollout undo vmss-workers -n capi-prod --to-revision 2 --dry-run=server
    """
    from kubectl_machinepool.app import planning, undoing, upgrading
    from kubectl_machinepool.app.carrying import DryRun, refuse
    from kubectl_machinepool.cli.commands.rollingout import Shown, fail
    from kubectl_machinepool.plans.undo import UndoRequest
    from kubectl_machinepool.render.undoplan import render_plan

    if source.filenames:
        refuse(
            [
                "rollout undo writes to a live cluster, and a dump (-f) has nothing to write "
                "to (rollout history -f reads its revisions)"
            ]
        )
    names = (pool,)
    request = UndoRequest(to_revision, force)
    follow_for = parse_duration(timeout, "--timeout")
    window = timedelta(seconds=parse_duration(stuck_after, "--stuck-after") or 0)
    ui = confirming.callbacks(env, yes)
    carry = upgrading.Carry(DryRun(dry_run), wait, follow_for, window)

    outcome = poolwrites.plan_and_carry(
        env,
        access,
        "rollout undo",
        source=source,
        dry_run=dry_run,
        plan=lambda ground, ns: undoing.plans_for(
            ground,
            undoing.Undo(names, ns, request, follow=wait, ignore_owner=ignore_owner),
            ui=ui,
        ),
        render=render_plan,
        painted=env.color(color),
        nothing=f"no field of {pool} to put back",
        carry=lambda kube, plans: planning.carry_out(kube, plans, carry.dry_run, ui),
        preview=planning.preview,
    )
    if outcome is None or carry.dry_run is not DryRun.NONE or not wait:
        return
    end, report = upgrading.follow_rollout(access, names, carry, ui, Shown(env, text=True))
    fail(report, end)
