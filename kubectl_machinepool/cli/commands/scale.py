"""`kubectl machinepool scale`."""

from __future__ import annotations

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

# spec.replicas is an int32: the API server cannot even decode a Scale with more ("no kind is
# registered for the type v1.Scale"), so a larger size is a usage error here.
SIZES = click.IntRange(min=0, max=2**31 - 1)


@click.command("scale", context_settings=CONTEXT_SETTINGS)
@poolnames.argument(required=True)
@click.option(
    "--replicas",
    type=SIZES,
    required=True,
    help="The new size (spec.replicas)",
)
@click.option(
    "--current-replicas",
    type=SIZES,
    default=None,
    help="Precondition: scale only if spec.replicas is this now",
)
@click.option(
    "--force",
    is_flag=True,
    help="Go outside the cluster-autoscaler min/max annotations (it may change it back)",
)
@confirming.write_options
@flags.source
@flags.color
@flags.access_named
@flags.pass_env
def scale_command(
    env: Environment,
    *,
    names: tuple[str, ...],
    replicas: int,
    current_replicas: int | None,
    force: bool,
    dry_run: str,
    yes: bool,
    ignore_owner: bool,
    source: Source,
    color: ColorMode,
    access: AccessOptions,
) -> None:
    """Set the size of MachinePools through their /scale subresource, or refuse and say why.

    \b
    The plan comes first: the size from what to what; who else owns it and would change it
    back (refused: an external autoscaler through cluster.x-k8s.io/replicas-managed-by, the
    Cluster's topology when it sets this pool's replicas; outside cluster-autoscaler's min/max
    annotations only with --force); a pool or Cluster being deleted (refused) or paused; on a
    scale-down, who picks the instances that go (the provider, or the cloud where it cannot be
    told which) and how to pick one yourself; the zones before and after. Then, after
    confirmation (or --yes), one write to /scale with the resourceVersion the plan was made
    from. With -f DUMP --dry-run=client, the plan is made from a dump or export instead, and
    no connection is made.
    \b
    Exit codes: 0 done (or nothing to do), 1 an error (nothing written), 2 usage, 3 refused
    (nothing was written), 5 unknown whether it took effect (named), 129/130/143 interrupted.
    \b
    Examples:
      kubectl machinepool scale vmss-workers -n capi-prod --replicas 5
      kubectl machinepool scale asg-workers -n capi-prod --replicas 2 --current-replicas 3
      kubectl machinepool scale vmss-workers -n capi-prod --replicas 0 --dry-run=server
      kubectl machinepool scale vmss-workers --replicas 5 -f export/ --dry-run=client
    """
    from kubectl_machinepool.app import planning, scaling
    from kubectl_machinepool.app.carrying import DryRun
    from kubectl_machinepool.plans.scale import ScaleRequest
    from kubectl_machinepool.render.scaleplan import render_plan

    request = ScaleRequest(replicas, current_replicas, force)
    ui = confirming.callbacks(env, yes)
    poolwrites.plan_and_carry(
        env,
        access,
        "scale",
        source=source,
        dry_run=dry_run,
        plan=lambda ground, ns: scaling.plans_for(
            ground, scaling.Scale(names, ns, request, ignore_owner=ignore_owner), warn=env.warn
        ),
        render=render_plan,
        painted=env.color(color),
        nothing=f"{', '.join(names)} already at {replicas} replicas",
        carry=lambda kube, plans: planning.carry_out(kube, plans, DryRun(dry_run), ui),
        preview=planning.preview,
    )
