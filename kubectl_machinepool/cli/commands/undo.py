"""`kubectl machinepool rollout undo`."""

from __future__ import annotations

import click

from kubectl_machinepool.app.options import Source
from kubectl_machinepool.cli import suggest
from kubectl_machinepool.cli.commands import (
    CONTEXT_SETTINGS,
    confirming,
    flags,
    poolnames,
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
@rollingout.write_follow_options
@flags.source
@flags.color
@flags.access_named
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
    from kubectl_machinepool.app import undoing
    from kubectl_machinepool.app.carrying import refuse
    from kubectl_machinepool.plans.undo import UndoRequest
    from kubectl_machinepool.render.undoplan import render_plan

    if source.filenames:
        refuse(
            [
                "rollout undo writes to a live cluster, and a dump (-f) has nothing to write "
                "to (rollout history -f reads its revisions)"
            ]
        )
    request = UndoRequest(to_revision, force)
    rollingout.write_and_follow(
        env,
        access,
        "rollout undo",
        rollingout.WriteFlags(source, dry_run, yes, wait, timeout, stuck_after, color),
        names=(pool,),
        plan=lambda ground, ns, ui: undoing.plans_for(
            ground,
            undoing.Undo((pool,), ns, request, follow=wait, ignore_owner=ignore_owner),
            ui=ui,
        ),
        render=render_plan,
        nothing=f"no field of {pool} to put back",
    )
